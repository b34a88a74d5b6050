"""RepartitionGapGuard's rule, on hand-made batches: a record above the expected offset of a
guarded partition is a gap (seek back, drop the rest of that partition's batch, count it), the
records re-read are taken, a gap seen again at the same offset after the seek-back is accepted
once, other topics pass untouched, assignments, revocations and seeks set what is expected."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from streams_runtime.brokers.tansu.gap_guard import (
    ACCEPTED_SENSOR,
    MAX_SEEK_BACKS,
    METRICS_GROUP,
    OFFSET_INVALID,
    SEEKS_SENSOR,
    RepartitionGapGuard,
    guarded_topics,
)
from streams_runtime.config import StreamsConfig
from streams_runtime.kafka.clients import OFFSET_END, KafkaError, KafkaException, TopicPartition
from streams_runtime.kstream import Consumed, Grouped, Produced, StreamsBuilder
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
from streams_runtime.serdes import Serdes
from streams_runtime.testing import InMemoryClientSupplier, InMemoryCluster
from streams_runtime.testing.in_memory_clients import InMemoryMessage

REP = "app-by-value-repartition"
SRC = "input"


class RecordingConsumer:
    """The guard's view of a consumer: seeks are recorded (or fail when told to)."""

    def __init__(self) -> None:
        self.seeks: list[tuple[str, int, int]] = []
        self.assigned: list[tuple[str, int, int]] = []
        self.fail_seek: BaseException | None = None

    def seek(self, tp: Any) -> None:
        if self.fail_seek is not None:
            raise self.fail_seek
        self.seeks.append((tp.topic, tp.partition, tp.offset))

    def incremental_assign(self, partitions: list[Any]) -> None:
        self.assigned.extend((tp.topic, tp.partition, tp.offset) for tp in partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        pass

    def assign(self, partitions: list[Any]) -> None:
        self.assigned = [(tp.topic, tp.partition, tp.offset) for tp in partitions]

    def unassign(self) -> None:
        self.assigned = []

    def position(self, partitions: list[Any]) -> str:
        return "delegated"


def msgs(topic: str, partition: int, *offsets: int) -> list[InMemoryMessage]:
    return [InMemoryMessage(topic, partition, o) for o in offsets]


def offsets(messages: list[Any]) -> list[tuple[str, int, int]]:
    return [(m.topic(), m.partition(), m.offset()) for m in messages]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def guard_on(
    committed: dict[int, int],
    *,
    reset_earliest: bool = True,
    grace_s: float = 0.0,
    clock: FakeClock | None = None,
) -> tuple[RepartitionGapGuard, Any, RecordingConsumer, StreamsMetrics]:
    """A guard of REP, its watched consumer assigned REP's partitions at ``committed`` offsets
    (no grace period unless given: a gap seen again is accepted at once)."""
    metrics = StreamsMetrics()
    guard = RepartitionGapGuard(
        [REP], metrics, reset_earliest=reset_earliest, grace_s=grace_s, clock=clock or FakeClock()
    )
    inner = RecordingConsumer()
    consumer = guard.watch(inner)
    consumer.incremental_assign([TopicPartition(REP, p, o) for p, o in committed.items()])
    return guard, consumer, inner, metrics


def sensor(metrics: StreamsMetrics, name: str, partition: int) -> float:
    return metrics.value(name, METRICS_GROUP, {"topic": REP, "partition": partition})


# ---------------------------------------------------------------------------- the rule
def test_should_pass_a_batch_in_order_unchanged_and_move_the_expected_offset_on():
    guard, _, inner, _ = guard_on({0: 5})
    batch = msgs(REP, 0, 5, 6, 7)
    assert guard.check(batch) is batch  # no copy when nothing is dropped
    assert guard.expected(REP, 0) == 8
    assert inner.seeks == []


def test_should_seek_back_and_drop_the_partitions_rest_of_the_batch_on_a_gap(caplog):
    guard, _, inner, metrics = guard_on({0: 5, 1: 0})
    batch = msgs(REP, 0, 5, 6, 9, 10) + msgs(REP, 1, 0, 1) + msgs(SRC, 0, 3, 40) + msgs(REP, 0, 11)
    with caplog.at_level(logging.WARNING, logger="streams_runtime.processor"):
        kept = guard.check(batch)
    # partition 0 from the gap on is dropped; partition 1 and the other topic pass as they came
    assert offsets(kept) == [(REP, 0, 5), (REP, 0, 6), (REP, 1, 0), (REP, 1, 1), (SRC, 0, 3), (SRC, 0, 40)]
    assert inner.seeks == [(REP, 0, 7)]
    assert guard.expected(REP, 0) == 7 and guard.expected(REP, 1) == 2
    assert guard.seeks == 1 and guard.accepted == 0
    assert sensor(metrics, SEEKS_SENSOR, 0) == 1
    warning = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warning) == 1 and REP in warning[0] and "partition 0" in warning[0]
    assert "expected offset 7, got 9" in warning[0]


