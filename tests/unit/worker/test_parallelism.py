"""The parallelism math the worker prints at start."""

from __future__ import annotations

import pytest

from streams_runtime.parallelism import plan_parallelism, split_evenly


def test_should_give_every_thread_four_tasks_in_the_seeds_example() -> None:
    plan = plan_parallelism({0: 96}, instances=8, threads=3)
    assert plan.total_tasks == 96 and plan.total_threads == 24
    assert plan.min_tasks_per_thread == plan.max_tasks_per_thread == 4
    assert plan.idle_threads == 0
    assert "tasks per thread: 4 (96 / 24)" in plan.report()


def test_should_give_every_thread_two_tasks_for_12_partitions_on_3_x_2() -> None:
    plan = plan_parallelism({0: 12}, instances=3, threads=2)
    assert plan.tasks_per_instance == (4, 4, 4)
    assert plan.tasks_per_thread == ((2, 2), (2, 2), (2, 2))


def test_should_count_every_sub_topology_as_work_for_the_threads() -> None:
    plan = plan_parallelism({0: 6, 1: 6}, instances=2, threads=3)
    assert plan.total_tasks == 12 and plan.max_parallelism == 6
    assert plan.min_tasks_per_thread == plan.max_tasks_per_thread == 2
    assert plan.report()[0] == "tasks per sub-topology: sub-topology 0: 6, sub-topology 1: 6"


def test_should_report_idle_threads_beyond_the_task_count() -> None:
    plan = plan_parallelism({0: 4}, instances=3, threads=2)
    assert plan.tasks_per_instance == (2, 1, 1)
    assert plan.idle_threads == 2
    assert plan.min_tasks_per_thread == 0 and plan.max_tasks_per_thread == 1
    report = plan.report()
    assert "idle threads: 2" in report
    assert any(line.startswith("note: 2 thread(s) have no task") for line in report)


def test_should_report_uneven_shares_as_a_range() -> None:
    plan = plan_parallelism({0: 10}, instances=2, threads=2)
    assert plan.tasks_per_thread == ((3, 2), (3, 2))
    assert "tasks per thread: 2-3 (10 / 4)" in plan.report()


def test_should_split_as_evenly_as_integers_allow() -> None:
    assert split_evenly(7, 3) == [3, 2, 2]
    assert split_evenly(0, 2) == [0, 0]
    assert sum(split_evenly(97, 8)) == 97


@pytest.mark.parametrize(("instances", "threads", "word"), [(0, 1, "instances"), (1, 0, "threads")])
def test_should_reject_counts_below_one_naming_them(instances: int, threads: int, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        plan_parallelism({0: 4}, instances=instances, threads=threads)
