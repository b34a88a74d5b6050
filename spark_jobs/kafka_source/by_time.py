"""Offset ranges for a time range: what a backfill of ``[start_ms, end_ms)`` has to read.

Two ways, chosen per cluster:

- **offsets by timestamp** (Apache Kafka): ``offsets_for_times`` gives, per partition, the first
  offset whose timestamp is at or after ``start_ms``: no record before it belongs to the range, so
  the read starts there. It ends at the partition's true end: a record of the range can come
  after records of later times (producer-set CreateTime out of order, as late records in a stream
  are), and a read that stopped at the first offset at or after ``end_ms`` would miss it. With
  ``max_lateness_ms`` the read stops at the first offset at or after ``end_ms + max_lateness_ms``
  instead (records later than that are left out, as a stream with that grace drops them). Records
  are filtered by timestamp on the executors either way (an answer of -1, "no such record",
  means the true end).
- **bounded scan** (Tansu, which has no ``offsets_for_times``): the whole partition up to its true
  end (:func:`~spark_jobs.kafka_source.offsets.plan_ranges`, never the reported watermark), filtered
  by timestamp on the executors. A backfill covering many intervals reads it once per task run
  (:mod:`spark_jobs.payments_backfill.batch`), not once per interval.

The way is decided by what the cluster says it is (:mod:`streams_runtime.kafka.broker_identity`)
and falls back to the scan if the broker refuses the request.
"""

from __future__ import annotations

from spark_jobs.kafka_source.offsets import PLANNER_GROUP, OffsetRange, clamp_offset, plan_ranges
from streams_runtime.kafka.broker_identity import identify_broker
from streams_runtime.kafka.clients import KafkaException, TopicPartition, create_admin, create_consumer

__all__ = ["BY_TIMESTAMP", "SCAN", "plan_ranges_for_times", "supports_offsets_for_times"]

BY_TIMESTAMP = "offsets_for_times"
SCAN = "bounded_scan"


def supports_offsets_for_times(bootstrap_servers: str, timeout: float = 10.0) -> bool:
    """Whether the cluster answers ``offsets_for_times`` (not Tansu)."""
    return not identify_broker(create_admin(bootstrap_servers), timeout).is_tansu


def plan_ranges_for_times(
    bootstrap_servers: str,
    topic: str,
    start_ms: int,
    end_ms: int,
    *,
    max_lateness_ms: int | None = None,
    timeout: float = 30.0,
) -> tuple[list[OffsetRange], str]:
    """The ranges of ``topic`` that hold ``[start_ms, end_ms)``, and which way they were found
    (``max_lateness_ms``: see the module docstring; ``None`` reads to each partition's end)."""
    ranges = plan_ranges(bootstrap_servers, topic, timeout=timeout)
    if not supports_offsets_for_times(bootstrap_servers, timeout):
        return ranges, SCAN
    consumer = create_consumer(bootstrap_servers, PLANNER_GROUP, {"enable.auto.commit": False})
    try:
        firsts = consumer.offsets_for_times(
            [TopicPartition(topic, r.partition, start_ms) for r in ranges], timeout=timeout
        )
        afters = None
        if max_lateness_ms is not None:
            bounds = [TopicPartition(topic, r.partition, end_ms + max_lateness_ms) for r in ranges]
            afters = consumer.offsets_for_times(bounds, timeout=timeout)
    except KafkaException:
        return ranges, SCAN
    finally:
        consumer.close()
    planned = []
    for i, (r, first) in enumerate(zip(ranges, firsts, strict=True)):
        after = afters[i] if afters is not None else None  # None: on to the true end
        if first.error is not None or (after is not None and after.error is not None):
            return ranges, SCAN
        low = r.start
        start = clamp_offset(first.offset if first.offset >= 0 else r.end, r.end, low, r.end)
        stop_at = after.offset if after is not None and after.offset >= 0 else r.end
        stop = clamp_offset(stop_at, r.end, low, r.end)
        planned.append(OffsetRange(topic, r.partition, start, max(start, stop)))
    return planned, BY_TIMESTAMP
