"""Task: what active and standby tasks share -- an id and the task state machine.

Kafka Streams' ``Task.State``, with its allowed transitions (anything else raises
:class:`IllegalStateError` naming both states)::

                 +-----------------------------------------+
                 v                                         |
            CREATED ----> RESTORING ----> RUNNING          |
               |            ^   |            |             |
               |            |   v            v             |
               +--------> SUSPENDED <--------+             |
                              |                            |
                              v                            |
                            CLOSED ------------------------+

- CREATED: built, stores not open yet.
- RESTORING: stores open, the changelog reader brings them up to date (a standby passes through
  it at once: it replays its changelogs while RUNNING).
- RUNNING: an active task's input partitions are assigned and it processes records.
- SUSPENDED: stopped before closing (input unassigned, nothing processed); it may resume
  restoring, or close.
- CLOSED: stores closed, directory released; it can only be created again (a task revived
  after its state was found corrupt starts over from CREATED).

Owners: :class:`~.task.StreamTask` and :class:`~.standby_task.StandbyTask` derive from
:class:`Task`; the TaskManager moves them through the states and keeps them in its
:class:`~.tasks.Tasks` registry.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from streams_runtime.errors import StreamsError

if TYPE_CHECKING:
    from streams_runtime.processor.task_id import TaskId

__all__ = ["IllegalStateError", "State", "Task"]


class IllegalStateError(StreamsError):
    """A task was asked for a state transition its state machine does not allow (Kafka
    Streams' ``IllegalStateException``)."""

    def __init__(self, task_id: object, old: State, new: State) -> None:
        super().__init__(f"task {task_id}: illegal state transition from {old.name} to {new.name}")
        self.task_id, self.old, self.new = task_id, old, new


class State(Enum):
    """The state of a task; see the module docstring."""

    CREATED = "CREATED"
    RESTORING = "RESTORING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    CLOSED = "CLOSED"

    def is_valid_transition(self, new: State) -> bool:
        return new in _VALID_TRANSITIONS[self]


_VALID_TRANSITIONS: dict[State, frozenset[State]] = {
    State.CREATED: frozenset({State.RESTORING, State.SUSPENDED}),
    State.RESTORING: frozenset({State.RUNNING, State.SUSPENDED}),
    State.RUNNING: frozenset({State.SUSPENDED}),
    State.SUSPENDED: frozenset({State.RESTORING, State.CLOSED}),
    State.CLOSED: frozenset({State.CREATED}),
}


_State = State  # the enum, for annotations inside Task (where ``State`` is the class attribute)


class Task:
    """The state machine of one task (see the module docstring); ``Task.State`` is :class:`State`."""

    State = State

    #: an active task processes records; a standby only replays changelogs
    is_active = True

    def __init__(self, task_id: TaskId) -> None:
        self.id = task_id
        self.state: _State = State.CREATED

    def transition_to(self, new: _State) -> None:
        """Move to ``new``; :class:`IllegalStateError` when the state machine forbids it."""
        if not self.state.is_valid_transition(new):
            raise IllegalStateError(self.id, self.state, new)
        self.state = new

    def suspend(self) -> None:
        """Stop before closing (from CREATED, RESTORING or RUNNING; a suspended task stays so)."""
        if self.state is not State.SUSPENDED:
            self.transition_to(State.SUSPENDED)

    def is_closed(self) -> bool:
        return self.state is State.CLOSED
