"""Airflow operations for streams_runtime applications, laid out like an Airflow provider.

- :mod:`streams_ops.hooks`: Connections turned into clients (Kafka admin/consumer/producer through
  ``streams_runtime.kafka.clients``; the stream workers' HTTP endpoint).
- :mod:`streams_ops.operators`: topic provisioning, changelog compaction check, Spark backfill,
  state-store rebuild.
- :mod:`streams_ops.sensors` / :mod:`streams_ops.triggers`: consumer lag, deferrable.
- :mod:`streams_ops.provisioning`, :mod:`streams_ops.compaction`, :mod:`streams_ops.offsets`,
  :mod:`streams_ops.state_rebuild`: the logic itself, plain Python with no Airflow import,
  unit-testable on its own.

Importing a module of this package never imports ``confluent_kafka``, ``pyspark`` or
``great_expectations``: DAG files import operators at parse time, and parsing must stay cheap.
"""
