"""The ``kafka_range`` PySpark Python Data Source: a batch read of a Kafka topic's offset ranges.

It reads where Spark's own ``kafka`` format cannot: on the embedded Tansu broker, whose
ListOffsets answers are wrong (docs/decisions/0011-spark-kafka-connector.md; on Apache Kafka the
backfills read with the connector, :mod:`spark_jobs.kafka_source.connector`). For batch reads::

    register(spark)
    df = (spark.read.format("kafka_range")
          .option("bootstrap_servers", "127.0.0.1:9092")
          .option("topic", "demo-payments")
          .option("starting_offsets", '{"0": 100}')     # optional; default earliest
          .option("ending_offsets", '{"0": 200}')       # optional, exclusive; default the true end
          .load())

Options:

``bootstrap_servers``, ``topic`` (required); ``starting_offsets`` / ``ending_offsets`` (JSON
``{"partition": offset}``, Spark's ``{"topic": {...}}`` form, or ``earliest`` / ``latest``; ``-2`` =
earliest, ``-1`` = latest); ``starting_timestamp`` / ``ending_timestamp`` (epoch ms, ``[from, to)``:
records outside are dropped on the executor -- Tansu has no ``offsets_for_times``
(docs/decisions/0001-embedded-broker.md), so the
offsets are still read, but the rows never reach Spark); ``chunk_size`` (records per Arrow batch);
``timeout`` (seconds, planning and idle reads); ``kafka.<property>`` (librdkafka overrides).

Planning (on the driver, :meth:`KafkaRangeReader.partitions`) lists one
:class:`~spark_jobs.kafka_source.offsets.OffsetRange` per topic partition, with true end offsets;
each Spark task then reads its range with :func:`~spark_jobs.kafka_source.reader.read_range` and
yields Arrow record batches (supported by ``DataSourceReader.read`` since Spark 4.0).

Spark may plan a DataFrame again for each action, and a live topic grows in between: a job that
needs one fixed snapshot over several actions pins the ranges (plan once with
:func:`~spark_jobs.kafka_source.offsets.plan_ranges`, pass them as ``starting_offsets`` /
``ending_offsets``, see :func:`pinned_offsets`) or caches the DataFrame.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from spark_jobs.kafka_source.offsets import OffsetRange, parse_offsets, plan_ranges
from spark_jobs.kafka_source.reader import SPARK_SCHEMA, read_range

__all__ = [
    "FORMAT",
    "KafkaRangeDataSource",
    "KafkaRangePartition",
    "KafkaRangeReader",
    "pinned_offsets",
    "register",
]

FORMAT = "kafka_range"
_KAFKA_PREFIX = "kafka."


class KafkaRangePartition(InputPartition):
    """One Spark input partition: the offset range of one Kafka partition (picklable)."""

    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)
        self.offset_range = offset_range

    def __repr__(self) -> str:
        r = self.offset_range
        return f"KafkaRangePartition({r.topic}[{r.partition}] {r.start}..{r.end})"


def _optional_int(options: Mapping[str, str], name: str) -> int | None:
    raw = options.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"option {name}: expected an integer, got {raw!r}") from None


class KafkaRangeReader(DataSourceReader):
    """Plans offset ranges on the driver and reads each on an executor.

    Created by :meth:`KafkaRangeDataSource.reader` from the options; holds only plain values, so
    Spark can pickle it to its Python workers. Validates the options eagerly: a bad option fails
    at ``load()``-time planning with a message naming it.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        missing = [name for name in ("bootstrap_servers", "topic") if not options.get(name)]
        if missing:
            raise ValueError(f"{FORMAT}: missing required options {missing}")
        self.bootstrap_servers = str(options["bootstrap_servers"])
        self.topic = str(options["topic"])
        self.starting = parse_offsets(options.get("starting_offsets"), self.topic, "starting_offsets")
        self.ending = parse_offsets(options.get("ending_offsets"), self.topic, "ending_offsets")
        self.timestamp_from_ms = _optional_int(options, "starting_timestamp")
        self.timestamp_to_ms = _optional_int(options, "ending_timestamp")
        self.chunk_size = _optional_int(options, "chunk_size") or 10_000
        self.timeout = float(options.get("timeout") or 60.0)
        self.consumer_overrides = {
            key[len(_KAFKA_PREFIX) :]: value
            for key, value in options.items()
            if key.startswith(_KAFKA_PREFIX)
        }

    def partitions(self) -> Sequence[InputPartition]:
        """One input partition per Kafka partition, empty ranges included (they read nothing)."""
        ranges = plan_ranges(
            self.bootstrap_servers,
            self.topic,
            self.starting,
            self.ending,
            timeout=self.timeout,
            consumer_overrides=self.consumer_overrides,
        )
        return [KafkaRangePartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """Yield the Arrow record batches of one range (runs on an executor)."""
        if not isinstance(partition, KafkaRangePartition):
            raise TypeError(f"{FORMAT}: expected a KafkaRangePartition from partitions(), got {partition!r}")
        yield from read_range(
            self.bootstrap_servers,
            partition.offset_range,
            chunk_size=self.chunk_size,
            timestamp_from_ms=self.timestamp_from_ms,
            timestamp_to_ms=self.timestamp_to_ms,
            consumer_overrides=self.consumer_overrides,
            idle_timeout=self.timeout,
        )


class KafkaRangeDataSource(DataSource):
    """``spark.read.format("kafka_range")``: see the module docstring for the options."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return SPARK_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaRangeReader(self.options)


def register(spark: SparkSession) -> None:
    """Register the ``kafka_range`` format with ``spark`` (idempotent)."""
    spark.dataSource.register(KafkaRangeDataSource)


def pinned_offsets(ranges: Sequence[OffsetRange]) -> tuple[str, str]:
    """``(starting_offsets, ending_offsets)`` JSON options that read exactly ``ranges``."""
    return (
        json.dumps({str(r.partition): r.start for r in ranges}),
        json.dumps({str(r.partition): r.end for r in ranges}),
    )
