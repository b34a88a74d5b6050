"""Instances that join one after another: 3 instances, 6 stateful partitions, 1 standby replica,
small changelogs. Each instance joins once the group settled on the previous ones, as a rolling
start or a test starting its clients in turn does; every member reports what it runs and the
offset sums of the replicas it holds (caught up: the changelogs are tiny). The rebalance after
the last join must give every instance its 2 tasks, at most one hand-off generation later, with
no warm-ups and so no wait for the probing rebalance."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from streams_runtime.processor.internals.assignment import (
    AssignorConfig,
    GroupAssignment,
    StreamsAssignor,
    TaskId,
)
from tests.unit.assignment.helpers import assert_each_active_once, by_process, members, single_source

ALL6 = {TaskId(0, p) for p in range(6)}
ENDS = {t: 39 for t in ALL6}  # ~40 records per changelog partition, far below the acceptable lag
CONFIG = AssignorConfig(num_standby_replicas=1)  # acceptable_recovery_lag: the default 10,000


def _rebalance(
    assignor: StreamsAssignor,
    processes: list[str],
    running: Mapping[str, set[TaskId]],
    replicas: Mapping[str, set[TaskId]],
    ends: Mapping[TaskId, int] | None,
) -> GroupAssignment:
    threads = {pid: 1 for pid in processes}
    sums = ends or ENDS
    state = {f"{pid}-t0": {t: sums[t] for t in replicas.get(f"{pid}-t0", set())} for pid in processes}
    subs = members(threads, running=running, state=state)
    _, counts = single_source(6, stateful=True)
    return assignor.assign(subs, counts, end_offset_sums=ends)


def _join_one_by_one(
    ends: Mapping[TaskId, int] | None, settle_between_joins: bool = True
) -> tuple[list[GroupAssignment], dict[str, int]]:
    """Join a, b, c in turn; after each join, rebalance while a hand-off is pending (the members
    rejoin at once), at most 3 generations; a probing rebalance is 10 minutes away and does not
    count. Without ``settle_between_joins`` the next instance joins right after the first
    generation, in the middle of a hand-off. Returns the generations after the last join and the
    active counts they leave."""
    subtopologies, _ = single_source(6, stateful=True)
    assignor = StreamsAssignor(subtopologies, CONFIG)
    running: dict[str, set[TaskId]] = {}
    replicas: dict[str, set[TaskId]] = {}  # member -> tasks it holds checkpointed state for
    processes: list[str] = []
    generations: list[GroupAssignment] = []
    for pid in ("a", "b", "c"):
        processes.append(pid)
        generations = []
        for _ in range(3 if settle_between_joins or pid == "c" else 1):
            group = _rebalance(assignor, processes, running, replicas, ends)
            generations.append(group)
            previous = dict(running)
            running = {m: set(info.active_tasks) for m, info in group.assignments.items()}
            # a revoked active was closed cleanly: its checkpoint is on disk, caught up; a new
            # standby has written none yet (standbys checkpoint at the commit interval, 30 s,
            # longer than the 1-3 s between joins), so it reports no state
            for m in group.assignments:
                revoked = previous.get(m, set()) - running[m]
                replicas[m] = (replicas.get(m, set()) | revoked) - running[m]
            if not group.withheld:
                break
    final = by_process(generations[-1], members({p: 1 for p in processes}))
    counts = {pid: len(ts) for pid, ts in final.items()}
    return generations, counts


@pytest.mark.parametrize("settle_between_joins", [True, False])
def test_staggered_joins_end_two_two_two_within_one_rebalance(settle_between_joins: bool) -> None:
    generations, counts = _join_one_by_one(ENDS, settle_between_joins)
    assert counts == {"a": 2, "b": 2, "c": 2}
    assert len(generations) <= 2  # the join's rebalance, then at most its hand-off generation
    assert_each_active_once(generations[-1], 6)
    for group in generations:
        assert not group.result.probing_rebalance_needed
        assert all(not info.warmup_tasks for info in group.assignments.values())
    # every task has its standby on another instance once settled
    final = generations[-1]
    standby = [t for info in final.assignments.values() for t in info.standby_tasks]
    assert sorted(standby) == sorted(ALL6)


@pytest.mark.parametrize("acceptable", [0, 38])
def test_a_changelog_beyond_the_acceptable_lag_still_warms_up_first(acceptable: int) -> None:
    """The other side of the rule: an instance without state is not caught up for a changelog
    longer than the acceptable lag, so the owner keeps the task and the newcomer warms up."""
    subtopologies, counts = single_source(6, stateful=True)
    config = AssignorConfig(num_standby_replicas=1, acceptable_recovery_lag=acceptable)
    subs = members({"a": 1, "b": 1}, running={"a-t0": ALL6})
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums=ENDS)
    assert group.assignments["a-t0"].active_tasks == ALL6
    assert group.assignments["b-t0"].warmup_tasks or group.assignments["b-t0"].standby_tasks
    assert group.result.probing_rebalance_needed


def test_without_end_offsets_a_newcomer_warms_up_rather_than_restore_an_unknown_amount() -> None:
    """Unknown changelog ends: an instance without state is never caught up while another holds
    the state (the documented conservative fallback); the move waits for its warm-up."""
    subtopologies, counts = single_source(6, stateful=True)
    subs = members({"a": 1, "b": 1}, running={"a-t0": ALL6})
    group = StreamsAssignor(subtopologies, CONFIG).assign(subs, counts, end_offset_sums=None)
    assert group.assignments["a-t0"].active_tasks == ALL6
    assert not group.assignments["b-t0"].active_tasks
    assert group.result.probing_rebalance_needed
