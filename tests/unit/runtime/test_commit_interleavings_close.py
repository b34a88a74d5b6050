"""At-least-once, two tasks on one thread sharing one producer: what a dirty close of one task
(membership lost) or the thread's shutdown does to outputs sent but not yet acknowledged.
Broker-free, with the collector and consumer of ``test_commit_interleavings`` that record the
order of acknowledgements and offset commits.

The rule these pin down: an output is never dropped by the runtime once sent, and no input offset
is committed before every output sent so far is acknowledged. A task closed dirty leaves its
outputs in the shared producer (they are delivered with the next commit's acknowledgements; its
input is processed again by the next owner: duplicates, never loss)."""

from __future__ import annotations

from typing import Any

from streams_runtime import Serdes, Topology
from streams_runtime.config import as_config
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.shared_record_collectors import SharedRecordCollectors
from streams_runtime.processor.internals.task_manager import TaskManager
from streams_runtime.processor.task_id import TaskId
from tests.fakes import FakeMessage
from tests.unit.runtime.test_commit_interleavings import GatedCollector, RecordingConsumer

T0, T1 = TaskId(0, 0), TaskId(0, 1)


def _manager(tmp_path: Any) -> tuple[TaskManager, RecordingConsumer, GatedCollector]:
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_sink("sink", "output", "src", key_serde=Serdes.String(), value_serde=Serdes.String())
    builder = topology.internal_builder
    builder.application_id = "close"
    collector = GatedCollector()
    consumer = RecordingConsumer(collector)
    manager = TaskManager(
        builder=builder,
        subtopologies={i.id: i for i in topology_info.sub_topologies(builder)},
        partition_counts={"input": 2, "output": 2},
        config=as_config({"application_id": "close", "state_dir": str(tmp_path)}),
        consumer=consumer,
        collector=SharedRecordCollectors(collector),
        metrics=StreamsMetrics(),
        cache=None,
        wall_clock=lambda: 0,
        state_directory=None,
        changelog_reader=None,
    )
    manager.handle_assignment((), [T0, T1], clean=True)
    manager.add_records(
        [
            FakeMessage(o, b"k", b"p%d-%d" % (p, o), topic="input", partition=p)
            for p in (0, 1)
            for o in range(3)
        ]
    )
    assert manager.process(0) == 6
    assert len(collector.unacked) == 6  # every output sent, none acknowledged yet
    return manager, consumer, collector


def _values(records: list[Any]) -> list[bytes]:
    return sorted(value for _, _, value in records)


def test_a_task_lost_between_send_and_ack_keeps_its_outputs_and_commits_nothing(tmp_path):
    manager, consumer, collector = _manager(tmp_path)
    manager.handle_assignment([T0], (), clean=False)  # membership lost for T0 only
    assert len(collector.unacked) == 6 and consumer.commits == []  # nothing dropped, nothing committed
    manager.commit()  # T1's next commit
    assert collector.events == ["acks", "commit"]
    assert consumer.commits == [([("input", 1, 3)], 0)]  # T1's offsets only, after every ack
    # T0's outputs too were delivered (and T0's input is processed again by its next owner)
    assert _values(collector.acked) == sorted(b"p%d-%d" % (p, o) for p in (0, 1) for o in range(3))


def test_a_clean_shutdown_between_send_and_ack_commits_only_after_every_ack(tmp_path):
    manager, consumer, collector = _manager(tmp_path)
    manager.close_all(clean=True)
    assert collector.events == ["acks", "commit"]
    assert consumer.commits == [([("input", 0, 3), ("input", 1, 3)], 0)]
    assert len(collector.acked) == 6


def test_a_shutdown_after_an_error_commits_nothing(tmp_path):
    manager, consumer, collector = _manager(tmp_path)
    manager.close_all(clean=False)
    assert consumer.commits == [] and collector.events == []
    assert len(collector.unacked) == 6  # still in the producer: flushed when it closes
