"""Tasks from sub-topologies and partition counts (Kafka Streams' partition grouper).

Pure functions, used by the leader's :class:`~.streams_assignor.StreamsAssignor` and by anyone
who needs the task -> partitions map (the runtime assigns a task's partitions to its consumer).

Rules:
  - sub-topology ``s`` has as many tasks as the largest partition count among its source topics;
  - task ``s_p`` reads partition ``p`` of every source topic of ``s`` that has a partition ``p``
    (with co-partitioned sources, that is every source);
  - the topics of each co-partition group (the inputs of a join) must have equal partition
    counts, otherwise :class:`CopartitioningError` names the topics and their counts;
  - a source topic without metadata raises :class:`MissingSourceTopicError` naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from streams_runtime.errors import MissingSourceTopicError, TopologyError
from streams_runtime.processor.task_id import TaskId


class SourcePartition(NamedTuple):
    """A (topic, partition) pair, free of any client library's type."""

    topic: str
    partition: int


class CopartitioningError(TopologyError):
    """Co-partitioned source topics have different partition counts."""


@dataclass(frozen=True)
class SubtopologySources:
    """What the assignor needs to know about one sub-topology.

    :param subtopology: the sub-topology id (the ``s`` of task ``s_p``).
    :param source_topics: every topic the sub-topology reads, repartition topics included.
    :param copartition_groups: groups of source topics that must have equal partition counts.
    :param stateful: whether its tasks have state (a changelog): only stateful tasks get standbys,
        warm-ups and lag-aware placement.
    """

    subtopology: int
    source_topics: tuple[str, ...]
    copartition_groups: tuple[tuple[str, ...], ...] = field(default=())
    stateful: bool = False

    def __post_init__(self) -> None:
        if not self.source_topics:
            raise ValueError(f"sub-topology {self.subtopology} has no source topics")


def all_source_topics(subtopologies: Iterable[SubtopologySources]) -> set[str]:
    """Every source topic of every sub-topology (what a member subscribes to)."""
    return {topic for sub in subtopologies for topic in sub.source_topics}


def partition_groups(
    subtopologies: Sequence[SubtopologySources], partition_counts: Mapping[str, int]
) -> dict[TaskId, tuple[SourcePartition, ...]]:
    """Map every task to the source partitions it reads, in task order.

    :param partition_counts: topic -> partition count, from cluster metadata.
    :raises MissingSourceTopicError: a source topic is absent or has no partitions.
    :raises CopartitioningError: a co-partition group's topics disagree on the partition count.
    """
    missing = sorted(t for t in all_source_topics(subtopologies) if partition_counts.get(t, 0) <= 0)
    if missing:
        raise MissingSourceTopicError(f"source topics without partition metadata: {missing}")
    groups: dict[TaskId, tuple[SourcePartition, ...]] = {}
    for sub in sorted(subtopologies, key=lambda s: s.subtopology):
        count = task_count(sub.subtopology, sub.source_topics, sub.copartition_groups, partition_counts)
        for partition in range(count):
            groups[TaskId(sub.subtopology, partition)] = tuple(
                SourcePartition(topic, partition)
                for topic in sorted(sub.source_topics)
                if partition < partition_counts[topic]
            )
    return groups


def task_count(
    subtopology: int,
    source_topics: Iterable[str],
    copartition_groups: Iterable[Iterable[str]],
    partition_counts: Mapping[str, int],
) -> int:
    """The number of tasks of one sub-topology: the largest partition count of its sources, after
    checking that every co-partition group agrees. The one home of both rules: the start-up
    checks (:mod:`..topology_info`) and the assignor (:func:`partition_groups`) call it.

    :raises CopartitioningError: a co-partition group's topics disagree on the partition count.
    """
    for group in copartition_groups:
        counts = {topic: partition_counts[topic] for topic in group}
        if len(set(counts.values())) > 1:
            raise CopartitioningError(
                f"topics not co-partitioned in sub-topology {subtopology}: {dict(sorted(counts.items()))}; "
                f"co-partitioned sources (joins) must have the same number of partitions"
            )
    return max(partition_counts[t] for t in source_topics)


def stateful_tasks(subtopologies: Iterable[SubtopologySources], tasks: Iterable[TaskId]) -> frozenset[TaskId]:
    """The tasks that belong to stateful sub-topologies."""
    stateful = {sub.subtopology for sub in subtopologies if sub.stateful}
    return frozenset(task for task in tasks if task.subtopology in stateful)
