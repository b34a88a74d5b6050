"""Balance: tasks over instances weighted by threads, then over threads; idle threads beyond tasks."""

from __future__ import annotations

from collections import Counter

import pytest

from streams_runtime.processor.internals.assignment import (
    ConsumerBin,
    StreamsAssignor,
    SubtopologySources,
    TaskId,
    distribute_tasks,
)
from tests.unit.assignment.helpers import assert_each_active_once, by_process, members, single_source


@pytest.mark.parametrize(
    "partitions, instances, threads, per_thread",
    [(12, 3, 2, 2), (96, 8, 3, 4)],
    ids=["12-tasks-3x2", "96-tasks-8x3"],
)
def test_should_give_every_thread_the_same_number_of_tasks(
    partitions: int, instances: int, threads: int, per_thread: int
) -> None:
    subtopologies, counts = single_source(partitions)
    subs = members({f"p{i}": threads for i in range(instances)})
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    assert_each_active_once(group, partitions)
    assert {len(info.active_tasks) for info in group.assignments.values()} == {per_thread}


def test_one_member_per_instance_gets_its_threads_share_and_splits_it_locally() -> None:
    subtopologies, counts = single_source(12)
    subs = members({"p0": 2, "p1": 2, "p2": 2}, one_member_per_thread=False)
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    assert {len(info.active_tasks) for info in group.assignments.values()} == {4}
    per_thread = distribute_tasks(
        {"t0": ConsumerBin(1), "t1": ConsumerBin(1)}, set(group.assignments["p0"].active_tasks), set(), set()
    )
    assert [len(t.active) for t in per_thread.values()] == [2, 2]


def test_threads_beyond_the_task_count_sit_idle() -> None:
    subtopologies, counts = single_source(4)
    subs = members({"p0": 2, "p1": 2, "p2": 2})
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    assert_each_active_once(group, 4)
    sizes = Counter(len(info.active_tasks) for info in group.assignments.values())
    assert sizes == {1: 4, 0: 2}
    assert sorted(len(ts) for ts in by_process(group, subs).values()) == [1, 1, 2]


def test_instances_are_weighted_by_their_thread_counts() -> None:
    subtopologies, counts = single_source(9)
    subs = members({"small": 1, "big": 2})
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    assert {p: len(ts) for p, ts in by_process(group, subs).items()} == {"small": 3, "big": 6}


def test_tasks_of_each_sub_topology_are_spread_over_instances() -> None:
    subtopologies = [SubtopologySources(0, ("a",)), SubtopologySources(1, ("b",))]
    subs = members({"p0": 1, "p1": 1})
    group = StreamsAssignor(subtopologies).assign(subs, {"a": 4, "b": 4})
    for tasks in by_process(group, subs).values():
        assert Counter(t.subtopology for t in tasks) == {0: 2, 1: 2}


def test_assignment_is_deterministic_whatever_the_member_order() -> None:
    subtopologies, counts = single_source(10, stateful=True)
    state = {"p1-t0": {TaskId(0, 3): 50}, "p2-t1": {TaskId(0, 3): 70, TaskId(0, 4): 1}}
    subs = members({"p0": 2, "p1": 2, "p2": 2}, state=state)
    reversed_subs = dict(reversed(list(subs.items())))
    assignor = StreamsAssignor(subtopologies)
    first = assignor.assign_user_data({m: s.encode() for m, s in subs.items()}, counts)
    second = assignor.assign_user_data({m: s.encode() for m, s in reversed_subs.items()}, counts)
    assert first == second
