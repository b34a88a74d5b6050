"""The lag rule of an instance without state for a task: the task's changelog end-offset sum (it
would restore the whole changelog), as in Kafka Streams; caught up when that is within
``acceptable_recovery_lag``. Unknown ends: not caught up while someone holds the state."""

from __future__ import annotations

import pytest

from streams_runtime.processor.internals.assignment import (
    LATEST_OFFSET,
    UNKNOWN_LAG,
    AssignorConfig,
    ClientState,
    StreamsAssignor,
    TaskAssignor,
    TaskId,
    compute_task_lags,
)
from tests.unit.assignment.helpers import by_process, members, single_source

T0, T1 = TaskId(0, 0), TaskId(0, 1)


def test_an_instance_without_state_lags_by_the_whole_changelog() -> None:
    sums = {"owner": {T0: LATEST_OFFSET, T1: LATEST_OFFSET}, "new": {}}
    lags = compute_task_lags(sums, [T0, T1], frozenset({T0, T1}), {T0: 40, T1: 0})
    assert lags["new"] == {T0: 40, T1: 0}  # an empty changelog: nothing to restore
    assert lags["owner"] == {T0: 0, T1: 0}


def test_an_end_unknown_for_one_task_leaves_only_that_task_unknown() -> None:
    sums = {"holder": {T0: 30, T1: 30}, "new": {}}
    lags = compute_task_lags(sums, [T0, T1], frozenset({T0, T1}), {T0: 40})
    assert lags["new"] == {T0: 40}  # T1: UNKNOWN_LAG (left out)
    assert lags["holder"] == {T0: 10, T1: 0}  # T1 relative to the best reported state


@pytest.mark.parametrize(("acceptable", "caught_up"), [(40, True), (39, False)])
def test_an_instance_without_state_is_caught_up_within_the_acceptable_lag(
    acceptable: int, caught_up: bool
) -> None:
    subtopologies, counts = single_source(2, stateful=True)
    config = AssignorConfig(acceptable_recovery_lag=acceptable)
    subs = members({"a": 1, "b": 1}, running={"a-t0": {T0, T1}})
    group = StreamsAssignor(subtopologies, config).assign(subs, counts, end_offset_sums={T0: 40, T1: 40})
    b = group.assignments["b-t0"]
    if caught_up:  # b gets its share at once (after a's hand-off), no warm-up
        assert len(group.withheld) == 1 and not b.warmup_tasks
        assert not group.result.probing_rebalance_needed
    else:  # a keeps both, b warms one up
        assert by_process(group, subs)["a"] == {T0, T1}
        assert len(b.warmup_tasks) == 1 and group.result.probing_rebalance_needed


def test_having_state_is_what_the_client_reported_not_a_finite_lag() -> None:
    with_state = ClientState("x", 1, local_state=frozenset({T0}), lags={T0: 40})
    without = ClientState("y", 1, lags={T0: 40})
    assert with_state.has_state(T0) and not without.has_state(T0)
    assert without.lag_for(T1) == UNKNOWN_LAG


def test_a_standby_goes_to_the_holder_of_the_state_over_an_equally_lagging_newcomer() -> None:
    # "z" holds state at offset sum 0, "c" holds none: both lag 40, both caught up
    clients = {
        "a": ClientState("a", 1, previous_active=frozenset({T0}), local_state=frozenset({T0}), lags={T0: 0}),
        "c": ClientState("c", 1, lags={T0: 40}),
        "z": ClientState("z", 1, local_state=frozenset({T0}), lags={T0: 40}),
    }
    TaskAssignor(AssignorConfig(num_standby_replicas=1)).assign(clients, [T0], frozenset({T0}))
    assert clients["a"].active == {T0}
    assert clients["z"].standby == {T0} and not clients["c"].standby
