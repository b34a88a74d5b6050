"""True end offsets and partition EOF: the one home of "read a partition to its end".

Every part of the project that needs where a partition ends (restore, standby lag, the group
leader's lag computation, the Airflow plugins, the Spark planner, the demo, the tests) goes
through this module.

Why an end offset is read and never listed (see docs/decisions/0001-embedded-broker.md): the
embedded broker answers ListOffsets "latest" with the base offset of the last record batch + 1,
which is below the true end whenever that batch holds more than one record. The true end is the
high watermark of a fetch response, which librdkafka reports as an end-of-partition event on a
consumer created with ``enable.partition.eof=true`` (:data:`EOF_OVERRIDES`). On Apache Kafka both
agree, so the rule is right on either broker.

Steps of :func:`true_watermarks` (and :func:`true_end_offsets`):
  1. ListOffsets for every partition: ``low`` and the ``reported`` end (cheap, possibly too low);
  2. assign every partition at :func:`probe_offset` ``= max(0, low, reported - 1)``: inside the last
     batch (or the end of an empty partition), so one fetch answers with the real high watermark;
  3. :func:`read_to_end`: consume until every partition has reported end-of-partition; the offset
     of that event is the true end (a record past the reported end raises the bound to its
     offset + 1 meanwhile).

Only this module and :mod:`.clients` decide what an end-of-partition event is
(:func:`is_partition_eof`); no caller compares error codes itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from streams_runtime.kafka.clients import (
    PARTITION_EOF,
    TRANSIENT_CLIENT_ERRORS,
    KafkaError,
    KafkaException,
    TopicPartition,
)

__all__ = [
    "EOF_OVERRIDES",
    "LIST_OFFSETS_RETRY_S",
    "committed_offsets_of",
    "is_transient_offsets_error",
    "EofConsumer",
    "PartitionReadError",
    "TopicPartitionKey",
    "is_partition_eof",
    "is_retriable_listing_error",
    "probe_offset",
    "read_to_end",
    "scan_to_eof",
    "true_end_offsets",
    "true_watermarks",
]

#: librdkafka overrides a consumer needs for the functions of this module.
EOF_OVERRIDES: dict[str, Any] = {"enable.partition.eof": True, "enable.auto.commit": False}

#: the group coordinator moved, or is loading its state: asked again, the answer comes
_COORDINATOR_MOVING = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
    }
)


#: a partition's leader moved, or the answering broker has not caught up with the cluster's
#: metadata yet (a broker bounced: librdkafka says "unknown partition" of a partition that exists)
_LEADER_MOVING = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError._UNKNOWN_PARTITION,  # noqa: SLF001
        KafkaError._DESTROY_BROKER,  # noqa: SLF001
        # a leader that just took over answers ListOffsets so until its high watermark caught up
        # (KIP-207; Java's OffsetNotAvailableException is retriable, librdkafka's code is not)
        KafkaError.OFFSET_NOT_AVAILABLE,
    }
)


#: how long a failing ListOffsets is asked again (Kafka Streams' default ``task.timeout.ms``)
LIST_OFFSETS_RETRY_S = 300.0


def is_retriable_listing_error(exc: KafkaException) -> bool:
    """Whether a failed ListOffsets (``get_watermark_offsets``) is worth asking again: the cluster
    is unreachable, a leader moves or a broker is catching up (Kafka Streams retries these within
    ``task.timeout.ms``). A topic that really is missing answers the same way, so callers bound the
    retries and name the partition when they give up."""
    error: Any = exc.args[0] if exc.args else None
    if error is None or not hasattr(error, "code"):
        return False
    if error.code() in TRANSIENT_CLIENT_ERRORS or error.code() in _LEADER_MOVING:
        return True
    return bool(hasattr(error, "retriable") and error.retriable())


def is_transient_offsets_error(exc: KafkaException) -> bool:
    """Whether a failed ``committed`` (OffsetFetch) may pass: the cluster unreachable or timing
    out, or the group coordinator moving (what :func:`committed_offsets_of` asks again for)."""
    error: Any = exc.args[0] if exc.args else None
    if error is None or not hasattr(error, "code"):
        return False
    return error.code() in _COORDINATOR_MOVING or error.code() in TRANSIENT_CLIENT_ERRORS


def committed_offsets_of(consumer: Any, partitions: list[Any], timeout_s: float = 30.0) -> list[Any]:
    """``consumer.committed(partitions)``, asked again while the group coordinator moves (a broker
    bounced or died: NOT_COORDINATOR and its kin) or the cluster is unreachable, for up to
    ``timeout_s`` in all; any other error, or the deadline, raises."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return list(consumer.committed(partitions, timeout=max(1.0, deadline - time.monotonic())))
        except KafkaException as exc:
            error = exc.args[0]
            moving = error.code() in _COORDINATOR_MOVING or error.code() in TRANSIENT_CLIENT_ERRORS
            if not moving or time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


#: ``(topic, partition)``, free of any client library's type.
TopicPartitionKey = tuple[str, int]


