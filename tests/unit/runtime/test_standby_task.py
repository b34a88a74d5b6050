"""StandbyTask and the TaskManager's standby handling, broker-free: real RocksDB and in-memory
stores, a real StateDirectory, a changelog reader stand-in that records what it is asked."""

from __future__ import annotations

from typing import Any

import pytest

from streams_runtime.config import as_config
from streams_runtime.errors import StreamsError
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.shared_record_collectors import SharedRecordCollectors
from streams_runtime.processor.internals.standby_task import StandbyTask
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.task_manager import TaskManager
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import T0, ListCollector, changelog, make_task, state_topology

APP = "standby-app"
ROCKS = (changelog(APP, "rocks"), 0)
MEM = (changelog(APP, "mem"), 0)


@pytest.fixture
def state_directory(tmp_path):
    directory = StateDirectory(tmp_path, APP)
    yield directory
    directory.close()


def builders(topology: Any) -> dict[str, Any]:
    return {name: entry.builder for name, entry in topology.internal_builder.stores.items()}


def config(tmp_path: Any) -> Any:
    return as_config({"application_id": APP, "state_dir": str(tmp_path)})


def new_standby(state_directory: StateDirectory, tmp_path: Any) -> StandbyTask:
    standby = StandbyTask(
        T0,
        ["rocks", "mem"],
        builders(state_topology()),
        config(tmp_path),
        StreamsMetrics(),
        state_directory,
        lambda: 0,
    )
    assert state_directory.lock(T0)
    standby.initialize()
    return standby


def replay(standby: StandbyTask, tp: tuple[str, int], records: list[tuple[bytes, bytes]], last: int) -> None:
    """What the changelog reader does with one batch of a standby's changelog."""
    meta = standby.state_manager.changelog_metadata()[tp]
    meta.restore_callback(records, last)
    standby.state_manager.restored(tp, last)


def test_should_register_every_logged_store_without_running_processors(state_directory, tmp_path):
    standby = new_standby(state_directory, tmp_path)
    assert set(standby.state_manager.changelog_metadata()) == {ROCKS, MEM}
    assert set(standby.stores) == {"rocks", "mem"}
    with pytest.raises(StreamsError, match="runs no processors"):
        standby.schedule(None, 10, None, None)
    standby.close()


def test_should_make_replayed_records_readable_and_checkpoint_only_when_offsets_moved(
    state_directory, tmp_path
):
    standby = new_standby(state_directory, tmp_path)
    replay(standby, ROCKS, [(b"a", b"1"), (b"b", b"2")], 41)
    assert standby.stores["rocks"].get("a") == "1"
    assert standby.checkpoint() is True
    assert state_directory.read_checkpoint(T0) == {ROCKS: 41}
    assert state_directory.task_offset_sums() == {T0: 41}  # what the member reports: standby progress
    assert standby.checkpoint() is False  # nothing new replayed
    replay(standby, ROCKS, [(b"c", b"3")], 57)
    assert standby.checkpoint() is True
    assert state_directory.task_offset_sums() == {T0: 57}
    standby.close()


def test_should_let_the_next_active_task_resume_after_the_standby_checkpoint(state_directory, tmp_path):
    standby = new_standby(state_directory, tmp_path)
    replay(standby, ROCKS, [(b"k", b"v")], 99)
    standby.close()  # clean close: flush + checkpoint
    task, manager = make_task(state_directory, APP)  # same directory, lock still held by this instance
    assert manager.changelog_metadata()[ROCKS].offset == 99  # restore starts at 100: only the delta
    assert task.stores["rocks"].get("k") == "v"
    task.close()


class AckedCollector(ListCollector):
    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        pass


class FakeReader:
    def __init__(self) -> None:
        self.registered: list[tuple[TaskId, bool]] = []
        self.unregistered: list[TaskId] = []
        self.standby_records_last_step = 0

    def register(self, state_manager: Any, *, standby: bool = False) -> None:
        self.registered.append((state_manager.task_id, standby))

    def unregister(self, task_id: TaskId) -> None:
        self.unregistered.append(task_id)

    def restore(self, timeout_s: float = 0.0) -> set[TaskId]:
        return set()

    def standby_lags(self) -> dict:
        return {T0: {ROCKS: 3}}

    def restore_progress(self) -> dict:
        return {T0: (5, 10)}


