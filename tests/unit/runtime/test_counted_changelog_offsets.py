"""Under at-least-once the producer reports errors only, so a task counts the changelog offsets
it writes: the offset its store reflected when it began running, plus the records it sent since,
minus the ones the producer failed. The checkpoint written after a commit must equal the real
last offset when the task is the partition's only writer, and never be above it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streams_runtime import Materialized, StreamsBuilder
from streams_runtime.config import as_config
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.state_manager import ProcessorStateManager
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import TaskId

APP = "counted"
T0 = TaskId(0, 3)
CHANGELOG = (f"{APP}-counts-changelog", 3)


class LogCollector:
    """Numbers what it is sent per partition as a one-writer log would, and can fail changelog
    records."""

    eos_enabled = False

    def __init__(self, start: int = 0) -> None:
        self.next_offset: dict[tuple[str, int], int] = {}
        self.start = start
        self.fail_next = 0
        self.failed_changelog: dict[tuple[str, int], int] = {}

    def send(self, topic: str, key: Any, value: Any, headers: Any, timestamp: int, partition: Any) -> None:
        tp = (topic, partition)
        if self.fail_next and topic.endswith("-changelog"):  # a failure (skipped under `continue`)
            self.fail_next -= 1
            self.failed_changelog[tp] = self.failed_changelog.get(tp, 0) + 1
            return
        self.next_offset[tp] = self.next_offset.get(tp, self.start) + 1

    def last_offset(self, tp: tuple[str, int]) -> int:
        return self.next_offset[tp] - 1

    def take_failed_changelog(self, partitions: Any) -> dict[tuple[str, int], int]:
        return {tp: self.failed_changelog.pop(tp) for tp in partitions if tp in self.failed_changelog}


@pytest.fixture
def state_dir(tmp_path: Path) -> Any:
    sd = StateDirectory(tmp_path, APP)
    assert sd.lock(T0)
    yield sd
    sd.close()


def counting_task(
    state_dir: StateDirectory, collector: LogCollector
) -> tuple[StreamTask, ProcessorStateManager]:
    builder = StreamsBuilder()
    builder.stream("in").group_by_key().count(
        materialized=Materialized.as_("counts").with_caching_disabled()
    ).to_stream().to("out")
    built = builder.build({"application_id": APP}).internal_builder
    nodes = [name for names in built.node_groups().values() for name in names]
    config = as_config(
        {
            "application_id": APP,
            "state_dir": str(state_dir.app_dir.parent),
            "default_key_serde": "string",
            "default_value_serde": "string",
        }
    )
    task = StreamTask(
        T0,
        build_processor_topology(built, nodes),
        {name: entry.builder for name, entry in built.stores.items()},
        config,
        collector,
        StreamsMetrics(),
        None,
        lambda: 0,
        state_dir.task_dir(T0),
    )
    manager = ProcessorStateManager(T0, state_dir)
    task.context.set_state_manager(manager)
    task.initialize()
    task.state_manager = manager
    return task, manager


def process(task: StreamTask, keys: str, first: int = 0) -> None:
    queue = task.partition_group.queue_for("in", 3)
    queue.add_batch(
        [RawRecord("in", 3, first + i, 100 + i, k.encode(), b"v", ()) for i, k in enumerate(keys)]
    )
    task.process_all()


def commit(task: StreamTask) -> None:
    task.commit()
    task.post_commit()


def test_should_checkpoint_the_offset_of_the_last_changelog_record_written(state_dir: Any) -> None:
    collector = LogCollector()
    task, manager = counting_task(state_dir, collector)
    task.complete_restoration()  # nothing restored: an empty changelog
    process(task, "abcab")
    commit(task)
    assert collector.last_offset(CHANGELOG) == 4
    assert manager.checkpointed_offsets() == {CHANGELOG: 4}
    assert state_dir.read_checkpoint(T0) == {CHANGELOG: 4}
    process(task, "cc", first=5)
    commit(task)
    assert manager.checkpointed_offsets() == {CHANGELOG: 6} == {CHANGELOG: collector.last_offset(CHANGELOG)}
    task.close()


def test_should_count_from_the_offset_restored_when_the_task_began_running(state_dir: Any) -> None:
    collector = LogCollector(start=42)  # the changelog already holds offsets 0-41
    task, manager = counting_task(state_dir, collector)
    manager.restored(CHANGELOG, 41)
    task.complete_restoration()
    process(task, "xyz")
    commit(task)
    assert manager.checkpointed_offsets() == {CHANGELOG: 44} == {CHANGELOG: collector.last_offset(CHANGELOG)}
    task.close()


def test_should_leave_failed_changelog_records_out_of_the_count(state_dir: Any) -> None:
    collector = LogCollector()
    task, manager = counting_task(state_dir, collector)
    task.complete_restoration()
    process(task, "ab")
    collector.fail_next = 2
    process(task, "cd", first=2)
    process(task, "e", first=4)
    commit(task)
    assert collector.last_offset(CHANGELOG) == 2
    assert manager.checkpointed_offsets() == {CHANGELOG: 2}
    process(task, "f", first=5)
    commit(task)  # the failures stay subtracted in later commits
    assert manager.checkpointed_offsets() == {CHANGELOG: 3} == {CHANGELOG: collector.last_offset(CHANGELOG)}
    task.close()


def test_should_stay_below_the_truth_when_another_writer_wrote_the_partition(state_dir: Any) -> None:
    collector = LogCollector()
    task, manager = counting_task(state_dir, collector)
    task.complete_restoration()
    process(task, "ab")
    collector.next_offset[CHANGELOG] += 5  # a zombie's records land in between
    process(task, "c", first=2)
    commit(task)
    assert collector.last_offset(CHANGELOG) == 7
    assert manager.checkpointed_offsets()[CHANGELOG] == 2  # lower: a restore replays a little more
    task.close()


class RecordingSupplier:
    """A client supplier that keeps the producer configs it is asked for."""

    def __init__(self) -> None:
        self.configs: list[dict[str, Any]] = []

    def get_producer(self, bootstrap_servers: str, overrides: Any = None) -> Any:
        self.configs.append(dict(overrides or {}))
        return object()


def test_should_ask_for_error_reports_only_under_at_least_once_even_with_changelogs() -> None:
    from streams_runtime.processor.internals.record_collector import ProducerSettings, RecordCollector

    supplier = RecordingSupplier()
    RecordCollector(ProducerSettings("b:9092", "c", {}, frozenset([CHANGELOG[0]]), client_supplier=supplier))  # type: ignore[arg-type]
    assert supplier.configs[0]["delivery.report.only.error"] is True


class TransactionalLogCollector(LogCollector):
    """A one-writer log under exactly-once: each committed transaction ends with one marker on
    every partition it wrote, and the marker takes an offset (as on Kafka)."""

    eos_enabled = True

    def __init__(self, start: int = 0) -> None:
        super().__init__(start)
        self.written: set[tuple[str, int]] = set()
        self.last_record: dict[tuple[str, int], int] = {}

    def send(self, topic: str, key: Any, value: Any, headers: Any, timestamp: int, partition: Any) -> None:
        super().send(topic, key, value, headers, timestamp, partition)
        self.written.add((topic, partition))
        self.last_record[(topic, partition)] = self.next_offset[(topic, partition)] - 1

    def commit_transaction(self) -> None:
        for tp in self.written:
            self.next_offset[tp] += 1  # the commit marker
        self.written.clear()


def eos_commit(task: StreamTask, collector: TransactionalLogCollector, *, post_commit: bool = True) -> None:
    task.commit()
    collector.commit_transaction()
    if post_commit:
        task.post_commit()


def test_should_count_one_marker_per_committed_transaction_under_exactly_once(state_dir: Any) -> None:
    collector = TransactionalLogCollector()
    task, manager = counting_task(state_dir, collector)
    task.complete_restoration()
    process(task, "abcab")  # offsets 0-4, then the marker at 5
    eos_commit(task, collector)
    assert manager.checkpointed_offsets() == {CHANGELOG: 4} == {CHANGELOG: collector.last_record[CHANGELOG]}
    process(task, "cc", first=5)  # 6-7, marker 8
    eos_commit(task, collector)
    assert manager.checkpointed_offsets() == {CHANGELOG: 7} == {CHANGELOG: collector.last_record[CHANGELOG]}
    eos_commit(task, collector)  # nothing written: no transaction, no marker
    process(task, "d", first=7)  # 9, marker 10
    eos_commit(task, collector)
    assert manager.checkpointed_offsets() == {CHANGELOG: 9} == {CHANGELOG: collector.last_record[CHANGELOG]}
    # under exactly-once only a clean close writes the checkpoint file
    assert not state_dir.read_checkpoint(T0)
    task.close()


def test_should_stay_below_the_truth_when_a_commit_was_not_followed_by_post_commit(state_dir: Any) -> None:
    collector = TransactionalLogCollector()
    task, manager = counting_task(state_dir, collector)
    task.complete_restoration()
    process(task, "ab")
    eos_commit(task, collector, post_commit=False)  # its marker is never counted
    process(task, "c", first=2)
    eos_commit(task, collector)
    assert collector.last_record[CHANGELOG] == 3
    assert manager.checkpointed_offsets()[CHANGELOG] == 2  # lower: a restore replays a little more
    task.close()
