"""Executor side of the ``kafka_range`` data source: read one :class:`OffsetRange` as Arrow batches.

Runs inside a Spark Python worker, once per input partition. Owns one consumer for the duration of
:func:`read_range` (made through :mod:`streams_runtime.kafka.clients`, closed on every exit path);
it never joins a group and never commits.

Steps of :func:`read_range`:

  1. an empty range (``start == end``) returns at once -- nothing is fetched, so a range the
     planner clamped at the end never parks a fetch beyond it (docs/decisions/0001-embedded-broker.md);
  2. assign the partition at ``start`` with ``enable.partition.eof``;
  3. consume in chunks, turning each chunk into one Arrow ``RecordBatch`` of the rows with
     ``offset < end`` (and inside the optional timestamp range), until the offset ``end - 1`` was
     seen or the partition reported its end;
  4. an end-of-partition below ``end`` means the broker lost records since planning (a restarted
     Tansu keeps nothing): fail loudly rather than return a short range.

Rows are ``(key, value, topic, partition, offset, timestamp)``, the columns of Spark's own Kafka
source: key and value as bytes, the timestamp in UTC microseconds (Kafka's is milliseconds).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from spark_jobs.kafka_source.offsets import OffsetRange
from streams_runtime.kafka.clients import KafkaException, TopicPartition, create_consumer
from streams_runtime.kafka.offsets import is_partition_eof

__all__ = ["ARROW_SCHEMA", "READER_GROUP", "SPARK_SCHEMA", "read_range"]

#: The rows' schema as Spark DDL (what the data source declares) and as Arrow (what it yields).
SPARK_SCHEMA = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
ARROW_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
    ]
)

#: librdkafka wants a group id; this one is never joined and nothing is committed under it.
READER_GROUP = "spark-kafka-range-reader"

#: Consumer settings for bulk reads; the shared profile's backoff and fetch wait stay
#: (docs/decisions/0001-embedded-broker.md).
BULK_READ: dict[str, Any] = {
    "enable.partition.eof": True,
    "enable.auto.offset.store": False,
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
    "fetch.max.bytes": 64 * 1024 * 1024,
    "queued.min.messages": 200_000,
}


def _to_batch(messages: list[Any], topic: str, partition: int) -> pa.RecordBatch:
    timestamps = []
    for m in messages:
        kind, ts = m.timestamp()
        timestamps.append(ts * 1000 if kind else None)
    n = len(messages)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([m.key() for m in messages], pa.binary()),
            pa.array([m.value() for m in messages], pa.binary()),
            pa.array([topic] * n, pa.string()),
            pa.array([partition] * n, pa.int32()),
            pa.array([m.offset() for m in messages], pa.int64()),
            pa.array(timestamps, pa.int64()).cast(ARROW_SCHEMA.field("timestamp").type),
        ],
        schema=ARROW_SCHEMA,
    )


def _in_time_range(batch: pa.RecordBatch, from_ms: int | None, to_ms: int | None) -> pa.RecordBatch:
    if from_ms is None and to_ms is None:
        return batch
    micros = batch.column("timestamp").cast(pa.int64())
    keep = pc.is_valid(micros)
    if from_ms is not None:
        keep = pc.and_(keep, pc.greater_equal(micros, from_ms * 1000))
    if to_ms is not None:
        keep = pc.and_(keep, pc.less(micros, to_ms * 1000))
    return batch.filter(keep)


def read_range(
    bootstrap_servers: str,
    offset_range: OffsetRange,
    *,
    chunk_size: int = 10_000,
    timestamp_from_ms: int | None = None,
    timestamp_to_ms: int | None = None,
    consumer_overrides: Mapping[str, Any] | None = None,
    idle_timeout: float = 60.0,
) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``offset_range`` as Arrow batches (steps in the module docstring).

    :param chunk_size: records per ``consume`` call, and so the largest batch yielded.
    :param timestamp_from_ms: keep records with a timestamp ``>=`` this (epoch ms); ``None``: no bound.
    :param timestamp_to_ms: keep records with a timestamp ``<`` this (epoch ms); ``None``: no bound.
    :param consumer_overrides: librdkafka properties over the bulk-read settings.
    :param idle_timeout: seconds without any record or event before giving up.
    :raises TimeoutError: when the broker sent nothing for ``idle_timeout`` seconds.
    :raises RuntimeError: when the partition ends below the planned ``end`` (records were lost).
    """
    r = offset_range
    # Step 1
    if r.start >= r.end:
        return
    consumer = create_consumer(bootstrap_servers, READER_GROUP, {**BULK_READ, **(consumer_overrides or {})})
    try:
        # Step 2
        consumer.assign([TopicPartition(r.topic, r.partition, r.start)])
        last = r.end - 1
        position = r.start - 1
        idle_since = time.monotonic()
        at_end = False
        # Step 3
        while position < last and not at_end:
            # never ask for more than the range still holds: consume() waits its whole timeout for
            # a chunk it cannot fill, which would cost every range's last chunk half a second
            messages = consumer.consume(num_messages=min(chunk_size, last - position), timeout=0.5)
            if not messages:
                if time.monotonic() - idle_since > idle_timeout:
                    raise TimeoutError(
                        f"{r.topic}[{r.partition}]: nothing fetched for {idle_timeout}s at offset "
                        f"{position + 1} (range {r.start}..{r.end})"
                    )
                continue
            idle_since = time.monotonic()
            records = []
            for m in messages:
                error = m.error()
                if error is None:
                    records.append(m)
                    continue
                if not is_partition_eof(error):
                    raise KafkaException(error)
                # Step 4
                if m.offset() < r.end:
                    raise RuntimeError(
                        f"{r.topic}[{r.partition}] ended at offset {m.offset()}, below the planned end "
                        f"{r.end}: records were lost since planning (broker restarted?)"
                    )
                at_end = True  # the tail of the range held no records (transaction markers on Kafka)
            if records:
                position = records[-1].offset()
                if position > last:
                    records = [m for m in records if m.offset() <= last]
                batch = _in_time_range(
                    _to_batch(records, r.topic, r.partition), timestamp_from_ms, timestamp_to_ms
                )
                if batch.num_rows:
                    yield batch
    finally:
        consumer.close()