def task_manager(state_directory: StateDirectory, tmp_path: Any, reader: FakeReader) -> TaskManager:
    topology = state_topology()
    builder = topology.internal_builder
    builder.application_id = APP
    infos = {i.id: i for i in topology_info.sub_topologies(builder)}
    return TaskManager(
        builder=builder,
        subtopologies=infos,
        partition_counts={"input": 1},
        config=config(tmp_path),
        consumer=None,
        collector=SharedRecordCollectors(AckedCollector()),
        metrics=StreamsMetrics(),
        cache=None,
        wall_clock=lambda: 0,
        state_directory=state_directory,
        changelog_reader=reader,
    )


def test_should_close_the_standby_before_the_active_task_opens_its_directory(state_directory, tmp_path):
    reader = FakeReader()
    manager = task_manager(state_directory, tmp_path, reader)
    manager.handle_assignment((), (), clean=True, assigned_standby={T0})
    assert set(manager.standby_tasks) == {T0} and reader.registered == [(T0, True)]
    assert manager.standby_stores(T0).keys() == {"rocks", "mem"}
    assert manager.standby_lags() == {T0: {ROCKS: 3}}
    replay(manager.standby_tasks[T0], ROCKS, [(b"x", b"1")], 7)
    manager.handle_assignment((), {T0}, clean=True, revoked_standby={T0})  # promoted on this thread
    assert manager.standby_tasks == {} and reader.unregistered == [T0]
    assert reader.registered[-1] == (T0, False)
    assert state_directory.read_checkpoint(T0) == {ROCKS: 7}
    assert manager.restore_progress() == {T0: (5, 10)}
    manager.close_all(clean=True)
    assert not state_directory.holds_lock(T0)


def test_should_wait_for_a_standby_lock_held_elsewhere_and_retry(state_directory, tmp_path):
    other = StateDirectory(tmp_path, APP)  # another owner (another process) holds the directory
    assert other.lock(T0)
    reader = FakeReader()
    manager = task_manager(state_directory, tmp_path, reader)
    manager.handle_assignment((), (), clean=True, assigned_standby={T0})
    assert manager.standby_tasks == {} and manager.has_standbys
    assert manager.restore(0.0) is False
    other.unlock(T0)
    assert manager.restore(0.0) is True
    assert set(manager.standby_tasks) == {T0}
    manager.handle_assignment((), (), clean=True, revoked_standby={T0})
    assert not manager.has_standbys and not state_directory.holds_lock(T0)
    other.close()


def test_should_hand_a_standby_over_to_an_active_task_of_another_thread(state_directory, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    standby_thread = ThreadPoolExecutor(1)  # the thread owning the standby (locks are per thread)
    standby_reader, active_reader = FakeReader(), FakeReader()
    standby_manager = task_manager(state_directory, tmp_path, standby_reader)
    active_manager = task_manager(state_directory, tmp_path, active_reader)

    def on_standby_thread(fn: Any) -> Any:
        return standby_thread.submit(fn).result(10)

    on_standby_thread(lambda: standby_manager.handle_assignment((), (), clean=True, assigned_standby={T0}))
    on_standby_thread(lambda: replay(standby_manager.standby_tasks[T0], ROCKS, [(b"x", b"1")], 11))
    active_manager.handle_assignment((), {T0}, clean=True)  # same generation, applied first here
    assert active_manager.is_restoring(T0) and T0 not in active_manager.tasks  # waits for the lock
    on_standby_thread(lambda: standby_manager.handle_assignment((), (), clean=True, revoked_standby={T0}))
    assert active_manager.restore(0.0) is True  # got the lock: created, restores from offset 11
    assert active_reader.registered == [(T0, False)]
    assert active_manager.changelog_offsets(T0) == {ROCKS: 11}
    active_manager.close_all(clean=True)
    standby_thread.shutdown()
