"""Stickiness: joins and leaves move only what balance requires; hand-offs never double-own a task."""

from __future__ import annotations

from streams_runtime.processor.internals.assignment import (
    RebalanceRequest,
    StreamsAssignor,
    SubscriptionInfo,
    TaskId,
)
from tests.unit.assignment.helpers import (
    active_of,
    assert_each_active_once,
    by_process,
    members,
    settle,
    single_source,
)


def _tasks(*partitions: int) -> set[TaskId]:
    return {TaskId(0, p) for p in partitions}


def test_a_joining_instance_takes_only_what_balance_requires() -> None:
    subtopologies, counts = single_source(12)
    before = {"a-t0": _tasks(*range(0, 6)), "b-t0": _tasks(*range(6, 12))}
    rounds, group, subs = settle(StreamsAssignor(subtopologies), {"a": 1, "b": 1, "c": 1}, counts, before)
    after = active_of(group)
    assert_each_active_once(group, 12)
    assert {len(ts) for ts in after.values()} == {4}
    assert after["a-t0"] <= before["a-t0"] and after["b-t0"] <= before["b-t0"]
    moved = sum(1 for m, ts in after.items() for t in ts if t not in before.get(m, set()))
    assert moved == 4
    assert rounds == 2  # one hand-off round: the old owners revoke first


def test_a_leaving_instance_hands_its_tasks_to_the_survivors_without_moving_theirs() -> None:
    subtopologies, counts = single_source(12)
    before = {"a-t0": _tasks(0, 1, 2, 3), "b-t0": _tasks(4, 5, 6, 7), "c-t0": _tasks(8, 9, 10, 11)}
    survivors = {m: ts for m, ts in before.items() if m != "c-t0"}
    rounds, group, _ = settle(StreamsAssignor(subtopologies), {"a": 1, "b": 1}, counts, survivors)
    after = active_of(group)
    assert rounds == 1  # nobody claims the leaver's tasks: no hand-off needed
    assert after["a-t0"] >= before["a-t0"] and after["b-t0"] >= before["b-t0"]
    assert {len(ts) for ts in after.values()} == {6}


def test_a_moving_task_is_withheld_until_its_owner_revoked_it() -> None:
    subtopologies, counts = single_source(4)
    subs = members({"a": 1, "b": 1}, running={"a-t0": _tasks(0, 1, 2, 3)})
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    a, b = group.assignments["a-t0"], group.assignments["b-t0"]
    assert len(a.active_tasks) == 2 and b.active_tasks == set()
    assert group.withheld == _tasks(0, 1, 2, 3) - a.active_tasks
    assert a.rebalance is RebalanceRequest.IMMEDIATE and b.rebalance is RebalanceRequest.NONE
    migrating = {p.partition for ps in a.partitions_by_host.values() for p in ps}
    assert migrating == {t.partition for t in a.active_tasks}  # withheld tasks are under no host
    # next generation: a no longer claims them, so b gets them
    next_subs = members({"a": 1, "b": 1}, running={"a-t0": set(a.active_tasks)})
    nxt = StreamsAssignor(subtopologies).assign(next_subs, counts)
    assert nxt.assignments["b-t0"].active_tasks == group.withheld
    assert nxt.assignments["a-t0"].active_tasks == a.active_tasks


def test_a_task_stays_on_its_thread_within_an_instance() -> None:
    subtopologies, counts = single_source(6)
    running = {"a-t0": _tasks(0, 3, 5), "a-t1": _tasks(1, 2, 4)}
    _, group, _ = settle(StreamsAssignor(subtopologies), {"a": 2}, counts, running)
    assert active_of(group) == running


def test_a_stateful_task_whose_owner_left_goes_to_the_most_caught_up_instance() -> None:
    subtopologies, counts = single_source(2, stateful=True)
    state = {"b-t0": {TaskId(0, 0): 900}, "c-t0": {TaskId(0, 0): 990}}
    subs = members({"b": 1, "c": 1}, state=state)
    group = StreamsAssignor(subtopologies).assign(subs, counts, end_offset_sums={TaskId(0, 0): 1000})
    assert TaskId(0, 0) in group.assignments["c-t0"].active_tasks


def test_an_undecodable_member_gets_an_error_and_the_rest_are_assigned() -> None:
    subtopologies, counts = single_source(4)
    good = SubscriptionInfo("a", None, {}).encode()
    out = StreamsAssignor(subtopologies).assign_user_data({"a-t0": good, "zombie": b"\x00"}, counts)
    from streams_runtime.processor.internals.assignment import AssignmentInfo, AssignorError

    assert AssignmentInfo.decode(out["zombie"]).error is AssignorError.UNDECODABLE_SUBSCRIPTION
    assert len(AssignmentInfo.decode(out["a-t0"]).active_tasks) == 4


def test_missing_or_mismatched_source_topics_give_every_member_the_error() -> None:
    from streams_runtime.processor.internals.assignment import AssignorError, SubtopologySources

    join = [SubtopologySources(0, ("l", "r"), (("l", "r"),))]
    subs = members({"a": 1, "b": 1})
    mismatch = StreamsAssignor(join).assign(subs, {"l": 2, "r": 3})
    missing = StreamsAssignor(join).assign(subs, {"l": 2})
    assert {i.error for i in mismatch.assignments.values()} == {AssignorError.COPARTITIONING_MISMATCH}
    assert {i.error for i in missing.assignments.values()} == {AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA}
    assert all(not i.active_tasks for i in mismatch.assignments.values())
    assert by_process(mismatch, subs) == {"a": set(), "b": set()}
