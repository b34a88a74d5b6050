"""Offset planning for the ``kafka_range`` data source: one :class:`OffsetRange` per partition.

Runs on the Spark driver (in the data source's planner). Owns no long-lived client: every call
opens a consumer through :mod:`streams_runtime.kafka.clients` and closes it before returning.

Why the end offsets are probed (docs/decisions/0001-embedded-broker.md): Tansu answers ListOffsets "latest"
with the base offset of the last record batch + 1, which is below the true end whenever that batch holds
more than one record. The true end is the high watermark of a fetch response. Steps of
:func:`true_end_offsets`:

  1. ListOffsets for every partition (``low`` and the reported ``high``; on Kafka both are right);
  2. assign every partition at ``max(high - 1, low)``: that offset is inside the last batch (or is
     the end of an empty partition), so one fetch answers with the real high watermark;
  3. poll with ``enable.partition.eof`` until every partition has reported end-of-partition, then
     take the high watermark cached from the fetch responses.

A fetch *beyond* the end never answers on Tansu (it parks instead of failing with
OFFSET_OUT_OF_RANGE), so :func:`plan_ranges` clamps every requested offset into
``[low, true end]``: a range beyond the end becomes an empty range that is never fetched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streams_runtime.kafka.clients import PARTITION_EOF, KafkaException, TopicPartition, create_consumer

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetRange",
    "clamp_offset",
    "parse_offsets",
    "plan_ranges",
    "topic_partitions",
    "true_end_offsets",
]

#: Offset sentinels in the starting/ending options, as Spark's own Kafka source spells them.
EARLIEST = -2
LATEST = -1

PLANNER_GROUP = "spark-kafka-range-planner"


@dataclass(frozen=True)
class OffsetRange:
    """Records ``[start, end)`` of one topic partition; ``start == end`` is an empty range."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        """Number of offsets in the range (records, on a topic without transaction markers)."""
        return self.end - self.start


def parse_offsets(spec: str | Mapping[Any, Any] | None, topic: str, option: str) -> dict[int, int]:
    """Parse a starting/ending offsets option into ``{partition: offset}``.

    Accepted forms: ``{"0": 10, "1": 20}``; Spark's Kafka-source form ``{"<topic>": {"0": 10}}``;
    the words ``"earliest"`` / ``"latest"`` (every partition); ``None`` or ``""`` (no override).
    Offsets are non-negative integers or the sentinels ``-2`` (earliest) and ``-1`` (latest).

    :raises ValueError: naming the option, for malformed JSON, another topic or a bad offset.
    """
    if spec is None or spec == "":
        return {}
    if isinstance(spec, str):
        word = spec.strip().lower()
        if word in ("earliest", "latest"):
            return {-1: EARLIEST if word == "earliest" else LATEST}
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{option}: not JSON ({exc}): {spec!r}") from None
    if not isinstance(spec, Mapping):
        raise ValueError(f"{option}: expected a JSON object partition -> offset, got {spec!r}")
    if spec and all(isinstance(v, Mapping) for v in spec.values()):
        if set(spec) != {topic}:
            raise ValueError(f"{option}: names topics {sorted(spec)}, but the source reads {topic!r}")
        spec = spec[topic]
    parsed: dict[int, int] = {}
    for key, value in spec.items():
        try:
            partition, offset = int(key), int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{option}: partition and offset must be integers: {key!r}: {value!r}") from None
        if partition < 0 or offset < EARLIEST:
            raise ValueError(f"{option}: partition {partition} offset {offset} out of range")
        parsed[partition] = offset
    return parsed


def topic_partitions(consumer: Any, topic: str, timeout: float) -> list[int]:
    """Partition ids of ``topic``, sorted.

    :raises ValueError: when the topic does not exist (the profile never auto-creates it).
    """
    metadata = consumer.list_topics(topic, timeout=timeout)
    described = metadata.topics.get(topic)
    if described is None or described.error is not None or not described.partitions:
        reason = described.error if described is not None else "not in metadata"
        raise ValueError(f"topic {topic!r} does not exist on the cluster ({reason})")
    return sorted(described.partitions)


def true_end_offsets(
    consumer: Any, topic: str, partitions: list[int], timeout: float = 30.0
) -> dict[int, tuple[int, int]]:
    """``{partition: (low, true_end)}`` for ``partitions``, by the probe in the module docstring.

    :param consumer: a consumer with ``enable.partition.eof=true``; its assignment is replaced.
    :raises TimeoutError: when some partition did not reach end-of-partition within ``timeout``.
    """
    # Step 1
    reported = {
        p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout, cached=False)
        for p in partitions
    }
    # Step 2
    consumer.assign([TopicPartition(topic, p, max(high - 1, low)) for p, (low, high) in reported.items()])
    # Step 3
    pending = set(partitions)
    deadline = time.monotonic() + timeout
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{topic}: partitions {sorted(pending)} gave no end-of-partition in {timeout}s"
            )
        for msg in consumer.consume(num_messages=1000, timeout=0.05):
            error = msg.error()
            if error is None:
                continue
            if error.code() != PARTITION_EOF:
                raise KafkaException(error)
            pending.discard(msg.partition())
    ends: dict[int, tuple[int, int]] = {}
    for p, (low, high) in reported.items():
        _, probed = consumer.get_watermark_offsets(TopicPartition(topic, p), cached=True)
        ends[p] = (low, max(high, probed))
    consumer.unassign()
    return ends


def clamp_offset(requested: int | None, default: int, low: int, end: int) -> int:
    """The offset to use for ``requested`` (``None``, a sentinel or an offset), inside ``[low, end]``."""
    if requested is None:
        offset = default
    elif requested == EARLIEST:
        offset = low
    elif requested == LATEST:
        offset = end
    else:
        offset = requested
    return min(max(offset, low), end)


def plan_ranges(
    bootstrap_servers: str,
    topic: str,
    starting: Mapping[int, int] | None = None,
    ending: Mapping[int, int] | None = None,
    *,
    timeout: float = 30.0,
    consumer_overrides: Mapping[str, Any] | None = None,
) -> list[OffsetRange]:
    """One range per partition of ``topic``: from ``starting`` (default earliest) to ``ending``
    (default the true end), both clamped into ``[low, true end]``, so ``start <= end`` always.

    :param starting: ``{partition: offset}`` from :func:`parse_offsets`; key ``-1`` = every partition.
    :param ending: likewise, exclusive.
    :raises ValueError: when the topic is missing or an option names a partition it does not have.
    """
    starting, ending = dict(starting or {}), dict(ending or {})
    overrides = {"enable.partition.eof": True, **(consumer_overrides or {})}
    consumer = create_consumer(bootstrap_servers, PLANNER_GROUP, overrides)
    try:
        partitions = topic_partitions(consumer, topic, timeout)
        for option, given in (("starting_offsets", starting), ("ending_offsets", ending)):
            unknown = sorted(set(given) - set(partitions) - {-1})
            if unknown:
                raise ValueError(
                    f"{option}: topic {topic!r} has no partitions {unknown} (it has {partitions})"
                )
        ends = true_end_offsets(consumer, topic, partitions, timeout)
    finally:
        consumer.close()
    ranges = []
    for p in partitions:
        low, end = ends[p]
        start = clamp_offset(starting.get(p, starting.get(-1)), low, low, end)
        stop = clamp_offset(ending.get(p, ending.get(-1)), end, low, end)
        ranges.append(OffsetRange(topic, p, start, max(start, stop)))
    return ranges
