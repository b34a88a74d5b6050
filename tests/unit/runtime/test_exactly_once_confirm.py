"""Exactly-once step 5, broker-free: a task whose last transaction committed input offsets begins
no new transaction until the group shows those offsets committed, and meanwhile commits the same
offsets again in a transaction without records.

Why (see ``CONFIRM_NUDGE_S`` in the transactional record collector): the embedded broker answers EndTxn before
the transaction is complete; a new transaction of the same producer took the pending one over,
and when that one was aborted (its producer killed, then fenced) the pending offsets were dropped
while the records kept their COMMIT markers, so the next owner counted that input twice."""

from __future__ import annotations

from typing import Any

import pytest

from streams_runtime import Serdes, Topology
from streams_runtime.config import as_config
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals import (
    record_collector,
    topology_info,
    transactional_record_collector,
)
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.record_collector import ProducerSettings
from streams_runtime.processor.internals.task_manager import TaskManager
from streams_runtime.processor.internals.transactional_record_collector import TaskRecordCollectors
from streams_runtime.testing import InMemoryClientSupplier
from tests.fakes import FakeMessage
from tests.unit.runtime.helpers import T0


@pytest.fixture
def supplier() -> InMemoryClientSupplier:
    supplier = InMemoryClientSupplier()
    for topic in ("in", "input", "out", "output"):
        supplier.cluster.create_topic(topic, 1)
    return supplier


def _collectors(supplier: InMemoryClientSupplier, application_id: str = "app") -> TaskRecordCollectors:
    return TaskRecordCollectors(
        ProducerSettings("unused:9092", "c", {}, client_supplier=supplier), application_id
    )


def test_the_collector_confirms_only_offsets_the_group_shows_and_nudges_meanwhile(monkeypatch, supplier):
    collectors = _collectors(supplier)
    try:
        collector = collectors.for_task(T0)
        [producer] = supplier.producers
        collector.send("out", b"k", b"v", (), 0, 0)
        assert collector.commit([TopicPartition("in", 0, 7)], "group metadata")
        assert collectors.unconfirmed_tasks() == {T0}

        calls = len(producer.calls)
        assert not collector.confirm({("in", 0): 6})  # older offsets: not yet, and no nudge yet
        assert producer.calls[calls:] == []

        monkeypatch.setattr(transactional_record_collector, "CONFIRM_NUDGE_S", 0.0)
        assert collector.commit([TopicPartition("in", 0, 9)], "group metadata")
        calls = len(producer.calls)
        assert not collector.confirm({})
        # the same offsets again, in a transaction of their own: no record, no begin of real work
        nudge = ["begin_transaction", "send_offsets_to_transaction", "commit_transaction"]
        assert producer.calls[calls:] == nudge
        assert not collector.in_transaction

        assert collector.confirm({("in", 0): 9})
        assert collectors.unconfirmed_tasks() == set() and collector.unconfirmed == []
    finally:
        collectors.close()


def test_the_nudges_back_off_while_the_offsets_do_not_show(monkeypatch, supplier):
    collectors = _collectors(supplier)
    clock = [100.0]
    monkeypatch.setattr(record_collector.time, "monotonic", lambda: clock[0])
    try:
        collector = collectors.for_task(T0)
        [producer] = supplier.producers
        assert collector.commit([TopicPartition("in", 0, 7)], "group metadata")
        nudged_at = []
        while clock[0] < 106.0:
            clock[0] += 0.125  # exact in binary: no rounding at the boundaries
            before = producer.calls.count("send_offsets_to_transaction")
            assert not collector.confirm({})
            if producer.calls.count("send_offsets_to_transaction") > before:
                nudged_at.append(clock[0] - 100.0)
        # after 0.25 s, then at doubling intervals up to every 2 s
        assert nudged_at == [0.25, 0.75, 1.75, 3.75, 5.75]
    finally:
        collectors.close()


def test_a_commit_without_input_offsets_leaves_nothing_to_confirm(supplier):
    collectors = _collectors(supplier)
    try:
        collector = collectors.for_task(T0)
        collector.send("out", b"k", b"v", (), 0, 0)
        assert collector.commit([], None)
        assert collectors.unconfirmed_tasks() == set()
    finally:
        collectors.close()


class GroupConsumer:
    """The thread's consumer as the TaskManager uses it; ``shown`` is what the group shows."""

    def __init__(self) -> None:
        self.shown: dict[tuple[str, int], int] = {}

    def committed(self, tps: list[Any], timeout: float) -> list[Any]:
        return [
            TopicPartition(tp.topic, tp.partition, self.shown.get((tp.topic, tp.partition), -1001))
            for tp in tps
        ]

    def consumer_group_metadata(self) -> str:
        return "group metadata"

    def incremental_assign(self, tps: list[Any]) -> None:
        pass

    def incremental_unassign(self, tps: list[Any]) -> None:
        pass


def _manager(
    tmp_path: Any, supplier: InMemoryClientSupplier
) -> tuple[TaskManager, GroupConsumer, TaskRecordCollectors]:
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_sink("sink", "output", "src", key_serde=Serdes.String(), value_serde=Serdes.String())
    builder = topology.internal_builder
    builder.application_id = "confirm"
    consumer = GroupConsumer()
    collectors = _collectors(supplier, "confirm")
    config = {
        "application_id": "confirm",
        "state_dir": str(tmp_path),
        "processing_guarantee": "exactly_once_v2",
    }
    manager = TaskManager(
        builder=builder,
        subtopologies={i.id: i for i in topology_info.sub_topologies(builder)},
        partition_counts={"input": 1, "output": 1},
        config=as_config(config),
        consumer=consumer,
        collector=collectors,
        metrics=StreamsMetrics(),
        cache=None,
        wall_clock=lambda: 0,
        state_directory=None,
        changelog_reader=None,
    )
    manager.handle_assignment((), [T0], clean=True)
    return manager, consumer, collectors


def _records(offsets: range) -> list[FakeMessage]:
    return [FakeMessage(o, b"k", b"v%d" % o, topic="input", partition=0) for o in offsets]


def test_a_task_begins_no_transaction_until_its_last_commit_shows(tmp_path, monkeypatch, supplier):
    monkeypatch.setattr(transactional_record_collector, "CONFIRM_NUDGE_S", 60.0)
    manager, consumer, collectors = _manager(tmp_path, supplier)
    try:
        [producer] = supplier.producers
        manager.add_records(_records(range(3)))
        assert manager.process(0) == 3
        assert manager.commit() == 1
        assert producer.calls.count("begin_transaction") == 1

        manager.add_records(_records(range(3, 5)))
        for _ in range(3):  # the broker has not completed the transaction: the task waits
            assert manager.process(0) == 0
        assert producer.calls.count("begin_transaction") == 1
        assert manager.commit() == 0  # nothing consumed, nothing to commit meanwhile

        consumer.shown[("input", 0)] = 3  # the group shows the offsets: the task goes on
        assert manager.process(0) == 2
        assert producer.calls.count("begin_transaction") == 2
        assert [r.value for r in supplier.cluster.records("output")] == [b"v0", b"v1", b"v2", b"v3", b"v4"]
    finally:
        manager.close_all(clean=False)
        collectors.close()
