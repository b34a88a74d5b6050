"""ProcessorStateManager without a broker: registration through the task context, offsets,
the checkpoint protocol and wiping a task's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_runtime.errors import ProcessorStateError
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.state_manager import ProcessorStateManager
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import changelog, contents, make_task

APP = "app"
T0 = TaskId(0, 0)
ROCKS, MEM = (changelog(APP, "rocks"), 0), (changelog(APP, "mem"), 0)


@pytest.fixture
def state_dir(tmp_path: Path) -> StateDirectory:
    sd = StateDirectory(tmp_path, APP)
    assert sd.lock(T0)
    yield sd
    sd.close()


def test_should_register_stores_through_the_task_context(state_dir: StateDirectory) -> None:
    task, manager = make_task(state_dir, APP)
    try:
        assert manager.changelog_partitions() == {ROCKS: task.stores["rocks"], MEM: task.stores["mem"]}
        assert manager.stores() == [task.stores["rocks"], task.stores["mem"]]
        assert manager.checkpointed_offsets() == {}  # nothing restored or written yet
        assert set(task.context.registered) == {"rocks", "mem"}  # still recorded for the driver
    finally:
        task.close()


def test_should_use_the_changelog_partition_of_the_task(state_dir: StateDirectory) -> None:
    task_id = TaskId(0, 3)
    assert state_dir.lock(task_id)
    task, manager = make_task(state_dir, APP, task_id)
    try:
        assert set(manager.changelog_partitions()) == {(ROCKS[0], 3), (MEM[0], 3)}
    finally:
        task.close()


def test_should_checkpoint_persistent_stores_only_and_reload_the_offset_kept_with_the_data(
    state_dir: StateDirectory,
) -> None:
    task, manager = make_task(state_dir, APP)
    task.stores["rocks"].put("a", "1")
    manager.update_changelog_offsets({ROCKS: 41, MEM: 17, ("someone-elses-changelog", 0): 5})
    manager.update_changelog_offsets({ROCKS: 40})  # offsets never move back
    manager.flush()
    manager.checkpoint()
    assert state_dir.read_checkpoint(T0) == {ROCKS: 41}
    assert task.stores["rocks"].inner().committed_offset() == 41
    task.close()
    manager.close()
    state_dir.delete_checkpoint(T0)  # the store's own offset is what counts for RocksDB
    task, manager = make_task(state_dir, APP)
    try:
        assert manager.checkpointed_offsets() == {ROCKS: 41}  # the in-memory store starts over
        assert contents(task.stores["rocks"]) == {"a": "1"}
    finally:
        task.close()


def test_should_refuse_two_stores_with_one_name(state_dir: StateDirectory) -> None:
    task, manager = make_task(state_dir, APP)
    try:
        other = type("Store", (), {"name": "rocks"})()
        with pytest.raises(ProcessorStateError, match="already registered"):
            manager.register(other, lambda records, offset: None, "x")
    finally:
        task.close()


def test_should_wipe_the_state_and_reopen_the_same_store_objects(state_dir: StateDirectory) -> None:
    task, manager = make_task(state_dir, APP)
    rocks, mem = task.stores["rocks"], task.stores["mem"]
    try:
        rocks.put("a", "1")
        mem.put("b", "2")
        manager.update_changelog_offsets({ROCKS: 9})
        manager.checkpoint()
        manager.wipe_state()
        assert task.stores["rocks"] is rocks and rocks.is_open()
        assert contents(rocks) == {} and contents(mem) == {}
        assert manager.checkpointed_offsets() == {}
        assert state_dir.read_checkpoint(T0) == {}
        assert state_dir.holds_lock(T0)
        rocks.put("c", "3")  # usable after the wipe
        assert contents(rocks) == {"c": "3"}
    finally:
        task.close()


def test_should_refuse_to_wipe_without_a_bound_context(state_dir: StateDirectory) -> None:
    with pytest.raises(ProcessorStateError, match="without a bound context"):
        ProcessorStateManager(T0, state_dir).wipe_state()


def test_should_leave_the_checkpoint_file_until_the_offsets_moved_past_min_delta(
    state_dir: StateDirectory,
) -> None:
    task, manager = make_task(state_dir, APP)
    try:
        manager.update_changelog_offsets({ROCKS: 10})
        manager.checkpoint(min_delta=100)  # no file written by this manager yet: written
        assert state_dir.read_checkpoint(T0) == {ROCKS: 10}
        manager.update_changelog_offsets({ROCKS: 110})
        manager.checkpoint(min_delta=100)  # moved by 100: the file stays
        assert state_dir.read_checkpoint(T0) == {ROCKS: 10}
        assert task.stores["rocks"].inner().committed_offset() == 110  # the store's own offset moves
        manager.update_changelog_offsets({ROCKS: 111})
        manager.checkpoint(min_delta=100)  # moved by 101
        assert state_dir.read_checkpoint(T0) == {ROCKS: 111}
        manager.update_changelog_offsets({ROCKS: 112})
        manager.checkpoint()  # no min_delta: whenever the offsets moved
        assert state_dir.read_checkpoint(T0) == {ROCKS: 112}
    finally:
        task.close()
