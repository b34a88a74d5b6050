"""Distribute one client's tasks over its consumers (the group members of that process).

Called by :class:`~.streams_assignor.StreamsAssignor` after :class:`~.task_assignor.TaskAssignor`
has decided what each client (process) runs. A member stands for ``thread_count`` stream threads
(1 when each StreamThread is its own member, as in Kafka Streams), so it is a bin of that
capacity. A runtime that runs one member for M threads can call :func:`distribute_tasks` again
locally, with one single-thread bin per thread, to split its member's tasks over its threads with
the same rules.

Steps of :func:`distribute_tasks`:
  1. Active tasks, balanced by capacity, sticky to the member that runs the task now.
  2. Standby and warm-up tasks, balanced over each member's total load (actives included),
     sticky to the member that holds the task's state (highest offset sum first).

Invariant: every task of the client lands on exactly one member, in the role the client has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streams_runtime.processor.internals.assignment.balance import BalancedPlacer
from streams_runtime.processor.internals.assignment.subscription_info import LATEST_OFFSET
from streams_runtime.processor.task_id import TaskId


@dataclass
class MemberTasks:
    """The tasks one member gets."""

    active: set[TaskId] = field(default_factory=set)
    standby: set[TaskId] = field(default_factory=set)
    warmup: set[TaskId] = field(default_factory=set)


@dataclass(frozen=True)
class ConsumerBin:
    """A member (or a thread) as a placement bin: its capacity and what it reported."""

    capacity: int
    offset_sums: Mapping[TaskId, int] = field(default_factory=dict)


def distribute_tasks(
    bins: Mapping[str, ConsumerBin],
    active: set[TaskId],
    standby: set[TaskId],
    warmup: set[TaskId],
) -> dict[str, MemberTasks]:
    """Split a client's active, standby and warm-up tasks over ``bins`` (member id -> bin)."""
    result = {member: MemberTasks() for member in bins}
    if not bins:
        return result
    capacities = {member: b.capacity for member, b in bins.items()}

    # Step 1
    active_placer = BalancedPlacer(capacities, len(active))

    def runs_now(task: TaskId) -> list[str]:
        return [m for m in sorted(bins) if bins[m].offset_sums.get(task) == LATEST_OFFSET]

    def active_rank(task: TaskId, member: str) -> tuple[object, ...]:
        same = sum(1 for t in result[member].active if t.subtopology == task.subtopology)
        return (active_placer.load_after(member), same, member)

    active_placer.place(
        sorted(active), runs_now, active_rank, on_take=lambda task, m: result[m].active.add(task)
    )

    # Step 2
    replicas = standby | warmup
    replica_placer = BalancedPlacer(
        capacities, len(active) + len(replicas), {m: len(t.active) for m, t in result.items()}
    )

    def holds_state(task: TaskId) -> list[str]:
        holders = [m for m in bins if bins[m].offset_sums.get(task, -1) >= 0]
        return sorted(holders, key=lambda m: (-bins[m].offset_sums[task], m))

    def replica_rank(task: TaskId, member: str) -> tuple[object, ...]:
        return (replica_placer.load_after(member), member)

    def take_replica(task: TaskId, member: str) -> None:
        (result[member].standby if task in standby else result[member].warmup).add(task)

    replica_placer.place(sorted(replicas), holds_state, replica_rank, on_take=take_replica)
    return result