def test_should_take_the_records_read_again_after_the_seek_back():
    guard, _, inner, metrics = guard_on({0: 0})
    guard.check(msgs(REP, 0, 0, 1, 4, 5))  # 2 and 3 passed over: sought back to 2
    again = msgs(REP, 0, 2, 3, 4, 5, 6)
    assert guard.check(again) is again
    assert guard.expected(REP, 0) == 7
    # a later gap is a new one: sought back again, not accepted as the verified earlier one
    assert offsets(guard.check(msgs(REP, 0, 7, 9))) == [(REP, 0, 7)]
    assert inner.seeks == [(REP, 0, 2), (REP, 0, 8)]
    assert guard.accepted == 0 and sensor(metrics, ACCEPTED_SENSOR, 0) == 0


def test_should_accept_a_gap_seen_again_at_the_same_offset_after_the_seek_back(caplog):
    guard, _, inner, metrics = guard_on({0: 10})
    assert offsets(guard.check(msgs(REP, 0, 14, 15))) == []
    assert inner.seeks == [(REP, 0, 10)]
    with caplog.at_level(logging.WARNING, logger="streams_runtime.processor"):
        batch = msgs(REP, 0, 14, 15, 16)
        assert guard.check(batch) is batch  # truly absent (deleted): accepted, nothing dropped
    assert inner.seeks == [(REP, 0, 10)]  # no second seek
    assert guard.expected(REP, 0) == 17
    assert guard.accepted == 1 and sensor(metrics, ACCEPTED_SENSOR, 0) == 1
    assert any("offsets 10-13 absent" in r.getMessage() for r in caplog.records)
    # verified once only: the next gap of the partition is checked afresh
    guard.check(msgs(REP, 0, 17, 19))
    assert inner.seeks == [(REP, 0, 10), (REP, 0, 18)]


def test_should_accept_a_gap_whose_first_record_comes_back_even_higher():
    guard, _, inner, _ = guard_on({0: 0})
    guard.check(msgs(REP, 0, 3))
    batch = msgs(REP, 0, 5, 6)  # more deleted meanwhile: 0-4 are absent
    assert guard.check(batch) is batch
    assert inner.seeks == [(REP, 0, 0)] and guard.accepted == 1 and guard.expected(REP, 0) == 7


def test_should_check_a_narrowed_gap_again_and_never_seek_back_more_than_the_bound():
    guard, _, inner, _ = guard_on({0: 0})
    # each fetch after a seek-back starts lower, still above 0: checked again, at most MAX_SEEK_BACKS times
    top = MAX_SEEK_BACKS + 10
    for got in range(top, top - MAX_SEEK_BACKS, -1):
        assert offsets(guard.check(msgs(REP, 0, got))) == []
    assert inner.seeks == [(REP, 0, 0)] * MAX_SEEK_BACKS
    batch = msgs(REP, 0, top - MAX_SEEK_BACKS)
    assert guard.check(batch) is batch  # the bound is reached: accepted
    assert len(inner.seeks) == MAX_SEEK_BACKS and guard.accepted == 1
    # a narrowed gap whose records then arrive is recovered like any other
    guard2, _, inner2, _ = guard_on({0: 0})
    guard2.check(msgs(REP, 0, 6))
    guard2.check(msgs(REP, 0, 3))
    assert guard2.check(msgs(REP, 0, 0, 1, 2, 3)) is not None and guard2.expected(REP, 0) == 4
    assert inner2.seeks == [(REP, 0, 0), (REP, 0, 0)] and guard2.accepted == 0


