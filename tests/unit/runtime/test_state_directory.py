"""StateDirectory: task directories, locks across threads/instances/processes, checkpoints, clean-up."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from streams_runtime.errors import ProcessorStateError
from streams_runtime.processor.internals.state_directory import CHECKPOINT_FILE, LOCK_FILE, StateDirectory
from streams_runtime.processor.task_id import TaskId

T0, T1, T2 = TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)

_LOCK_IN_CHILD = """
import sys
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
sd = StateDirectory(sys.argv[1], "app")
print("locked" if sd.lock(TaskId.parse(sys.argv[2])) else "refused", flush=True)
"""


def lock_in_other_process(root: Path, task: TaskId) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _LOCK_IN_CHILD, str(root), str(task)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def state_dir(tmp_path: Path) -> StateDirectory:
    sd = StateDirectory(tmp_path, "app")
    yield sd
    sd.close()


def test_should_create_task_directories_under_the_application_directory(
    tmp_path: Path, state_dir: StateDirectory
) -> None:
    assert state_dir.task_dir(T1) == tmp_path / "app" / "0_1"
    assert (tmp_path / "app" / "0_1").is_dir()
    (tmp_path / "app" / "not-a-task").mkdir()
    assert state_dir.task_ids_on_disk() == [T1]


def test_should_refuse_a_second_lock_from_another_process_while_held(
    tmp_path: Path, state_dir: StateDirectory
) -> None:
    assert state_dir.lock(T0)
    assert lock_in_other_process(tmp_path, T0) == "refused"
    assert lock_in_other_process(tmp_path, T1) == "locked"  # other tasks are free
    state_dir.unlock(T0)
    assert lock_in_other_process(tmp_path, T0) == "locked"  # released (the child's lock died with it)


def test_should_refuse_a_lock_held_by_another_process(tmp_path: Path, state_dir: StateDirectory) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _LOCK_IN_CHILD + "sys.stdin.read()\n", str(tmp_path), str(T0)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "locked"
        assert not state_dir.lock(T0)
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert state_dir.lock(T0)


def test_should_refuse_a_lock_held_by_another_instance_or_thread_of_this_process(
    tmp_path: Path, state_dir: StateDirectory
) -> None:
    assert state_dir.lock(T0)
    assert state_dir.lock(T0)  # re-entrant for the owning thread
    other_instance = StateDirectory(tmp_path, "app")
    assert not other_instance.lock(T0)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(state_dir.lock(T0)))
    thread.start()
    thread.join()
    assert seen == [False]
    state_dir.unlock(T0)
    assert other_instance.lock(T0)
    other_instance.close()


def test_should_round_trip_checkpoints_atomically(state_dir: StateDirectory) -> None:
    assert state_dir.read_checkpoint(T0) == {}
    offsets = {("app-counts-changelog", 0): 41, ("app-other-changelog", 0): 7}
    state_dir.write_checkpoint(T0, offsets)
    assert state_dir.read_checkpoint(T0) == offsets
    path = state_dir.checkpoint_path(T0)
    assert json.loads(path.read_text()) == {"app-counts-changelog:0": 41, "app-other-changelog:0": 7}
    assert sorted(p.name for p in path.parent.iterdir()) == [CHECKPOINT_FILE]  # no temporary left
    state_dir.write_checkpoint(T0, {("app-counts-changelog", 0): 50})
    assert state_dir.read_checkpoint(T0) == {("app-counts-changelog", 0): 50}
    path.write_text("{torn")
    assert state_dir.read_checkpoint(T0) == {}  # unreadable: restore fully rather than fail


def test_should_sum_checkpointed_offsets_per_task_for_the_assignor(state_dir: StateDirectory) -> None:
    state_dir.write_checkpoint(T0, {("a-changelog", 0): 10, ("b-changelog", 0): 5})
    state_dir.write_checkpoint(T2, {("a-changelog", 0): 3})
    state_dir.task_dir(T1)  # a directory without checkpoint: no usable state
    assert state_dir.task_offset_sums() == {T0: 15, T2: 3}


def test_should_clean_up_every_task_not_locked_by_someone_else(
    tmp_path: Path, state_dir: StateDirectory
) -> None:
    for task in (T0, T1, T2):
        state_dir.write_checkpoint(task, {("c", task.partition): 1})
        (state_dir.task_dir(task) / "rocks").mkdir()
    assert state_dir.lock(T1)  # in use by a task of this instance
    other = StateDirectory(tmp_path, "app")
    assert other.lock(T2)  # in use by another instance
    assert state_dir.clean_up() == [T0]
    assert state_dir.task_ids_on_disk() == [T1, T2]
    assert state_dir.holds_lock(T1)
    state_dir.unlock(T1)
    other.close()
    assert state_dir.clean_up() == [T1, T2]
    assert not (tmp_path / "app").exists()


def test_should_wipe_a_task_but_keep_its_lock(state_dir: StateDirectory) -> None:
    state_dir.write_checkpoint(T0, {("c", 0): 9})
    (state_dir.task_dir(T0) / "rocks").mkdir()
    with pytest.raises(ProcessorStateError, match="lock is not held"):
        state_dir.wipe_task(T0)
    assert state_dir.lock(T0)
    state_dir.wipe_task(T0)
    assert [p.name for p in state_dir.task_dir(T0).iterdir()] == [LOCK_FILE]
    assert state_dir.holds_lock(T0)
    assert state_dir.read_checkpoint(T0) == {}


def test_should_fsync_a_checkpoint_once_and_not_again_while_it_is_unchanged(
    state_dir: StateDirectory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streams_runtime.processor.internals.state_directory as module

    synced: list[int] = []
    real_fsync = module.os.fsync
    monkeypatch.setattr(module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    offsets = {("app-store-changelog", 0): 41}
    state_dir.write_checkpoint(T0, offsets)
    state_dir.write_checkpoint(T0, dict(offsets))  # the same offsets: nothing written
    assert len(synced) == 1
    state_dir.write_checkpoint(T0, {("app-store-changelog", 0): 42})
    assert len(synced) == 2 and state_dir.read_checkpoint(T0) == {("app-store-changelog", 0): 42}
    state_dir.checkpoint_path(T0).unlink()  # gone (e.g. removed by hand): written again
    state_dir.write_checkpoint(T0, {("app-store-changelog", 0): 42})
    assert len(synced) == 3 and state_dir.read_checkpoint(T0) == {("app-store-changelog", 0): 42}
    state_dir.delete_checkpoint(T0)
    state_dir.write_checkpoint(T0, {("app-store-changelog", 0): 42})
    assert len(synced) == 4 and state_dir.read_checkpoint(T0) == {("app-store-changelog", 0): 42}
