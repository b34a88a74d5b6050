"""Tasks from sub-topologies: co-partitioned sources, task counts, and clear errors."""

from __future__ import annotations

import pytest

from streams_runtime.processor.internals.assignment import (
    CopartitioningError,
    MissingSourceTopicError,
    SourcePartition,
    SubtopologySources,
    TaskId,
    partition_groups,
)

JOIN = SubtopologySources(1, ("orders", "customers"), (("orders", "customers"),), stateful=True)


def test_task_s_p_reads_partition_p_of_every_co_partitioned_source() -> None:
    groups = partition_groups(
        [SubtopologySources(0, ("clicks",)), JOIN], {"clicks": 2, "orders": 3, "customers": 3}
    )
    assert list(groups) == [TaskId(0, 0), TaskId(0, 1), TaskId(1, 0), TaskId(1, 1), TaskId(1, 2)]
    assert groups[TaskId(1, 2)] == (SourcePartition("customers", 2), SourcePartition("orders", 2))


def test_task_count_is_the_largest_source_partition_count() -> None:
    groups = partition_groups([SubtopologySources(0, ("a", "b"))], {"a": 2, "b": 4})
    assert len(groups) == 4
    assert groups[TaskId(0, 3)] == (SourcePartition("b", 3),)


def test_co_partitioning_mismatch_names_the_topics_and_counts() -> None:
    with pytest.raises(CopartitioningError, match=r"\{'customers': 4, 'orders': 3\}"):
        partition_groups([JOIN], {"orders": 3, "customers": 4})


def test_missing_source_topic_is_named() -> None:
    with pytest.raises(MissingSourceTopicError, match="customers"):
        partition_groups([JOIN], {"orders": 3})
