"""Reads through Spark's own Kafka connector (``format("kafka")``, spark-sql-kafka-0-10), on
brokers that answer ListOffsets by timestamp (docs/decisions/0011-spark-kafka-connector.md).

:func:`read_by_timestamp` reads the records of ``[start_ms, end_ms)`` from the ranges a by-time
plan pinned (:func:`~spark_jobs.kafka_source.by_time.plan_ranges_for_times`), with the same
columns and the same exact filter as the ``kafka_range`` source, so the jobs do not care which
source read:

- the start is ``startingOffsetsByTimestamp`` = ``start_ms`` for every partition read: Spark asks
  the broker for the first offset whose timestamp is at or after it, the offset the plan pinned
  (nothing before it belongs to the interval);
- the end is the pinned end offset (``endingOffsets``), never ``endingOffsetsByTimestamp`` =
  ``end_ms``: that stops at the FIRST record stamped at or after ``end_ms``, and a record of the
  interval produced after it (a late, out-of-order CreateTime) would be missed. The plan's end is
  the true end, or ``end_ms + max_lateness_ms`` by time when the caller bounds lateness;
- only the partitions whose pinned range holds records are assigned (``assign``): on a live topic
  a partition with nothing at or after ``start_ms`` when planned can get a record a moment later,
  and Spark would then start it beyond its pinned end;
- records outside ``[start_ms, end_ms)`` are dropped by a filter on ``timestamp`` (what the
  ``kafka_range`` source does on its executors).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.kafka_source.offsets import OffsetRange
from spark_jobs.kafka_source.reader import SPARK_SCHEMA

__all__ = ["KAFKA_FORMAT", "connector_loaded", "read_by_timestamp"]

KAFKA_FORMAT = "kafka"
_CONNECTOR_JAR = "spark-sql-kafka-0-10_"


def connector_loaded(spark: SparkSession) -> bool:
    """Whether the session was handed the connector's jar (``spark.jars``, set by
    :func:`spark_jobs.session.local_session` from the setup cache)."""
    return _CONNECTOR_JAR in (spark.sparkContext.getConf().get("spark.jars", "") or "")


def read_by_timestamp(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    ranges: Sequence[OffsetRange],
    start_ms: int,
    end_ms: int,
) -> DataFrame:
    """The records of the pinned ``ranges`` stamped in ``[start_ms, end_ms)`` (columns
    :data:`~spark_jobs.kafka_source.reader.SPARK_SCHEMA`); the module docstring says how."""
    read = [r for r in ranges if r.size > 0]
    if not read:
        return spark.createDataFrame([], SPARK_SCHEMA)
    raw = (
        spark.read.format(KAFKA_FORMAT)
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("assign", json.dumps({topic: [r.partition for r in read]}))
        .option("startingOffsetsByTimestamp", json.dumps({topic: {str(r.partition): start_ms for r in read}}))
        .option("endingOffsets", json.dumps({topic: {str(r.partition): r.end for r in read}}))
        .load()
    )
    millis = F.unix_millis(F.col("timestamp"))
    return raw.select("key", "value", "topic", "partition", "offset", "timestamp").where(
        (millis >= F.lit(start_ms)) & (millis < F.lit(end_ms))
    )
