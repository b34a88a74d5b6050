"""Standby placement and warm-ups: state-aware moves that never pause a caught-up task."""

from __future__ import annotations

from collections import Counter

from streams_runtime.processor.internals.assignment import (
    LATEST_OFFSET,
    UNKNOWN_LAG,
    AssignorConfig,
    RebalanceRequest,
    StreamsAssignor,
    TaskId,
    compute_task_lags,
)
from tests.unit.assignment.helpers import assert_each_active_once, by_process, members, settle, single_source

ALL6 = {TaskId(0, p) for p in range(6)}


def test_standbys_are_never_on_the_instance_of_their_active_and_are_balanced() -> None:
    subtopologies, counts = single_source(6, stateful=True)
    subs = members({"a": 2, "b": 2, "c": 2})
    group = StreamsAssignor(subtopologies, AssignorConfig(num_standby_replicas=1)).assign(subs, counts)
    active, standby = by_process(group, subs), by_process(group, subs, "standby_tasks")
    for pid in active:
        assert not active[pid] & standby[pid]
    assert Counter(t for ts in standby.values() for t in ts) == {t: 1 for t in ALL6}
    assert sorted(len(ts) for ts in standby.values()) == [2, 2, 2]
    assert group.assignments["a-t0"].standby_partitions_by_host["b:8080"]  # queryable standby hosts


def test_more_replicas_than_other_instances_places_what_it_can_and_reports_the_rest() -> None:
    subtopologies, counts = single_source(2, stateful=True)
    subs = members({"a": 1, "b": 1})
    group = StreamsAssignor(subtopologies, AssignorConfig(num_standby_replicas=2)).assign(subs, counts)
    assert group.result.unfilled_standbys == 2
    for pid, tasks in by_process(group, subs, "standby_tasks").items():
        assert tasks and not tasks & by_process(group, subs)[pid]


def test_stateless_tasks_get_no_standbys() -> None:
    subtopologies, counts = single_source(4, stateful=False)
    subs = members({"a": 1, "b": 1})
    group = StreamsAssignor(subtopologies, AssignorConfig(num_standby_replicas=1)).assign(subs, counts)
    assert all(not info.replica_tasks for info in group.assignments.values())


def test_standbys_stick_to_the_instance_that_holds_the_state() -> None:
    subtopologies, counts = single_source(4, stateful=True)
    running = {"a-t0": {TaskId(0, 0), TaskId(0, 1)}, "b-t0": {TaskId(0, 2), TaskId(0, 3)}}
    state = {"c-t0": {TaskId(0, 0): 10, TaskId(0, 1): 10}, "b-t0": {TaskId(0, 0): 10}}
    config = AssignorConfig(num_standby_replicas=1)
    _, group, subs = settle(
        StreamsAssignor(config=config, subtopologies=subtopologies),
        {"a": 1, "b": 1, "c": 1},
        counts,
        running,
        state,
    )
    standby = by_process(group, subs, "standby_tasks")
    assert {TaskId(0, 0), TaskId(0, 1)} <= standby["b"] | standby["c"]


def test_a_new_instance_gets_warm_ups_while_caught_up_owners_keep_the_tasks_active() -> None:
    subtopologies, counts = single_source(6, stateful=True)
    running = {"a-t0": ALL6}
    config = AssignorConfig(acceptable_recovery_lag=100, max_warmup_replicas=2)
    subs = members({"a": 1, "b": 1}, running=running)
    group = StreamsAssignor(subtopologies, config).assign(
        subs, counts, end_offset_sums={t: 5000 for t in ALL6}
    )
    a, b = group.assignments["a-t0"], group.assignments["b-t0"]
    assert a.active_tasks == ALL6 and not b.active_tasks  # nothing pauses to restore on b
    assert len(b.warmup_tasks) == 2 and b.warmup_tasks <= ALL6
    assert group.result.deferred_movements == 1  # balance wants 3 moves; budget allows 2 warm-ups
    assert a.rebalance is RebalanceRequest.PROBING and b.rebalance is RebalanceRequest.PROBING
    assert not group.withheld


def test_a_caught_up_warm_up_takes_its_task_at_the_probing_rebalance() -> None:
    subtopologies, counts = single_source(6, stateful=True)
    config = AssignorConfig(acceptable_recovery_lag=100, max_warmup_replicas=2)
    ends = {t: 5000 for t in ALL6}
    warmed = {TaskId(0, 3): 4950, TaskId(0, 4): 4990}
    subs = members({"a": 1, "b": 1}, running={"a-t0": ALL6}, state={"b-t0": warmed})
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums=ends)
    assert group.withheld == set(warmed)  # moving to b: a revokes first
    next_subs = members(
        {"a": 1, "b": 1},
        running={"a-t0": set(group.assignments["a-t0"].active_tasks)},
        state={"b-t0": warmed},
    )
    nxt = StreamsAssignor(subtopologies, config).assign(next_subs, counts, end_offset_sums=ends)
    assert nxt.assignments["b-t0"].active_tasks == set(warmed)
    assert len(nxt.assignments["b-t0"].warmup_tasks) == 1  # the third move still warming up


def test_a_caught_up_standby_takes_over_without_a_warm_up() -> None:
    subtopologies, counts = single_source(2, stateful=True)
    config = AssignorConfig(num_standby_replicas=1, acceptable_recovery_lag=100)
    subs = members(
        {"a": 1, "b": 1},
        running={"a-t0": {TaskId(0, 0), TaskId(0, 1)}},
        state={"b-t0": {TaskId(0, 0): 990, TaskId(0, 1): 990}},
    )
    ends = {TaskId(0, 0): 1000, TaskId(0, 1): 1000}
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums=ends)
    assert not group.result.probing_rebalance_needed
    assert len(group.withheld) == 1  # one task moves to b (its standby) for balance
    assert group.assignments["a-t0"].standby_tasks == group.withheld  # a keeps it as a standby
    assert_each_active_once(group, 1)


def test_without_caught_up_clients_a_task_simply_goes_where_balance_wants() -> None:
    subtopologies, counts = single_source(4, stateful=True)
    subs = members({"a": 1, "b": 1})
    group = StreamsAssignor(subtopologies, AssignorConfig(max_warmup_replicas=1)).assign(subs, counts)
    assert {len(i.active_tasks) for i in group.assignments.values()} == {2}
    assert not group.result.probing_rebalance_needed


def test_lags_use_end_offsets_when_known_and_the_best_holder_otherwise() -> None:
    t = TaskId(0, 0)
    sums = {"a": {t: LATEST_OFFSET}, "b": {t: 80}, "c": {t: 100}, "d": {}}
    with_ends = compute_task_lags(sums, [t], frozenset({t}), {t: 150})
    # d has no state: it would restore the whole changelog (Kafka Streams' rule)
    assert {p: with_ends[p].get(t, UNKNOWN_LAG) for p in sums} == {"a": 0, "b": 70, "c": 50, "d": 150}
    relative = compute_task_lags(sums, [t], frozenset({t}))
    assert relative["b"][t] == 20 and relative["c"][t] == 0
    assert relative["d"].get(t, UNKNOWN_LAG) == UNKNOWN_LAG  # no state, no known end
    stateless = compute_task_lags(sums, [t], frozenset())
    assert {p: stateless[p][t] for p in sums} == {"a": 0, "b": 0, "c": 0, "d": 0}
