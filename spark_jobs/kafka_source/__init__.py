"""The ``kafka_range`` data source: batch reads of Kafka offset ranges into Spark
(docs/decisions/0006-spark-python-data-source.md).

Public surface: :func:`register` (adds the format to a session), :class:`KafkaRangeDataSource`,
:class:`OffsetRange`, :func:`plan_ranges` and :func:`pinned_offsets` (plan once, read the same
snapshot in every action). Details and options: :mod:`spark_jobs.kafka_source.datasource`.
"""

from spark_jobs.kafka_source.datasource import FORMAT, KafkaRangeDataSource, pinned_offsets, register
from spark_jobs.kafka_source.offsets import OffsetRange, parse_offsets, plan_ranges
from spark_jobs.kafka_source.reader import SPARK_SCHEMA

__all__ = [
    "FORMAT",
    "SPARK_SCHEMA",
    "KafkaRangeDataSource",
    "OffsetRange",
    "parse_offsets",
    "pinned_offsets",
    "plan_ranges",
    "register",
]
