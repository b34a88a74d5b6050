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
    from streams_runtime.processor.internals.standby_task import StandbyTask
    from streams_runtime.processor.internals.task import StreamTask

__all__ = ["Tasks"]

TopicPartitionKey = tuple[str, int]


class Tasks:
    """See the module docstring."""

    def __init__(self) -> None:
        #: active tasks by id (created: restoring, running or suspended); do not change it
        self.active_tasks: dict[TaskId, StreamTask] = {}
        #: standby (and warm-up) tasks by id; do not change it
        self.standby_tasks: dict[TaskId, StandbyTask] = {}
        self.pending_active: dict[TaskId, int] = {}
        self.pending_standby: set[TaskId] = set()
        self.migrated: set[TaskId] = set()
        self._input_adders: dict[TopicPartitionKey, Callable[[list[Any]], None]] = {}

    # ------------------------------------------------------------------ active tasks
    def add_active(self, task: StreamTask) -> None:
        if task.id in self.active_tasks or task.id in self.standby_tasks:
            raise ValueError(f"task {task.id} is already registered")
        self.pending_active.pop(task.id, None)
        self.active_tasks[task.id] = task

    def remove_active(self, task_id: TaskId) -> StreamTask:
        """Forget an active task (its input partitions leave the index) and return it."""
        task = self.active_tasks.pop(task_id)
        for tp in task.input_partitions:
            self._input_adders.pop(tp, None)
        return task

    def in_state(self, state: State) -> list[Any]:
        return [t for t in self.active_tasks.values() if t.state is state]

    def running(self) -> list[Any]:
        return [t for t in self.active_tasks.values() if t.state is State.RUNNING]

    def restoring(self) -> list[Any]:
        return [t for t in self.active_tasks.values() if t.state is State.RESTORING]

    def has_restoring(self) -> bool:
        return any(t.state is State.RESTORING for t in self.active_tasks.values())

    def is_restoring(self, task_id: TaskId) -> bool:
        """Assigned here but not processing yet: restoring, or waiting for its directory lock."""
        if task_id in self.pending_active:
            return True
        task = self.active_tasks.get(task_id)
        return task is not None and task.state is State.RESTORING

    # ------------------------------------------------------------------ input partitions
    def add_input_partitions(self, task: StreamTask) -> None:
        """Route the records of ``task.input_partitions`` to the task's queues."""
        for topic, partition in task.input_partitions:
            queue = task.partition_group.queue_for(topic, partition)
            assert queue is not None, f"task {task.id} has no queue for {topic}-{partition}"
            self._input_adders[(topic, partition)] = queue.add_batch

    @property
    def input_adders(self) -> dict[TopicPartitionKey, Callable[[list[Any]], None]]:
        """``(topic, partition)`` -> the ``add_batch`` of the queue reading it (read only)."""
        return self._input_adders

    # ------------------------------------------------------------------ standby tasks
    def add_standby(self, task: StandbyTask) -> None:
        if task.id in self.active_tasks or task.id in self.standby_tasks:
            raise ValueError(f"task {task.id} is already registered")
        self.pending_standby.discard(task.id)
        self.standby_tasks[task.id] = task

    def remove_standby(self, task_id: TaskId) -> StandbyTask | None:
        self.pending_standby.discard(task_id)
        return self.standby_tasks.pop(task_id, None)

    # ------------------------------------------------------------------ everything
    def all_task_ids(self) -> set[TaskId]:
        return {*self.active_tasks, *self.standby_tasks}

    def owns(self, task_id: TaskId) -> bool:
        """The task is active here, or waiting here for its directory lock."""
        return task_id in self.active_tasks or task_id in self.pending_active

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