class ErrorLike(Protocol):
    """What this module reads of a consumer error (confluent's ``KafkaError``)."""

    def code(self) -> int: ...


class EofConsumer(Protocol):
    """The consumer calls the functions here make (a confluent ``Consumer`` with
    :data:`EOF_OVERRIDES`, or a test fake)."""

    def assign(self, partitions: list[Any]) -> None: ...

    def unassign(self) -> None: ...

    def consume(self, num_messages: int = ..., timeout: float = ...) -> list[Any]: ...

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float = ..., cached: bool = ...
    ) -> tuple[int, int]: ...


class PartitionReadError(RuntimeError):
    """A partition could not be read to its end (a broker error, or the deadline passed first)."""


def is_partition_eof(error: ErrorLike | None) -> bool:
    """Whether a consumer error is the end-of-partition event (not a failure)."""
    return error is not None and error.code() == PARTITION_EOF


def probe_offset(low: int, reported: int) -> int:
    """Step 2: where to fetch so that the next end-of-partition event names the true end."""
    return max(0, low, reported - 1)


def read_to_end(
    consumer: EofConsumer,
    starts: Mapping[TopicPartitionKey, int],
    on_record: Callable[[Any], None] | None = None,
    timeout: float = 60.0,
    *,
    batch_size: int = 2000,
    best_effort: bool = False,
) -> dict[TopicPartitionKey, int]:
    """Step 3: read every partition from its start offset until it reports its end.

    :param consumer: a consumer created with :data:`EOF_OVERRIDES`; it is assigned ``starts`` and
        unassigned before returning.
    :param on_record: called with every record read (a confluent ``Message``), in partition order.
    :param best_effort: at the deadline return the best bound seen (last record + 1) for the
        partitions that did not report their end, instead of raising; a partition with no record
        and no end-of-partition event is then left out.
    :returns: ``(topic, partition) -> end offset`` (the offset after the last record).
    :raises PartitionReadError: on a broker error; at the deadline unless ``best_effort``.
    """
    ends: dict[TopicPartitionKey, int] = {}
    if not starts:
        return ends
    bounds: dict[TopicPartitionKey, int] = {}
    consumer.assign([TopicPartition(t, p, o) for (t, p), o in starts.items()])
    deadline = time.monotonic() + timeout
    try:
        while len(ends) < len(starts):
            left = deadline - time.monotonic()
            if left <= 0:
                if best_effort:
                    return {**bounds, **ends}
                missing = sorted(set(starts) - set(ends))
                raise PartitionReadError(
                    f"partitions {missing} did not reach their end within {timeout:.1f}s"
                )
            for message in consumer.consume(batch_size, min(0.2, left)):
                error = message.error()
                tp = (message.topic(), message.partition())
                if error is None:
                    bounds[tp] = max(bounds.get(tp, 0), message.offset() + 1)
                    if on_record is not None:
                        on_record(message)
                elif is_partition_eof(error):
                    ends[tp] = max(message.offset(), bounds.get(tp, 0))
                else:
                    raise PartitionReadError(f"{tp[0]}[{tp[1]}]: {error}")
    finally:
        consumer.unassign()
    return ends


def scan_to_eof(
    consumer: EofConsumer,
    topic: str,
    starts: Mapping[int, int],
    on_record: Callable[[Any], None] | None = None,
    timeout: float = 60.0,
    batch_size: int = 2000,
) -> dict[int, int]:
    """:func:`read_to_end` for partitions of one topic: ``starts`` and the result are keyed by
    partition."""
    ends = read_to_end(
        consumer, {(topic, p): o for p, o in starts.items()}, on_record, timeout, batch_size=batch_size
    )
    return {p: end for (_, p), end in ends.items()}


def true_watermarks(
    consumer: EofConsumer, topic: str, partitions: Iterable[int], timeout: float = 30.0
) -> dict[int, tuple[int, int]]:
    """``{partition: (low, true end)}`` of ``topic`` (steps in the module docstring).

    :raises PartitionReadError: when a partition did not report its end within ``timeout``.
    :raises KafkaException: (from :mod:`.clients`) when the offsets of a partition cannot be listed.
    """
    # Step 1
    listed: dict[int, tuple[int, int]] = {}
    for p in partitions:
        low, reported = consumer.get_watermark_offsets(
            TopicPartition(topic, p), timeout=timeout, cached=False
        )
        listed[p] = (max(0, low), reported)
    # Steps 2-3
    ends = scan_to_eof(consumer, topic, {p: probe_offset(*lr) for p, lr in listed.items()}, timeout=timeout)
    return {p: (low, max(ends[p], reported, low)) for p, (low, reported) in listed.items()}


def true_end_offsets(
    consumer: EofConsumer, topic: str, partitions: int | Iterable[int], timeout: float = 30.0
) -> dict[int, int]:
    """``{partition: true end}`` of ``topic``; ``partitions`` is a count or the partition ids."""
    ids = range(partitions) if isinstance(partitions, int) else partitions
    return {p: end for p, (_, end) in true_watermarks(consumer, topic, ids, timeout).items()}
