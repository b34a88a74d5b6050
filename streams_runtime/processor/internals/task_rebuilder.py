"""TaskRebuilder: the stream thread's part of a state rebuild (steps 1-4 of :mod:`.state_rebuild`).

Owned by a TaskManager, which delegates ``rebuild_task`` / ``rebuild_report`` to it and tells it
when a task finished restoring (:meth:`TaskRebuilder.on_restored`). Everything here runs on the
stream thread (``StreamThread.submit``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.kafka.offsets import committed_offsets_of
from streams_runtime.processor.internals.state_rebuild import snapshot_restored_store
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:  # types only
    from streams_runtime.kafka.client_supplier import ConsumerClient
    from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
    from streams_runtime.processor.internals.state_directory import StateDirectory
    from streams_runtime.processor.internals.task import StreamTask

__all__ = ["RebuiltTasks", "TaskRebuilder"]


class RebuiltTasks(Protocol):
    """What a rebuild asks of the TaskManager that owns it (the manager implements it; the
    rebuilder never imports the manager's module)."""

    @property
    def tasks(self) -> Mapping[TaskId, Any]: ...

    def owns(self, task_id: TaskId) -> bool: ...

    def partitions_of(self, task_id: TaskId) -> list[tuple[str, int]]: ...

    def handle_assignment(
        self, revoked: Iterable[TaskId], assigned: Iterable[TaskId], *, clean: bool
    ) -> None: ...


@dataclass(eq=False, slots=True)
class TaskRebuilder:
    """See the module docstring.

    :param manager: the TaskManager (``tasks``, ``owns``, ``partitions_of``, ``handle_assignment``).
    :param consumer: the thread's consumer (the committed input offsets are reported).
    :param state_directory: the client's StateDirectory.
    :param changelog_reader: the thread's StoreChangelogReader (``restored_count``).
    """

    manager: RebuiltTasks
    consumer: ConsumerClient
    state_directory: StateDirectory
    changelog_reader: StoreChangelogReader | None
    #: task -> store whose rebuild it restores
    _rebuilding: dict[TaskId, str] = field(default_factory=dict, init=False)
    #: task -> snapshot taken when restored
    _rebuilt: dict[TaskId, dict[str, Any]] = field(default_factory=dict, init=False)

    def rebuild_task(self, task_id: TaskId, store_name: str) -> dict[str, int]:
        """Close ``task_id`` cleanly, wipe its state directory and create it again, so it restores
        every store from its changelog (steps 1-3 of :mod:`.state_rebuild`); once restored, before
        it processes, :meth:`rebuild_report` has a snapshot of ``store_name``. Returns the input
        offsets committed at the close (``"topic:partition" -> next offset``)."""
        manager = self.manager
        if task_id not in manager.tasks:
            raise StreamsError(f"task {task_id} is not an active task of this thread")
        partitions = manager.partitions_of(task_id)
        manager.handle_assignment([task_id], (), clean=True)  # Step 1: commit, close
        committed = committed_offsets_of(self.consumer, [TopicPartition(t, p) for t, p in partitions], 30.0)
        sd = self.state_directory
        if sd.lock(task_id):  # Step 2 (the thread keeps the lock into the new task)
            sd.wipe_task(task_id)
        else:
            raise StreamsError(f"task {task_id}: cannot lock {sd.task_dir(task_id)} to wipe it")
        self._rebuilt.pop(task_id, None)
        self._rebuilding[task_id] = store_name
        manager.handle_assignment((), [task_id], clean=True)  # Step 3
        return {f"{tp.topic}:{tp.partition}": tp.offset for tp in committed}

    def rebuild_report(self, task_id: TaskId) -> dict[str, Any] | None:
        """The snapshot of a rebuilt task once it restored (taken once), else None; raises when
        the task is no longer active here (revoked by a rebalance during the rebuild)."""
        if task_id in self._rebuilt:
            return self._rebuilt.pop(task_id)
        if not self.manager.owns(task_id):
            self._rebuilding.pop(task_id, None)
            raise StreamsError(f"task {task_id} left this thread while it was being rebuilt")
        return None

    def on_restored(self, task: StreamTask) -> None:
        """Step 4 of :mod:`.state_rebuild`, for a task being rebuilt: restored, not processing yet."""
        store_name = self._rebuilding.pop(task.id, None)
        if store_name is None:
            return
        reader = self.changelog_reader
        restored = 0 if reader is None else reader.restored_count(task.id)
        self._rebuilt[task.id] = snapshot_restored_store(task, task.state_manager, store_name, restored)
