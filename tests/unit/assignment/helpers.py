"""Builders for assignment tests: sub-topologies, members, and views of a GroupAssignment."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from streams_runtime.processor.internals.assignment import (
    LATEST_OFFSET,
    GroupAssignment,
    SubscriptionInfo,
    SubtopologySources,
    TaskId,
)


def single_source(partitions: int, topic: str = "input", stateful: bool = False) -> tuple[list, dict]:
    """One sub-topology reading ``topic``: (subtopologies, partition_counts)."""
    return [SubtopologySources(0, (topic,), stateful=stateful)], {topic: partitions}


def members(
    threads_by_process: Mapping[str, int],
    *,
    one_member_per_thread: bool = True,
    running: Mapping[str, set[TaskId]] | None = None,
    state: Mapping[str, Mapping[TaskId, int]] | None = None,
) -> dict[str, SubscriptionInfo]:
    """Member id -> SubscriptionInfo; member ids are ``<process>-t<n>`` (or ``<process>``).

    :param running: member id -> tasks it runs now (reported as LATEST_OFFSET).
    :param state: member id -> offset sums of its local state.
    """
    out: dict[str, SubscriptionInfo] = {}
    for pid, threads in threads_by_process.items():
        ids = [f"{pid}-t{n}" for n in range(threads)] if one_member_per_thread else [pid]
        for member in ids:
            sums = dict((state or {}).get(member, {}))
            sums.update({t: LATEST_OFFSET for t in (running or {}).get(member, set())})
            out[member] = SubscriptionInfo(pid, f"{pid}:8080", sums, 1 if one_member_per_thread else threads)
    return out


def active_of(group: GroupAssignment) -> dict[str, set[TaskId]]:
    return {m: set(info.active_tasks) for m, info in group.assignments.items()}


def by_process(group: GroupAssignment, subs: Mapping[str, SubscriptionInfo], role: str = "active_tasks"):
    out: dict[str, set[TaskId]] = {}
    for member, info in group.assignments.items():
        out.setdefault(subs[member].process_id, set()).update(getattr(info, role))
    return out


def assert_each_active_once(group: GroupAssignment, tasks: int) -> None:
    counts = Counter(t for info in group.assignments.values() for t in info.active_tasks)
    assert len(counts) == tasks and set(counts.values()) == {1}, counts


def running_from(group: GroupAssignment) -> dict[str, set[TaskId]]:
    """What each member runs after applying ``group`` (for the next round's subscriptions)."""
    return active_of(group)


def settle(assignor, threads_by_process, counts, running=None, state=None, max_rounds: int = 4, **kw):
    """Run rebalances (members reporting what the previous round gave them) until no hand-off
    is pending; return ``(rounds, final GroupAssignment, final subscriptions)``."""
    running = dict(running or {})
    for rounds in range(1, max_rounds + 1):
        subs = members(threads_by_process, running=running, state=state, **kw)
        group = assignor.assign(subs, counts)
        if not group.withheld:
            return rounds, group, subs
        running = running_from(group)
    raise AssertionError(f"no stable assignment after {max_rounds} rounds")