def test_should_pass_records_below_the_expected_offset_and_error_events_unchanged():
    guard, _, inner, _ = guard_on({0: 10})
    eof = InMemoryMessage(REP, 0, 99, error=KafkaError(KafkaError._PARTITION_EOF))  # noqa: SLF001
    batch = [*msgs(REP, 0, 8, 9), eof, *msgs(REP, 0, 10)]
    assert guard.check(batch) is batch
    assert guard.expected(REP, 0) == 11 and inner.seeks == []


def test_should_keep_error_events_of_a_cut_partition():
    guard, _, _, _ = guard_on({0: 0})
    eof = InMemoryMessage(REP, 0, 3, error=KafkaError(KafkaError._PARTITION_EOF))  # noqa: SLF001
    kept = guard.check([*msgs(REP, 0, 0, 2), eof])
    assert offsets(kept) == [(REP, 0, 0), (REP, 0, 3)] and kept[1] is eof


def test_should_pass_the_records_on_when_the_seek_back_fails(caplog):
    guard, _, inner, _ = guard_on({0: 0})
    inner.fail_seek = KafkaException(KafkaError(KafkaError._STATE))  # noqa: SLF001
    batch = msgs(REP, 0, 0, 3, 4)
    with caplog.at_level(logging.WARNING, logger="streams_runtime.processor"):
        assert guard.check(batch) is batch
    assert guard.expected(REP, 0) == 5 and guard.seeks == 0
    assert any("seeking back failed" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------- what is guarded
class Untouchable:
    """A message that fails the test if the guard looks at it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the guard called {name}() on a batch it has nothing to guard in")


def test_should_not_look_at_a_batch_while_no_guarded_partition_is_assigned():
    metrics = StreamsMetrics()
    guard = RepartitionGapGuard([REP], metrics)
    consumer = guard.watch(RecordingConsumer())
    consumer.incremental_assign([TopicPartition(SRC, 0, 0), TopicPartition(SRC, 1, 0)])
    batch = [Untouchable(), Untouchable()]
    assert guard.check(batch) is batch


def test_should_leave_gaps_of_topics_it_does_not_guard_alone():
    guard, consumer, inner, metrics = guard_on({0: 0})
    consumer.incremental_assign([TopicPartition(SRC, 0, 0)])  # a user topic: compaction, markers
    batch = msgs(SRC, 0, 0, 5, 9) + msgs(REP, 0, 0, 1)
    assert guard.check(batch) is batch
    assert guard.expected(SRC, 0) is None and inner.seeks == [] and metrics.sensors() == []


def test_should_forget_a_revoked_partition_and_start_from_the_committed_offset_when_reassigned():
    guard, consumer, inner, _ = guard_on({0: 0, 1: 0})
    guard.check(msgs(REP, 0, 0, 1) + msgs(REP, 1, 0, 3))  # partition 1: a gap being checked
    assert inner.seeks == [(REP, 1, 1)]
    consumer.incremental_unassign([TopicPartition(REP, 1)])
    assert guard.expected(REP, 1) is None and guard.expected(REP, 0) == 2
    stale = msgs(REP, 1, 3, 9)  # fetched before the revocation: the tasks drop them, the guard lets them be
    assert guard.check(stale) is stale and inner.seeks == [(REP, 1, 1)]
    consumer.incremental_assign([TopicPartition(REP, 1, 20)])  # its new committed offset
    assert guard.expected(REP, 1) == 20
    # the earlier check is forgotten: 22 is a new gap, not the one seen before
    assert offsets(guard.check(msgs(REP, 1, 22))) == []
    assert inner.seeks == [(REP, 1, 1), (REP, 1, 20)] and guard.accepted == 0


def test_should_reset_on_a_whole_assignment_and_on_unassign():
    guard, consumer, _, _ = guard_on({0: 4})
    consumer.assign([TopicPartition(REP, 2, 7)])
    assert guard.expected(REP, 0) is None and guard.expected(REP, 2) == 7
    consumer.unassign()
    assert guard.expected(REP, 2) is None


def test_should_expect_the_log_start_without_a_committed_offset_when_resetting_to_earliest():
    guard, _, inner, _ = guard_on({0: OFFSET_INVALID})
    assert guard.expected(REP, 0) == 0
    assert offsets(guard.check(msgs(REP, 0, 2, 3))) == []  # 0 and 1 passed over on the first fetch
    assert inner.seeks == [(REP, 0, 0)]


def test_should_take_the_first_record_as_it_comes_when_the_start_is_unknown():
    guard, consumer, inner, _ = guard_on({0: OFFSET_INVALID}, reset_earliest=False)
    assert guard.expected(REP, 0) == -1
    batch = msgs(REP, 0, 40, 41)
    assert guard.check(batch) is batch and guard.expected(REP, 0) == 42
    consumer.seek(TopicPartition(REP, 0, OFFSET_END))  # a logical seek: unknown again
    assert guard.expected(REP, 0) == -1
    consumer.seek(TopicPartition(REP, 0, 30))  # someone else's seek: expected from there
    assert guard.expected(REP, 0) == 30 and inner.seeks == [(REP, 0, OFFSET_END), (REP, 0, 30)]
    assert offsets(guard.check(msgs(REP, 0, 31))) == []


def test_should_delegate_everything_else_to_the_consumer():
    guard, consumer, inner, _ = guard_on({0: 0})
    assert consumer.position([]) == "delegated"
    assert inner.assigned == [(REP, 0, 0)]


# ---------------------------------------------------------------------------- which topics, when
def repartition_topology() -> Any:
    builder = StreamsBuilder()
    (
        builder.stream(SRC, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by(lambda key, value: value, Grouped.with_(Serdes.String(), Serdes.String(), name="by-value"))
        .count()
        .to_stream()
        .to("output", Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build({"application_id": "app"})


def prepared(topology: Any, tmp_path: Any, cluster_id: str = "tansu_cluster", **config: Any) -> RuntimeSetup:
    supplier = InMemoryClientSupplier(InMemoryCluster(cluster_id=cluster_id))
    supplier.cluster.create_topic(SRC, 2)
    supplier.cluster.create_topic("output", 2)
    props = {
        "application_id": "app",
        "bootstrap_servers": "in-memory:0",
        "state_dir": str(tmp_path),
        **config,
    }
    return RuntimeSetup.prepare(topology, StreamsConfig(props), "in-memory:0", str(uuid.uuid4()), supplier)


def test_should_guard_the_repartition_topics_the_topology_reads_under_at_least_once_only(tmp_path):
    setup = prepared(repartition_topology(), tmp_path)
    try:
        assert guarded_topics(setup) == frozenset({REP})
        guard = RepartitionGapGuard.for_runtime(setup, {}, None)
        assert guard is not None and guard.topics == {REP}
        latest = RepartitionGapGuard.for_runtime(setup, {"auto.offset.reset": "latest"}, None)
        assert latest is not None
        latest.assigned([TopicPartition(REP, 0, OFFSET_INVALID)])
        assert latest.expected(REP, 0) == -1
        # a repartition topic someone made compacted may have gaps: not guarded
        builder = setup.builder
        name = next(n for n in builder.internal_topics if builder.decorate(n) == REP)
        builder.internal_topics[name].overrides["cleanup.policy"] = "compact"
        assert guarded_topics(setup) == frozenset()
        assert RepartitionGapGuard.for_runtime(setup, {}, None) is None
    finally:
        setup.close()


def test_should_not_guard_on_apache_kafka(tmp_path):
    kafka = prepared(repartition_topology(), tmp_path, cluster_id="MkU3OEVBNTcwNTJENDM2Qk")
    try:
        assert not kafka.broker.is_tansu
        assert guarded_topics(kafka) == frozenset({REP})  # it would have something to guard
        assert RepartitionGapGuard.for_runtime(kafka, {}, None) is None
    finally:
        kafka.close()


def test_should_not_guard_under_exactly_once_or_without_repartition_input(tmp_path):
    eos = prepared(repartition_topology(), tmp_path / "eos", processing_guarantee="exactly_once_v2")
    try:
        assert RepartitionGapGuard.for_runtime(eos, {}, None) is None  # markers take offsets
    finally:
        eos.close()
    builder = StreamsBuilder()
    builder.stream(SRC, Consumed.with_(Serdes.String(), Serdes.String())).to("output")
    plain = prepared(builder.build({"application_id": "app"}), tmp_path / "plain")
    try:
        assert RepartitionGapGuard.for_runtime(plain, {}, None) is None
    finally:
        plain.close()


# ---------------------------------------------------------------------------- the in-memory race
def test_skip_once_makes_one_fetch_pass_over_offsets_that_later_fetches_return():
    supplier = InMemoryClientSupplier()
    cluster = supplier.cluster
    cluster.create_topic(REP, 1)
    live = supplier.get_consumer("in-memory:0", "live")
    live.assign([TopicPartition(REP, 0, 0)])
    cluster.faults.skip_once(REP, 0, [2, 3])
    for i in range(4):
        cluster.append(REP, 0, b"k", str(i).encode())
    # 2 and 3 are not readable yet and nothing is above them: the fetch stops below them
    assert [m.offset() for m in live.consume(10, 0)] == [0, 1]
    assert live.consume(10, 0) == []
    cluster.append(REP, 0, b"k", b"4")
    # a record above them: this fetch passes over them, the position moves past
    assert [m.offset() for m in live.consume(10, 0)] == [4]
    assert cluster.faults.skipped == {(REP, 0): [2, 3]}
    cluster.append(REP, 0, b"k", b"5")
    assert [m.offset() for m in live.consume(10, 0)] == [5]  # never fetched again by this consumer
    fresh = supplier.get_consumer("in-memory:0", "fresh")
    fresh.assign([TopicPartition(REP, 0, 0)])
    assert [m.offset() for m in fresh.consume(10, 0)] == [0, 1, 2, 3, 4, 5]  # they are in the log


def test_skip_once_waits_for_a_fetch_that_reaches_above_the_offsets():
    supplier = InMemoryClientSupplier()
    cluster = supplier.cluster
    cluster.create_topic(REP, 1)
    for i in range(6):
        cluster.append(REP, 0, b"k", str(i).encode())
    cluster.faults.skip_once(REP, 0, [1])
    live = supplier.get_consumer("in-memory:0", "live")
    live.assign([TopicPartition(REP, 0, 0)])
    assert [m.offset() for m in live.consume(1, 0)] == [0]  # too small to reach above: not skipped
    assert [m.offset() for m in live.consume(10, 0)] == [2, 3, 4, 5]
    live.seek(TopicPartition(REP, 0, 1))
    assert [m.offset() for m in live.consume(10, 0)] == [1, 2, 3, 4, 5]  # once only
    assert cluster.faults.skipped == {(REP, 0): [1]}


def test_should_keep_seeking_back_within_the_grace_period_and_take_records_that_turn_readable():
    clock = FakeClock()
    guard, _, inner, _ = guard_on({0: 10}, grace_s=1.0, clock=clock)
    assert offsets(guard.check(msgs(REP, 0, 14, 15))) == []
    clock.now += 0.2  # the re-fetch still starts above the gap (its batch not readable yet)
    assert offsets(guard.check(msgs(REP, 0, 14, 15))) == []
    assert inner.seeks == [(REP, 0, 10), (REP, 0, 10)] and guard.accepted == 0
    clock.now += 0.2  # now the batch is readable: everything arrives, in order
    assert [o for _, _, o in offsets(guard.check(msgs(REP, 0, 10, 11, 12, 13, 14, 15)))] == [
        10,
        11,
        12,
        13,
        14,
        15,
    ]
    assert guard.expected(REP, 0) == 16 and guard.accepted == 0


def test_should_accept_a_gap_only_once_it_has_lasted_the_grace_period():
    clock = FakeClock()
    guard, _, inner, _ = guard_on({0: 10}, grace_s=1.0, clock=clock)
    guard.check(msgs(REP, 0, 14))
    for _ in range(4):
        clock.now += 0.2
        assert offsets(guard.check(msgs(REP, 0, 14))) == []
    assert len(inner.seeks) == 5 and guard.accepted == 0
    clock.now += 0.25  # 1.05 s after the gap was first seen
    assert [o for _, _, o in offsets(guard.check(msgs(REP, 0, 14, 15)))] == [14, 15]
    assert len(inner.seeks) == 5 and guard.accepted == 1 and guard.expected(REP, 0) == 16
