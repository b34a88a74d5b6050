"""The TaskManager's one commit path: whatever the processing guarantee, it flushes the tasks and
hands ``(task, offsets)`` to the producer side's ``commit_tasks``; what comes back decides what
happens to each task (committed, fenced and closed dirty, failed). Broker-free, with a producer
side that records the calls and answers as told."""

from __future__ import annotations

from typing import Any

import pytest

from streams_runtime import Serdes, Topology
from streams_runtime.config import as_config
from streams_runtime.errors import TaskMigratedError, TransactionError
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.abstract_task import State
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.task_manager import TaskManager
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.test_commit_interleavings import Message

T0, T1 = TaskId(0, 0), TaskId(0, 1)


class TaskCollector:
    def __init__(self, eos: bool) -> None:
        self.sent: list[Any] = []
        self.eos_enabled = eos
        self.in_transaction = False

    def send(self, topic: str, key: Any, value: Any, headers: tuple, timestamp: int, partition: Any) -> None:
        self.sent.append((topic, value))


class RecordingProducers:
    """A producer side: one collector per task, commits recorded, outcomes as configured."""

    def __init__(self, eos: bool) -> None:
        self.eos_enabled = eos
        self.collectors: dict[TaskId, TaskCollector] = {}
        self.commits: list[list[tuple[TaskId, list[tuple[str, int, int]]]]] = []
        self.released: list[tuple[TaskId, bool]] = []
        self.outcomes: dict[TaskId, Any] = {}

    def prepare(self, task_ids: Any) -> None:
        list(task_ids)

    def for_task(self, task_id: TaskId) -> TaskCollector:
        self.collectors[task_id] = TaskCollector(self.eos_enabled)
        return self.collectors[task_id]

    def release(self, task_id: TaskId, clean: bool) -> None:
        self.released.append((task_id, clean))

    def unconfirmed_tasks(self) -> set[Any]:
        return set()

    def confirm_commits(self, consumer: Any) -> set[Any]:
        return set()

    def in_transaction(self, task_id: TaskId) -> bool:
        return False

    def commit_tasks(self, commits: list, consumer: Any, task_timeout_ms: int) -> list[Any]:
        self.commits.append(
            [(t, [(o.topic, o.partition, o.offset) for o in offsets]) for t, offsets in commits]
        )
        return [self.outcomes.get(t, True) for t, _ in commits]


class Consumer:
    def __init__(self) -> None:
        self.assigned: set[tuple[str, int]] = set()

    def committed(self, tps: list[Any], timeout: float) -> list[Any]:
        return [TopicPartition(tp.topic, tp.partition, 0) for tp in tps]

    def incremental_assign(self, tps: list[Any]) -> None:
        self.assigned |= {(tp.topic, tp.partition) for tp in tps}

    def incremental_unassign(self, tps: list[Any]) -> None:
        self.assigned -= {(tp.topic, tp.partition) for tp in tps}


def manager(tmp_path: Any, producers: RecordingProducers) -> tuple[TaskManager, Consumer]:
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_sink("sink", "output", "src", key_serde=Serdes.String(), value_serde=Serdes.String())
    builder = topology.internal_builder
    builder.application_id = "path"
    consumer = Consumer()
    tm = TaskManager(
        builder=builder,
        subtopologies={i.id: i for i in topology_info.sub_topologies(builder)},
        partition_counts={"input": 2, "output": 2},
        config=as_config({"application_id": "path", "state_dir": str(tmp_path)}),
        consumer=consumer,
        collector=producers,
        metrics=StreamsMetrics(),
        cache=None,
        wall_clock=lambda: 0,
        state_directory=None,
        changelog_reader=None,
    )
    tm.handle_assignment((), [T0], clean=True)
    return tm, consumer


@pytest.mark.parametrize("eos", [False, True])
def test_every_guarantee_commits_through_the_producer_side_with_each_tasks_own_collector(tmp_path, eos):
    producers = RecordingProducers(eos)
    tm, consumer = manager(tmp_path, producers)
    task = tm.tasks[T0]
    assert task.state is State.RUNNING and consumer.assigned == {("input", 0)}
    assert task.collector is producers.collectors[T0]
    tm.add_records([Message(o, f"v{o}".encode()) for o in range(3)])
    assert tm.process(0) == 3
    assert [v for _, v in producers.collectors[T0].sent] == [b"v0", b"v1", b"v2"]
    assert tm.commit() == 1  # one input partition offset committed
    assert producers.commits == [[(T0, [("input", 0, 3)])]]
    assert tm.commit() == 0  # nothing new: the task is still asked, with no offsets
    assert producers.commits[-1] == [(T0, [])]
    tm.close_all(clean=True)
    assert producers.released == [(T0, True)] and consumer.assigned == set()


def test_a_fenced_task_is_closed_dirty_and_created_again_by_the_next_assignment(tmp_path):
    producers = RecordingProducers(eos=True)
    tm, consumer = manager(tmp_path, producers)
    rejoins: list[int] = []
    tm.on_task_migrated = lambda: rejoins.append(1)
    tm.add_records([Message(0, b"v")])
    tm.process(0)
    producers.outcomes[T0] = TaskMigratedError([T0], "fenced")
    assert tm.commit() == 0
    assert T0 not in tm.tasks and rejoins == [1]
    assert producers.released == [(T0, False)] and consumer.assigned == set()
    producers.outcomes.clear()
    tm.handle_assignment((), (), clean=True)  # the rebalance kept T0 here
    assert tm.tasks[T0].state is State.RUNNING and consumer.assigned == {("input", 0)}


def test_another_commit_failure_is_raised_after_every_task_was_tried(tmp_path):
    producers = RecordingProducers(eos=True)
    tm, _ = manager(tmp_path, producers)
    tm.handle_assignment((), [T1], clean=True)
    producers.outcomes[T0] = TransactionError("broker said no")
    with pytest.raises(TransactionError, match="broker said no"):
        tm.commit()
    assert [t for t, _ in producers.commits[0]] == [T0, T1]  # T1 was still committed
    assert set(tm.tasks) == {T0, T1}  # a failed commit fails the thread; it closes nothing itself
