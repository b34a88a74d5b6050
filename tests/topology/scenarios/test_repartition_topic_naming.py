"""Replays Kafka Streams' RepartitionTopicNamingTest (non-windowed cases): a Grouped name fixes the
repartition topic's name whatever operators sit before the grouping, and one name cannot be used
by two repartition topics."""

import pytest

from streams_runtime import Grouped, KeyValue, StreamsBuilder, TopologyError

from .support import repartition_sinks


def _stream_group_by_count(other_operations: bool, group_by_key: bool):
    builder = StreamsBuilder()
    select_key_stream = builder.stream("topic").select_key(lambda k, v: k + v)
    grouped = Grouped(name="kstream-grouping")
    if other_operations:
        select_key_stream = select_key_stream.filter(lambda k, v: True).map_values(lambda v: v)
    if group_by_key:
        select_key_stream.group_by_key(grouped).count()
    else:
        select_key_stream.group_by(lambda k, v: k, grouped).count()
    return builder.build()


@pytest.mark.parametrize("other_operations", [False, True])
def test_keeps_repartition_topic_name_for_group_by_key(other_operations):
    """Mirrors RepartitionTopicNamingTest.shouldKeepRepartitionTopicNameForGroupByKeyNoWindows."""
    topology = _stream_group_by_count(other_operations, group_by_key=True)
    assert "(topic: kstream-grouping-repartition)" in str(topology.describe())
    assert len(repartition_sinks(topology)) == 1


@pytest.mark.parametrize("other_operations", [False, True])
def test_keeps_repartition_topic_name_for_group_by(other_operations):
    """Mirrors RepartitionTopicNamingTest.shouldKeepRepartitionTopicNameForGroupByNoWindows."""
    topology = _stream_group_by_count(other_operations, group_by_key=False)
    assert "(topic: kstream-grouping-repartition)" in str(topology.describe())
    assert len(repartition_sinks(topology)) == 1


@pytest.mark.parametrize("other_operations", [False, True])
def test_keeps_repartition_topic_name_for_table_group_by(other_operations):
    """Mirrors RepartitionTopicNamingTest.shouldKeepRepartitionNameForGroupByKTable."""
    builder = StreamsBuilder()
    table = builder.table("topic")
    if other_operations:
        table = table.filter(lambda k, v: True)
    table.group_by(lambda k, v: KeyValue(k, v), Grouped(name="ktable-group-by")).count()
    assert "(topic: ktable-group-by-repartition)" in str(builder.build().describe())


def test_fails_when_two_groupings_share_a_repartition_name():
    """Mirrors RepartitionTopicNamingTest.shouldFailWithSameRepartitionTopicName."""
    builder = StreamsBuilder()
    builder.stream("topic").select_key(lambda k, v: k).group_by_key(
        Grouped(name="grouping")
    ).count().to_stream()
    builder.stream("topicII").select_key(lambda k, v: k).group_by_key(
        Grouped(name="grouping")
    ).count().to_stream()
    with pytest.raises(TopologyError):
        builder.build()


def test_same_grouped_table_shares_one_repartition_topic():
    """Mirrors RepartitionTopicNamingTest.shouldNotFailWithSameRepartitionTopicNameUsingSameKGroupedTable."""
    builder = StreamsBuilder()
    grouped_table = builder.table("topic").group_by(lambda k, v: KeyValue(k, v), Grouped(name="grouping"))
    grouped_table.count().to_stream().to("output-count")
    grouped_table.reduce(lambda v, v2: v2, lambda v, v2: v2).to_stream().to("output-reduce")
    topology = builder.build()
    assert len(repartition_sinks(topology)) == 1
    assert "grouping-repartition" in str(topology.describe())


def test_unnamed_grouped_table_gets_one_repartition_topic_per_aggregation():
    """Mirrors RepartitionTopicNamingTest
    .shouldNotReuseRepartitionNodeWithUnnamedRepartitionTopicsKGroupedTable."""
    builder = StreamsBuilder()
    grouped_table = builder.table("topic").group_by(lambda k, v: KeyValue(k, v))
    grouped_table.count().to_stream().to("output-count")
    grouped_table.reduce(lambda v, v2: v2, lambda v, v2: v2).to_stream().to("output-reduce")
    assert len(repartition_sinks(builder.build())) == 2
