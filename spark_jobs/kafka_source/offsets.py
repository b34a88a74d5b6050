"""Offset planning for the ``kafka_range`` data source: one :class:`OffsetRange` per partition.

Runs on the Spark driver (in the data source's planner). Owns no long-lived client: every call
opens a consumer through :mod:`streams_runtime.kafka.clients` and closes it before returning.

The end of each partition is its true end, read through :mod:`streams_runtime.kafka.offsets`
(ListOffsets "latest" is wrong on the embedded broker: docs/decisions/0001-embedded-broker.md).

A fetch *beyond* the end never answers on Tansu (it parks instead of failing with
OFFSET_OUT_OF_RANGE), so :func:`plan_ranges` clamps every requested offset into
``[low, true end]``: a range beyond the end becomes an empty range that is never fetched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streams_runtime.kafka.clients import create_consumer
from streams_runtime.kafka.offsets import EOF_OVERRIDES, true_watermarks

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetRange",
    "clamp_offset",
    "parse_offsets",
    "plan_ranges",
    "topic_partitions",
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
    :raises PartitionReadError: (:mod:`streams_runtime.kafka.offsets`) when a partition cannot be
        read to its end within ``timeout``.
    """
    starting, ending = dict(starting or {}), dict(ending or {})
    overrides = {**EOF_OVERRIDES, **(consumer_overrides or {})}
    consumer = create_consumer(bootstrap_servers, PLANNER_GROUP, overrides)
    try:
        partitions = topic_partitions(consumer, topic, timeout)
        for option, given in (("starting_offsets", starting), ("ending_offsets", ending)):
            unknown = sorted(set(given) - set(partitions) - {-1})
            if unknown:
                raise ValueError(
                    f"{option}: topic {topic!r} has no partitions {unknown} (it has {partitions})"
                )
        ends = true_watermarks(consumer, topic, partitions, timeout)
    finally:
        consumer.close()
    ranges = []
    for p in partitions:
        low, end = ends[p]
        start = clamp_offset(starting.get(p, starting.get(-1)), low, low, end)
        stop = clamp_offset(ending.get(p, ending.get(-1)), end, low, end)
        ranges.append(OffsetRange(topic, p, start, max(start, stop)))
    return ranges
