"""streams_runtime.kafka.offsets over a fake consumer: true ends are read, never listed."""

from __future__ import annotations

import pytest

from streams_runtime.kafka.clients import PARTITION_EOF, KafkaError, KafkaException, TopicPartition
from streams_runtime.kafka.offsets import (
    PartitionReadError,
    committed_offsets_of,
    is_partition_eof,
    is_retriable_listing_error,
    probe_offset,
    read_to_end,
    scan_to_eof,
    true_end_offsets,
    true_watermarks,
)
from tests.fakes import FakeEofConsumer, FakeError


def test_should_recognise_only_the_end_of_partition_event():
    assert is_partition_eof(FakeError(PARTITION_EOF))
    assert not is_partition_eof(FakeError(-1))
    assert not is_partition_eof(None)


@pytest.mark.parametrize(
    ("low", "reported", "expected"), [(0, 0, 0), (0, 10, 9), (5, 5, 5), (5, 10, 9), (3, 0, 3), (-1, -1, 0)]
)
def test_should_probe_inside_the_last_batch_and_never_below_the_log_start(low, reported, expected):
    assert probe_offset(low, reported) == expected


def test_should_read_the_true_end_when_the_listed_end_is_a_batch_behind():
    # partition 0 lists 7 but holds 10 records (the last batch started at 6); partition 1 is empty
    consumer = FakeEofConsumer({("t", 0): (0, 7, 10), ("t", 1): (0, 0, 0), ("t", 2): (4, 9, 9)})
    assert true_end_offsets(consumer, "t", 3, timeout=2) == {0: 10, 1: 0, 2: 9}
    assert consumer.assignments[-1] == [("t", 0, 6), ("t", 1, 0), ("t", 2, 8)]
    assert consumer.unassigned == 1
    assert true_watermarks(consumer, "t", [0, 2], timeout=2) == {0: (0, 10), 2: (4, 9)}


def test_should_hand_every_record_to_the_callback_and_return_the_end_per_partition():
    consumer = FakeEofConsumer({("t", 0): (0, 0, 3), ("t", 1): (0, 0, 2)})
    seen = []
    ends = scan_to_eof(consumer, "t", {0: 0, 1: 1}, lambda m: seen.append((m.partition(), m.offset())), 2)
    assert ends == {0: 3, 1: 2}
    assert sorted(seen) == [(0, 0), (0, 1), (0, 2), (1, 1)]


def test_should_raise_naming_the_partition_on_a_broker_error_and_still_unassign():
    consumer = FakeEofConsumer({("t", 0): (0, 0, 3)}, fail={("t", 0)})
    with pytest.raises(PartitionReadError, match=r"t\[0\]: fake error"):
        read_to_end(consumer, {("t", 0): 0}, timeout=2)
    assert consumer.unassigned == 1


def test_should_raise_at_the_deadline_or_return_the_best_bound_when_asked():
    partitions = {("t", 0): (0, 0, 5), ("t", 1): (0, 0, 2)}
    with pytest.raises(PartitionReadError, match=r"\('t', 0\).*did not reach their end"):
        read_to_end(FakeEofConsumer(partitions, stall={("t", 0)}), {("t", 0): 0, ("t", 1): 0}, timeout=0.3)
    best = read_to_end(
        FakeEofConsumer(partitions, stall={("t", 0)}),
        {("t", 0): 0, ("t", 1): 0},
        timeout=0.3,
        best_effort=True,
    )
    assert best == {("t", 0): 5, ("t", 1): 2}


class _MovingCoordinator:
    """``committed`` fails with ``errors`` in turn, then answers."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.calls = 0

    def committed(self, partitions, timeout):
        self.calls += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return [TopicPartition(tp.topic, tp.partition, 7) for tp in partitions]


def test_committed_offsets_are_asked_again_while_the_group_coordinator_moves() -> None:
    consumer = _MovingCoordinator(KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS)
    [tp] = committed_offsets_of(consumer, [TopicPartition("in", 0)], timeout_s=10)
    assert (tp.topic, tp.partition, tp.offset) == ("in", 0, 7) and consumer.calls == 3


def test_committed_offsets_raise_any_other_error_at_once() -> None:
    consumer = _MovingCoordinator(KafkaError.GROUP_AUTHORIZATION_FAILED)
    with pytest.raises(KafkaException):
        committed_offsets_of(consumer, [TopicPartition("in", 0)], timeout_s=10)
    assert consumer.calls == 1


@pytest.mark.parametrize(
    "code",
    [
        KafkaError._UNKNOWN_PARTITION,  # a bounced broker that has not caught up with the metadata
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
    ],
)
def test_a_listing_that_fails_while_a_broker_bounces_is_worth_asking_again(code) -> None:
    assert is_retriable_listing_error(KafkaException(KafkaError(code)))


@pytest.mark.parametrize("code", [KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError._INVALID_ARG])
def test_a_listing_refused_for_good_is_not_asked_again(code) -> None:
    assert not is_retriable_listing_error(KafkaException(KafkaError(code)))
