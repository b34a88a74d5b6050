"""Tasks: the registry of one thread's tasks (Kafka Streams' ``Tasks``).

Owned by the TaskManager; read by interactive queries and metrics under the thread's query lock.
It holds every task of the thread once, by id, and nothing about a task that the task itself
can say: whether it restores or runs is its :class:`~.abstract_task.State`, its state manager,
queues, sensors and offsets live on the task. What has no task object yet has an entry here:

- ``pending_active``: active tasks assigned here whose state directory is still locked by their
  previous owner, with the wall-clock deadline for getting the lock (created on every restore
  step until then);
- ``pending_standby``: standbys waiting for their directory lock the same way;
- ``migrated``: active tasks closed dirty because another producer fenced theirs, to be created
  again if the next assignment still gives them to this thread.

The input-partition index (``topic, partition`` -> the queue of the running task reading it) is
kept here for the poll loop, which hands each queue its records of a poll batch at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from streams_runtime.processor.internals.abstract_task import State
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:
    from streams_runtime.processor.internals.abstract_task import Task

__all__ = ["Tasks"]

TopicPartitionKey = tuple[str, int]


class Tasks:
    """See the module docstring."""

    def __init__(self) -> None:
        self._active: dict[TaskId, Any] = {}
        self._standby: dict[TaskId, Any] = {}
        self.pending_active: dict[TaskId, int] = {}
        self.pending_standby: set[TaskId] = set()
        self.migrated: set[TaskId] = set()
        self._input_adders: dict[TopicPartitionKey, Callable[[list[Any]], None]] = {}

    # ------------------------------------------------------------------ active tasks
    @property
    def active_tasks(self) -> dict[TaskId, Any]:
        """Active tasks by id (created: restoring, running or suspended); do not change it."""
        return self._active

    def add_active(self, task: Task) -> None:
        if task.id in self._active or task.id in self._standby:
            raise ValueError(f"task {task.id} is already registered")
        self.pending_active.pop(task.id, None)
        self._active[task.id] = task

    def remove_active(self, task_id: TaskId) -> Any:
        """Forget an active task (its input partitions leave the index) and return it."""
        task = self._active.pop(task_id)
        for tp in task.input_partitions:
            self._input_adders.pop(tp, None)
        return task

    def in_state(self, state: State) -> list[Any]:
        return [t for t in self._active.values() if t.state is state]

    def running(self) -> list[Any]:
        return [t for t in self._active.values() if t.state is State.RUNNING]

    def restoring(self) -> list[Any]:
        return [t for t in self._active.values() if t.state is State.RESTORING]

    def has_restoring(self) -> bool:
        return any(t.state is State.RESTORING for t in self._active.values())

    def is_restoring(self, task_id: TaskId) -> bool:
        """Assigned here but not processing yet: restoring, or waiting for its directory lock."""
        if task_id in self.pending_active:
            return True
        task = self._active.get(task_id)
        return task is not None and task.state is State.RESTORING

    # ------------------------------------------------------------------ input partitions
    def add_input_partitions(self, task: Any) -> None:
        """Route the records of ``task.input_partitions`` to the task's queues."""
        for topic, partition in task.input_partitions:
            queue = task.partition_group.queue_for(topic, partition)
            self._input_adders[(topic, partition)] = queue.add_batch

    @property
    def input_adders(self) -> dict[TopicPartitionKey, Callable[[list[Any]], None]]:
        """``(topic, partition)`` -> the ``add_batch`` of the queue reading it (read only)."""
        return self._input_adders

    # ------------------------------------------------------------------ standby tasks
    @property
    def standby_tasks(self) -> dict[TaskId, Any]:
        """Standby (and warm-up) tasks by id; do not change it."""
        return self._standby

    def add_standby(self, task: Task) -> None:
        if task.id in self._active or task.id in self._standby:
            raise ValueError(f"task {task.id} is already registered")
        self.pending_standby.discard(task.id)
        self._standby[task.id] = task

    def remove_standby(self, task_id: TaskId) -> Any:
        self.pending_standby.discard(task_id)
        return self._standby.pop(task_id, None)

    # ------------------------------------------------------------------ everything
    def all_task_ids(self) -> set[TaskId]:
        return {*self._active, *self._standby}

    def owns(self, task_id: TaskId) -> bool:
        """The task is active here, or waiting here for its directory lock."""
        return task_id in self._active or task_id in self.pending_active

    def forget_pending(self, task_ids: Iterable[TaskId] | None = None) -> None:
        """Drop the pending entries of ``task_ids`` (all of them when None)."""
        if task_ids is None:
            self.pending_active.clear()
            self.pending_standby.clear()
            self.migrated.clear()
            return
        for task_id in task_ids:
            self.pending_active.pop(task_id, None)
            self.pending_standby.discard(task_id)
