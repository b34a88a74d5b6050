"""Failover with standbys: the task of a dead instance goes to the most caught-up holder of its
state, judged against the true changelog ends the leader reads (not against each other)."""

from __future__ import annotations

from streams_runtime.processor.internals.assignment import AssignorConfig, StreamsAssignor, TaskId
from tests.unit.assignment.helpers import by_process, members, single_source

T = TaskId(0, 0)


def test_the_most_caught_up_holder_takes_the_task_of_a_dead_instance() -> None:
    subtopologies, counts = single_source(1, stateful=True)
    config = AssignorConfig(num_standby_replicas=1, acceptable_recovery_lag=100)
    # the active's instance is gone; b and c hold state, c is closer to the end
    subs = members({"b": 1, "c": 1}, state={"b-t0": {T: 500}, "c-t0": {T: 990}})
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums={T: 1000})
    assert by_process(group, subs) == {"b": set(), "c": {T}}
    assert by_process(group, subs, "standby_tasks") == {"b": {T}, "c": set()}
    assert not group.result.probing_rebalance_needed


def test_a_lagging_only_holder_still_takes_the_task_and_no_one_warms_up() -> None:
    subtopologies, counts = single_source(1, stateful=True)
    config = AssignorConfig(num_standby_replicas=1, acceptable_recovery_lag=100)
    subs = members({"b": 1, "c": 1}, state={"b-t0": {T: 200}})
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums={T: 1000})
    assert by_process(group, subs) == {"b": {T}, "c": set()}  # best available: it replays the delta
    assert not group.result.probing_rebalance_needed
