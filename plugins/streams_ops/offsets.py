"""Reading partitions to their true end, and consumer lag measured from it.

Tansu answers ListOffsets "latest" with the base offset of the last batch + 1
(docs/decisions/0001-embedded-broker.md), so the watermarks a consumer reports cannot be trusted
for an end offset or a lag. Both are
measured here the way that is correct on Tansu and on Apache Kafka alike: a consumer with
``enable.partition.eof=true`` reads each partition until librdkafka reports the end of the
partition, whose offset is the true high watermark.

Steps of :func:`true_end_offsets`:
  1. ask for the reported watermarks of every partition (cheap, possibly too low);
  2. assign each partition at ``max(low, reported - 1)`` (the last batch at most is read);
  3. consume until every partition has reported its end (``_PARTITION_EOF``); that offset is the end.

No Airflow here, and no ``confluent_kafka`` import either: the consumer comes from
``streams_runtime.kafka.clients`` and is passed in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: librdkafka overrides a consumer needs for the functions of this module.
EOF_OVERRIDES: dict[str, Any] = {"enable.partition.eof": True, "enable.auto.commit": False}

_PARTITION_EOF = "_PARTITION_EOF"


class PartitionReadError(RuntimeError):
    """A partition could not be read to its end (broker error or deadline)."""


def scan_to_eof(
    consumer: Any,
    topic: str,
    starts: Mapping[int, int],
    on_record: Callable[[Any], None] | None = None,
    timeout: float = 60.0,
    batch_size: int = 2000,
) -> dict[int, int]:
    """Read ``topic`` from ``starts`` (partition -> offset) until every partition hits its end.

    :param consumer: a consumer created with :data:`EOF_OVERRIDES`; it is assigned, then unassigned.
    :param on_record: called with every record read (a confluent ``Message``), in partition order.
    :returns: partition -> end offset (the offset after the last record, the true high watermark).
    :raises PartitionReadError: on a broker error, or when ``timeout`` seconds pass first.
    """
    from streams_runtime.kafka.clients import TopicPartition

    ends: dict[int, int] = {}
    if not starts:
        return ends
    consumer.assign([TopicPartition(topic, p, o) for p, o in starts.items()])
    deadline = time.monotonic() + timeout
    try:
        while len(ends) < len(starts):
            if time.monotonic() > deadline:
                missing = sorted(set(starts) - set(ends))
                raise PartitionReadError(
                    f"{topic}: partitions {missing} did not reach their end within {timeout:.0f}s"
                )
            for message in consumer.consume(num_messages=batch_size, timeout=0.2):
                error = message.error()
                if error is None:
                    if on_record is not None:
                        on_record(message)
                elif error.name() == _PARTITION_EOF:
                    ends[message.partition()] = message.offset()
                else:
                    raise PartitionReadError(f"{topic}[{message.partition()}]: {error}")
    finally:
        consumer.unassign()
    return ends


def true_end_offsets(consumer: Any, topic: str, partitions: int, timeout: float = 30.0) -> dict[int, int]:
    """The true end offset of every partition of ``topic`` (steps in the module docstring)."""
    from streams_runtime.kafka.clients import TopicPartition

    # Step 1
    starts = {}
    for p in range(partitions):
        low, reported = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
        # Step 2
        starts[p] = max(low, reported - 1, 0)
    # Step 3
    return scan_to_eof(consumer, topic, starts, timeout=timeout)


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
    from streams_runtime.kafka.clients import TopicPartition

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
