"""At-least-once never commits an input offset past an output that was not acknowledged, whatever
comes between a record's send and its acknowledgement: a rebalance revoking the task, a lost
membership, a send that fails. Broker-free: the TaskManager with a consumer and a collector that
record the order of events."""

from __future__ import annotations

from typing import Any

import pytest

from streams_runtime import Serdes, Topology
from streams_runtime.config import as_config
from streams_runtime.errors import ProductionError
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.shared_record_collectors import SharedRecordCollectors
from streams_runtime.processor.internals.task_manager import TaskManager
from tests.unit.runtime.helpers import T0


class GatedCollector:
    """Outputs stay unacknowledged until ``wait_for_acks`` (commit step 2) is called."""

    def __init__(self, failing: bytes | None = None) -> None:
        self.unacked: list[Any] = []
        self.acked: list[Any] = []
        self.events: list[str] = []
        self._failing = failing

    def send(self, topic: str, key: Any, value: Any, headers: tuple, timestamp: int, partition: Any) -> None:
        if value == self._failing:
            raise ProductionError("record refused (default_production_exception_handler=fail)")
        self.unacked.append((topic, key, value))

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        self.events.append("acks")
        self.acked += self.unacked
        self.unacked = []

    def poll(self) -> None:
        pass


class RecordingConsumer:
    def __init__(self, collector: GatedCollector) -> None:
        self.collector = collector
        self.commits: list[tuple[list[tuple[str, int, int]], int]] = []

    def committed(self, tps: list[Any], timeout: float) -> list[Any]:
        return [TopicPartition(tp.topic, tp.partition, 0) for tp in tps]

    def incremental_assign(self, tps: list[Any]) -> None:
        pass

    def incremental_unassign(self, tps: list[Any]) -> None:
        pass

    def commit(self, offsets: list[Any], asynchronous: bool) -> None:
        self.collector.events.append("commit")
        self.commits.append(
            ([(o.topic, o.partition, o.offset) for o in offsets], len(self.collector.unacked))
        )


class Message:
    def __init__(self, offset: int, value: bytes) -> None:
        self._offset, self._value = offset, value

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return "input"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, 1000 + self._offset)

    def key(self) -> bytes:
        return b"k"

    def value(self) -> bytes:
        return self._value

    def headers(self) -> None:
        return None


def _manager(collector: GatedCollector, tmp_path: Any) -> tuple[TaskManager, RecordingConsumer]:
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_sink("sink", "output", "src", key_serde=Serdes.String(), value_serde=Serdes.String())
    builder = topology.internal_builder
    builder.application_id = "interleavings"
    consumer = RecordingConsumer(collector)
    manager = TaskManager(
        builder=builder,
        subtopologies={i.id: i for i in topology_info.sub_topologies(builder)},
        partition_counts={"input": 1, "output": 1},
        config=as_config({"application_id": "interleavings", "state_dir": str(tmp_path)}),
        consumer=consumer,
        collector=SharedRecordCollectors(collector),
        metrics=StreamsMetrics(),
        cache=None,
        wall_clock=lambda: 0,
        state_directory=None,
        changelog_reader=None,
    )
    manager.handle_assignment((), [T0], clean=True)
    return manager, consumer


def test_a_revocation_between_send_and_ack_commits_the_offset_only_after_the_acks(tmp_path):
    collector = GatedCollector()
    manager, consumer = _manager(collector, tmp_path)
    manager.add_records([Message(o, f"v{o}".encode()) for o in range(3)])
    assert manager.process(0) == 3
    assert len(collector.unacked) == 3  # sent, not acknowledged: a rebalance comes now
    manager.handle_assignment([T0], (), clean=True)
    assert collector.events == ["acks", "commit"]
    assert consumer.commits == [([("input", 0, 3)], 0)]  # nothing unacknowledged at the commit


def test_a_lost_task_commits_nothing_so_its_records_are_processed_again(tmp_path):
    collector = GatedCollector()
    manager, consumer = _manager(collector, tmp_path)
    manager.add_records([Message(o, b"v") for o in range(3)])
    manager.process(0)
    manager.handle_assignment([T0], (), clean=False)  # membership lost: dirty close
    assert consumer.commits == []


def test_a_record_whose_send_failed_is_never_covered_by_a_committed_offset(tmp_path):
    collector = GatedCollector(failing=b"bad")
    manager, consumer = _manager(collector, tmp_path)
    manager.add_records([Message(0, b"ok"), Message(1, b"bad"), Message(2, b"later")])
    with pytest.raises(ProductionError):
        manager.process(0)
    task = manager.tasks[T0]
    assert task.consumed_offsets == {("input", 0): 0}  # the failed record (offset 1) is not consumed
    manager.commit()  # even if something handled the error and a commit followed
    assert consumer.commits == [([("input", 0, 1)], 0)]  # the next owner starts at the failed record
