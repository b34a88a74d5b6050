"""Consumer lag measured from the true end of each partition.

Reading a partition to its true end lives in :mod:`streams_runtime.kafka.offsets` (see
docs/decisions/0001-embedded-broker.md for why an end is read, never listed); this module
re-exports what the plugins use of it and adds the lag of a consumer group on top.

No Airflow here, and no ``confluent_kafka`` import either: the consumer comes from
``streams_runtime.kafka.clients`` and is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.kafka.offsets import (
    EOF_OVERRIDES,
    PartitionReadError,
    scan_to_eof,
    true_end_offsets,
)

__all__ = [
    "EOF_OVERRIDES",
    "ConsumerLag",
    "PartitionReadError",
    "measure_consumer_lag",
    "scan_to_eof",
    "true_end_offsets",
]


@dataclass(frozen=True)
class ConsumerLag:
    """Lag of one consumer group on one topic: per partition and in total."""

    group_id: str
    topic: str
    end_offsets: dict[int, int]
    committed: dict[int, int | None]  # None: the group has no committed offset there
    per_partition: dict[int, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.per_partition.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly (partition keys become strings), for XCom and trigger events."""
        return {
            "group_id": self.group_id,
            "topic": self.topic,
            "total": self.total,
            "per_partition": {str(p): lag for p, lag in sorted(self.per_partition.items())},
            "end_offsets": {str(p): end for p, end in sorted(self.end_offsets.items())},
            "committed": {str(p): c for p, c in sorted(self.committed.items())},
        }


def measure_consumer_lag(
    consumer: Any, group_id: str, topic: str, partitions: int, timeout: float = 30.0
) -> ConsumerLag:
    """Lag of ``group_id`` on ``topic``: true end minus committed offset, per partition.

    A partition the group never committed counts from its low watermark (everything unread).

    :param consumer: created with ``group.id=group_id`` and :data:`EOF_OVERRIDES`; it never
        subscribes, so it does not join the group or disturb its members.
    """
    ends = true_end_offsets(consumer, topic, partitions, timeout)
    committed_tps = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=timeout)
    committed: dict[int, int | None] = {}
    lag: dict[int, int] = {}
    for tp in committed_tps:
        if tp.offset >= 0:
            committed[tp.partition] = tp.offset
            lag[tp.partition] = max(0, ends[tp.partition] - tp.offset)
        else:
            low, _ = consumer.get_watermark_offsets(TopicPartition(topic, tp.partition), timeout=timeout)
            committed[tp.partition] = None
            lag[tp.partition] = max(0, ends[tp.partition] - low)
    return ConsumerLag(group_id, topic, ends, committed, lag)
