"""ClientState: one instance (process) as the task assignor sees it, and how its lags are computed.

Built by :class:`~.streams_assignor.StreamsAssignor` from the subscriptions of the members that
share a process id; read and filled in by :class:`~.task_assignor.TaskAssignor`.

Lag of a client for a task (``compute_task_lags``):
  - stateless task: 0 everywhere (any client is caught up; no state to restore);
  - the client runs the task as active now (offset sum ``LATEST_OFFSET``): 0;
  - the client has state with offset sum ``s``: ``end - s`` when the task's changelog end-offset
    sum is known (the runtime reads true ends, never Tansu's ListOffsets-latest,
    docs/decisions/0001-embedded-broker.md); without it,
    the lag relative to the best reported state of that task (``max s - s``), so the most
    caught-up holder counts as caught up. That fallback can call a standby caught up while a
    running active is ahead of it; supply end offsets to avoid that;
  - no state at all: the task's changelog end-offset sum, when known (restoring from scratch
    replays the whole changelog), as Kafka Streams' ClientState does. So an instance without
    state counts as caught up for a task whose changelog is within ``acceptable_recovery_lag``,
    and a new instance gets its share of such tasks at once rather than warm-ups. Without the
    end-offset sum: :data:`UNKNOWN_LAG` (never caught up while someone holds the state: the task
    stays with its owner and the new instance warms up, the conservative choice when the amount
    to restore is unknown; when no one holds the state, no one is caught up and balance decides).

``has_state`` is about what the client reported (an offset sum, ``LATEST_OFFSET`` included),
never about the size of its lag.

Invariants: ``capacity >= 1``; ``active``, ``standby`` and ``warmup`` are disjoint once the
assignor has finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from streams_runtime.processor.internals.assignment.subscription_info import LATEST_OFFSET
from streams_runtime.processor.task_id import TaskId

#: Lag of a client that has no state for a stateful task (it would restore from scratch).
UNKNOWN_LAG = 2**62


@dataclass
class ClientState:
    """One process: its capacity, what it had, how far behind it is, and what it gets."""

    process_id: str
    capacity: int
    endpoint: str | None = None
    previous_active: frozenset[TaskId] = frozenset()
    #: tasks the client has local state for (it reported an offset sum, ``LATEST_OFFSET`` included)
    local_state: frozenset[TaskId] = frozenset()
    lags: Mapping[TaskId, int] = field(default_factory=dict)
    active: set[TaskId] = field(default_factory=set)
    standby: set[TaskId] = field(default_factory=set)
    warmup: set[TaskId] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError(f"client {self.process_id} must have capacity >= 1, got {self.capacity}")

    def lag_for(self, task: TaskId) -> int:
        return self.lags.get(task, UNKNOWN_LAG)

    def has_state(self, task: TaskId) -> bool:
        return task in self.local_state or task in self.previous_active

    @property
    def replicas(self) -> set[TaskId]:
        return self.standby | self.warmup

    def active_load(self) -> Fraction:
        return Fraction(len(self.active), self.capacity)

    def total_load(self) -> Fraction:
        return Fraction(len(self.active) + len(self.standby) + len(self.warmup), self.capacity)

    def same_subtopology_count(self, task: TaskId) -> int:
        return sum(1 for t in self.active if t.subtopology == task.subtopology)


def merge_offset_sums(reports: Iterable[Mapping[TaskId, int]]) -> dict[TaskId, int]:
    """One process's offset sums from its members' reports: ``LATEST_OFFSET`` wins, else the max."""
    merged: dict[TaskId, int] = {}
    for report in reports:
        for task, offset_sum in report.items():
            current = merged.get(task)
            if current == LATEST_OFFSET or offset_sum == LATEST_OFFSET:
                merged[task] = LATEST_OFFSET
            else:
                merged[task] = offset_sum if current is None else max(current, offset_sum)
    return merged


def compute_task_lags(
    offset_sums: Mapping[str, Mapping[TaskId, int]],
    tasks: Iterable[TaskId],
    stateful: frozenset[TaskId],
    end_offset_sums: Mapping[TaskId, int] | None = None,
) -> dict[str, dict[TaskId, int]]:
    """Per process id, per task: the lag (see the module docstring for the rules).

    :param offset_sums: process id -> merged offset sums of its members.
    :param end_offset_sums: task -> sum of its changelog partitions' true end offsets, if known.
    """
    lags: dict[str, dict[TaskId, int]] = {pid: {} for pid in offset_sums}
    for task in tasks:
        if task not in stateful:
            for pid in offset_sums:
                lags[pid][task] = 0
            continue
        reported = [s for sums in offset_sums.values() if (s := sums.get(task)) is not None and s >= 0]
        end = end_offset_sums.get(task) if end_offset_sums is not None else None
        reference = max(reported, default=0) if end is None else end
        for pid, sums in offset_sums.items():
            offset_sum = sums.get(task)
            if offset_sum is None:
                if end is not None:  # no state: it would restore the whole changelog
                    lags[pid][task] = max(0, end)
                continue  # no state and no known end: UNKNOWN_LAG
            lags[pid][task] = 0 if offset_sum == LATEST_OFFSET else max(0, reference - offset_sum)
    return lags
