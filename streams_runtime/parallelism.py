"""The parallelism math of an application: tasks, threads, tasks per thread, idle threads.

Pure functions, no Kafka: the worker launcher prints :func:`plan_parallelism`'s report at start
so an operator sees what N instances x M threads will do with a topology before anything runs.

The model is Kafka Streams' (and the assignor's in ``processor/internals/assignment/``):

- a sub-topology has as many tasks as its source topics have partitions (``Topology.task_counts``);
- every task of every sub-topology is one unit of work; the assignor balances all of them over
  the instances, weighted by thread count, and then each instance's share over its threads, each
  bin getting ``floor(share)`` or one more (``balance.quotas``);
- a thread with no task is idle; the most threads that can ever be busy is the total task count,
  and one sub-topology alone can use at most its own task count (the seeds' "max parallelism").

The seeds' example: 96 partitions, 8 instances x 3 threads = 24 threads, 4 tasks per thread,
no idle thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


def split_evenly(total: int, bins: int) -> list[int]:
    """``total`` items over ``bins`` bins as evenly as integers allow, larger shares first."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    base, extra = divmod(total, bins)
    return [base + 1 if i < extra else base for i in range(bins)]


@dataclass(frozen=True)
class ParallelismPlan:
    """What ``instances`` x ``threads`` make of a topology's tasks.

    :ivar tasks_per_subtopology: sub-topology id -> task count.
    :ivar instances: worker processes sharing the application id.
    :ivar threads_per_instance: stream threads in each instance.
    :ivar tasks_per_instance: the balanced share of each instance (instance order is arbitrary).
    :ivar tasks_per_thread: per instance, the share of each of its threads.
    """

    tasks_per_subtopology: Mapping[int, int]
    instances: int
    threads_per_instance: int
    tasks_per_instance: tuple[int, ...]
    tasks_per_thread: tuple[tuple[int, ...], ...]

    @property
    def total_tasks(self) -> int:
        return sum(self.tasks_per_subtopology.values())

    @property
    def total_threads(self) -> int:
        return self.instances * self.threads_per_instance

    @property
    def idle_threads(self) -> int:
        return sum(1 for shares in self.tasks_per_thread for n in shares if n == 0)

    @property
    def min_tasks_per_thread(self) -> int:
        return min(n for shares in self.tasks_per_thread for n in shares)

    @property
    def max_tasks_per_thread(self) -> int:
        return max(n for shares in self.tasks_per_thread for n in shares)

    @property
    def max_parallelism(self) -> int:
        """The largest task count of one sub-topology (what one stage can spread over)."""
        return max(self.tasks_per_subtopology.values(), default=0)

    def report(self) -> list[str]:
        """The human-readable lines the worker prints at start."""
        subs = ", ".join(f"sub-topology {s}: {n}" for s, n in sorted(self.tasks_per_subtopology.items()))
        lo, hi = self.min_tasks_per_thread, self.max_tasks_per_thread
        per_thread = f"{lo}" if lo == hi else f"{lo}-{hi}"
        n, m = self.instances, self.threads_per_instance
        lines = [
            f"tasks per sub-topology: {subs or 'none'}",
            f"total tasks: {self.total_tasks} (largest sub-topology: {self.max_parallelism} tasks)",
            f"threads: {n} instances x {m} threads = {self.total_threads}",
            f"tasks per thread: {per_thread} ({self.total_tasks} / {self.total_threads})",
            f"tasks per instance: {', '.join(str(n) for n in self.tasks_per_instance)}",
            f"idle threads: {self.idle_threads}",
        ]
        if self.idle_threads:
            lines.append(
                f"note: {self.idle_threads} thread(s) have no task; more threads than "
                f"{self.total_tasks} tasks add nothing until partitions are added"
            )
        return lines


def plan_parallelism(task_counts: Mapping[int, int], instances: int, threads: int) -> ParallelismPlan:
    """Balance the tasks of ``task_counts`` over ``instances`` x ``threads`` as the assignor does.

    :param task_counts: sub-topology id -> task count (``topology.task_counts(partitions)``).
    :param instances: number of worker processes (>= 1).
    :param threads: stream threads per instance (>= 1).
    :raises ValueError: for a count below 1, naming it.
    """
    if instances < 1:
        raise ValueError(f"instances must be >= 1, got {instances}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    total = sum(task_counts.values())
    per_instance = split_evenly(total, instances)
    per_thread = tuple(tuple(split_evenly(share, threads)) for share in per_instance)
    return ParallelismPlan(
        tasks_per_subtopology=dict(task_counts),
        instances=instances,
        threads_per_instance=threads,
        tasks_per_instance=tuple(per_instance),
        tasks_per_thread=per_thread,
    )
