"""StateDirectory: the on-disk home of every task's state, its locks and its checkpoints.

Owner: one KafkaStreams instance (process side); shared by its stream threads, used by the
TaskManager (lock, task directories, offset sums for the assignor, clean-up) and by each
task's ProcessorStateManager (checkpoint files, wipe on a fresh broker).

Layout::

    <state_dir>/<application_id>/            the application directory
        <task_id>/                           one per task ("0_3"), created on first use
            .lock                            fcntl lock: whoever holds it owns the task's state
            .checkpoint                      JSON {"<changelog-topic>:<partition>": offset}
            .eos-dirty                       opened under exactly-once, not closed cleanly yet
            <store name>/                    a persistent store's files (RocksDB)

Invariants:

* A task directory's state is used by at most one owner at a time: :meth:`lock` takes an
  exclusive, non-blocking ``flock`` on ``<task_dir>/.lock``. ``flock`` locks belong to an open
  file description, so the lock excludes other processes AND other StateDirectory instances of
  this process; inside one instance the owning thread is recorded and another thread is refused.
* A checkpoint file is replaced atomically (write a temporary file, fsync, ``os.replace``), so a
  reader (the assignor's offset sums, a restarting task) sees the old or the new file, never a
  torn one. A checkpoint equal to the one this instance last wrote for the task, still on disk,
  is not written again: a commit costs at most one fsync per task, none for a task whose
  offsets did not move. The offsets in it are the LAST changelog offset reflected by the store (restore
  resumes at ``offset + 1``), as in Kafka Streams.
* :meth:`clean_up` and :meth:`wipe_task` never delete a task directory locked by someone else.
* Exactly-once: local state is never ahead of the committed offsets after a crash. A task opened
  under exactly_once_v2 writes ``.eos-dirty`` (:meth:`mark_eos_dirty`) before its stores open and
  removes it only after a clean close wrote its checkpoint (:meth:`clear_eos_dirty`); a directory
  still marked when a task or standby opens it next is wiped (:meth:`wipe_if_eos_dirty`) and its
  stores restore from the (read_committed) changelog. Marked directories report no offset sum.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import pathlib
import shutil
import threading
from collections.abc import Mapping

from streams_runtime.errors import ProcessorStateError
from streams_runtime.processor.task_id import TaskId

__all__ = ["CHECKPOINT_FILE", "EOS_DIRTY_FILE", "LOCK_FILE", "StateDirectory"]

log = logging.getLogger("streams_runtime.state")

LOCK_FILE = ".lock"
CHECKPOINT_FILE = ".checkpoint"
EOS_DIRTY_FILE = ".eos-dirty"

ChangelogPartition = tuple[str, int]


class StateDirectory:
    """The state directory of one application on this machine; see the module docstring.

    :param state_dir: the configured ``state_dir`` root.
    :param application_id: the application; its directory is ``<state_dir>/<application_id>``.
    """

    def __init__(self, state_dir: str | os.PathLike[str], application_id: str) -> None:
        self.app_dir = pathlib.Path(state_dir) / application_id
        self._guard = threading.Lock()
        self._held: dict[str, tuple[int, int]] = {}  # task dir name -> (fd, owner thread ident)
        # task dir name -> the checkpoint payload this instance last wrote there (each task's
        # entry is used by the one thread holding its lock)
        self._written: dict[str, str] = {}

    # ------------------------------------------------------------------ directories
    def task_dir(self, task_id: object) -> pathlib.Path:
        """``<app_dir>/<task_id>``, created when missing."""
        path = self.app_dir / str(task_id)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ProcessorStateError(f"cannot create the state directory {path}: {exc}") from exc
        return path

    def task_ids_on_disk(self) -> list[TaskId]:
        """The tasks that have a directory under the application directory."""
        if not self.app_dir.is_dir():
            return []
        found = []
        for entry in sorted(self.app_dir.iterdir()):
            task = _parse_task_id(entry)
            if task is not None:
                found.append(task)
        return found

    # ------------------------------------------------------------------ locks
    def lock(self, task_id: object) -> bool:
        """Try to take the task's lock without blocking.

        :returns: ``True`` when this instance now holds it (re-entrant for the owning thread);
            ``False`` when another thread of this instance, another instance or another process
            holds it.
        """
        name = str(task_id)
        me = threading.get_ident()
        with self._guard:
            held = self._held.get(name)
            if held is not None:
                return held[1] == me
            path = self.task_dir(name) / LOCK_FILE
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
            self._held[name] = (fd, me)
            return True

    def unlock(self, task_id: object) -> None:
        """Release the task's lock if this instance holds it (from any of its threads)."""
        with self._guard:
            held = self._held.pop(str(task_id), None)
        if held is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(held[0], fcntl.LOCK_UN)
            os.close(held[0])

    def holds_lock(self, task_id: object) -> bool:
        """Whether this instance holds the task's lock."""
        with self._guard:
            return str(task_id) in self._held

    def close(self) -> None:
        """Release every lock this instance holds."""
        with self._guard:
            names = list(self._held)
        for name in names:
            self.unlock(name)

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_path(self, task_id: object) -> pathlib.Path:
        return self.app_dir / str(task_id) / CHECKPOINT_FILE

    def read_checkpoint(self, task_id: object) -> dict[ChangelogPartition, int]:
        """The task's checkpointed offsets; empty when there is no (readable) checkpoint."""
        path = self.checkpoint_path(task_id)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable checkpoint file %s (%s); the task restores fully", path, exc)
            return {}
        offsets: dict[ChangelogPartition, int] = {}
        for key, offset in raw.items():
            topic, _, partition = key.rpartition(":")
            offsets[(topic, int(partition))] = int(offset)
        return offsets

    def write_checkpoint(self, task_id: object, offsets: Mapping[ChangelogPartition, int]) -> None:
        """Replace the task's checkpoint file atomically with ``offsets``; a no-op when the file
        this instance last wrote for the task holds the same offsets and is still there."""
        name = str(task_id)
        payload = json.dumps({f"{t}:{p}": int(o) for (t, p), o in sorted(offsets.items())})
        if self._written.get(name) == payload and os.path.exists(self.checkpoint_path(name)):
            return
        path = self.task_dir(name) / CHECKPOINT_FILE
        tmp = path.with_name(CHECKPOINT_FILE + ".tmp")
        self._written.pop(name, None)  # set again once the new file is in place
        try:
            with open(tmp, "w", encoding="utf-8") as out:
                out.write(payload)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise ProcessorStateError(f"cannot write the checkpoint file {path}: {exc}") from exc
        self._written[name] = payload

    # ------------------------------------------------------------------ exactly-once dirty marker
    def mark_eos_dirty(self, task_id: object) -> None:
        """Record that the task's state is being changed under exactly-once (see the module
        docstring); durable before the caller opens the stores."""
        path = self.task_dir(task_id) / EOS_DIRTY_FILE
        try:
            with open(path, "w", encoding="utf-8") as out:
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            raise ProcessorStateError(f"cannot write the exactly-once marker {path}: {exc}") from exc

    def clear_eos_dirty(self, task_id: object) -> None:
        """The task closed cleanly: its stores and checkpoint match its committed offsets."""
        with contextlib.suppress(FileNotFoundError):
            (self.app_dir / str(task_id) / EOS_DIRTY_FILE).unlink()

    def is_eos_dirty(self, task_id: object) -> bool:
        return (self.app_dir / str(task_id) / EOS_DIRTY_FILE).exists()

    def wipe_if_eos_dirty(self, task_id: object) -> bool:
        """Wipe the task's state if an exactly-once owner did not close it cleanly (its stores may
        hold writes of an aborted transaction); the caller holds the lock. True when wiped."""
        if not self.is_eos_dirty(task_id):
            return False
        log.warning(
            "task %s: its state was opened under exactly-once and not closed cleanly; wiping it "
            "(it restores from the changelog, so no uncommitted write survives)",
            task_id,
        )
        self.wipe_task(task_id)
        return True

    def delete_checkpoint(self, task_id: object) -> None:
        self._written.pop(str(task_id), None)
        with contextlib.suppress(FileNotFoundError):
            self.checkpoint_path(task_id).unlink()

    def task_offset_sums(self) -> dict[TaskId, int]:
        """Per task directory on disk, the sum of its checkpointed changelog offsets.

        What a member reports in ``SubscriptionInfo.task_offset_sums`` for tasks it does not run
        as active (the caller overrides running active tasks with ``LATEST_OFFSET``). Tasks
        without a checkpoint are left out: the member has no usable state for them.
        """
        sums: dict[TaskId, int] = {}
        for task in self.task_ids_on_disk():
            if self.is_eos_dirty(task):  # wiped at its next open: no usable state
                continue
            offsets = self.read_checkpoint(task)
            if offsets:
                sums[task] = sum(max(0, o) for o in offsets.values())
        return sums

    # ------------------------------------------------------------------ deleting state
    def wipe_task(self, task_id: object) -> None:
        """Delete the task's state (stores, checkpoint), keeping the directory and its lock file.

        The caller must hold the task's lock and have closed the task's stores.

        :raises ProcessorStateError: when this instance does not hold the lock.
        """
        if not self.holds_lock(task_id):
            raise ProcessorStateError(f"cannot wipe the state of task {task_id}: its lock is not held")
        self._written.pop(str(task_id), None)
        directory = self.app_dir / str(task_id)
        for entry in directory.iterdir():
            if entry.name != LOCK_FILE:
                _remove(entry)

    def clean_up(self) -> list[TaskId]:
        """Delete the state of every task whose lock can be taken (Kafka Streams' ``cleanUp``).

        Directories locked by anyone, this instance included (a task of this instance is using
        them), are left alone (logged). The application directory is removed when empty.

        :returns: the tasks whose state was deleted.
        """
        deleted = []
        for task in self.task_ids_on_disk():
            if self.holds_lock(task) or not self.lock(task):
                log.warning("clean_up: state of task %s is locked by another owner; left in place", task)
                continue
            try:
                self._written.pop(str(task), None)
                shutil.rmtree(self.app_dir / str(task), ignore_errors=True)
                deleted.append(task)
            finally:
                self.unlock(task)
        with contextlib.suppress(OSError):
            self.app_dir.rmdir()
        return deleted


def _parse_task_id(entry: pathlib.Path) -> TaskId | None:
    if not entry.is_dir():
        return None
    try:
        return TaskId.parse(entry.name)
    except ValueError:
        return None


def _remove(entry: pathlib.Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink(missing_ok=True)
