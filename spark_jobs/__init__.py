"""Spark jobs of the operations layer: one folder per job, and the Kafka data source they share.

Layout:

* :mod:`spark_jobs.kafka_source` -- a PySpark Python Data Source (``kafka_range``) that reads a
  topic's offset ranges with confluent-kafka through :mod:`streams_runtime.kafka.clients` (on
  Tansu), and the read through Spark's own Kafka connector (on Apache Kafka, ``connector``);
* :mod:`spark_jobs.session` -- the one home of the SparkSession (local or a standalone cluster);
* :mod:`spark_jobs.payments_backfill` -- the per-user windowed spend backfill: ``transform`` (pure
  DataFrame functions), ``expectations`` (the Great Expectations suite), ``main`` (the I/O and the
  entry point :func:`~spark_jobs.payments_backfill.main.run_backfill`).

``pyspark`` and ``great_expectations`` are imported only under this package (an import fence that
``tests/spark_jobs/test_import_fence.py`` checks); the Airflow DAGs import it lazily, inside tasks.
"""
