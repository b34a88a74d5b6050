"""Replays Kafka Streams' CogroupedKStreamImplTest, TimeWindowedCogroupedKStreamImplTest,
SlidingWindowedCogroupedKStreamImplTest and SessionWindowedCogroupedKStreamImplTest: names, repartition
topics and describe() of cogrouped aggregations, and their results through the test driver."""

import pytest

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    SessionWindows,
    SlidingWindows,
    StreamsBuilder,
    TimeWindows,
    TopologyTestDriver,
)

from . import cogroup_describes as expected
from .support import records
from .windows_joins_support import string_init, to_string_adder

S = Serdes.String()
STRING_CONSUMED = Consumed.with_(S, S)


def string_aggregator(key, value, aggregate):
    """CogroupedKStreamImplTest's STRING_AGGREGATOR: ``aggregate + value``."""
    return aggregate + value


def string_sum_aggregator(key, value, aggregate):
    return aggregate + int(value)


def sum_aggregator(key, value, aggregate):
    return aggregate + value


def to_string_remover(key, value, aggregate):
    """``MockAggregator.TOSTRING_REMOVER``: ``aggregate + "-" + value``."""
    return f"{aggregate}-{value}"


def _swap(key, value):
    return value, key


def _two_streams(builder):
    return builder.stream("one", STRING_CONSUMED), builder.stream("two", STRING_CONSUMED)


# ---------------------------------------------------------------- describe()


def test_should_name_processors_and_store_based_on_named_parameter():
    """Mirrors CogroupedKStreamImplTest.shouldNameProcessorsAndStoreBasedOnNamedParameter."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_two = two.group_by_key()
    table = (
        one.group_by_key()
        .cogroup(string_aggregator)
        .cogroup(grouped_two, string_aggregator)
        .aggregate(lambda: "", Materialized.as_("store"), name="test")
    )
    table.to_stream().to("output")
    text = str(builder.build().describe())
    assert "Processor: test-cogroup-agg-0 (stores: [store])" in text
    assert "Processor: test-cogroup-merge (stores: [])\n      --> KTABLE-TOSTREAM-0000000005\n" in text
    assert "      <-- test-cogroup-agg-0, test-cogroup-agg-1\n" in text
    assert "Sink: KSTREAM-SINK-0000000006 (topic: output)" in text


def test_should_name_repartition_topic():
    """Mirrors CogroupedKStreamImplTest.shouldNameRepartitionTopic."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_one = one.map(_swap).group_by_key(Grouped.as_("repartition-test"))
    grouped_two = two.group_by_key()
    table = (
        grouped_one.cogroup(string_aggregator).cogroup(grouped_two, string_aggregator).aggregate(lambda: "")
    )
    table.to_stream().to("output")
    assert str(builder.build().describe()) == expected.NAME_REPARTITION_TOPIC


def test_should_insert_repartition_topic_for_upstream_key_modification():
    """Mirrors CogroupedKStreamImplTest.shouldInsertRepartitionsTopicForUpstreamKeyModification."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_one = one.map(_swap).group_by_key()
    grouped_two = two.group_by_key()
    table = (
        grouped_one.cogroup(string_aggregator)
        .cogroup(grouped_two, string_aggregator)
        .aggregate(lambda: "", Materialized.as_("store"), name="test")
    )
    table.to_stream().to("output")
    topology = builder.build()
    assert str(topology.describe()) == expected.UPSTREAM_KEY_MODIFICATION
    groups = [sorted(g) for g in topology.internal_builder.copartition_groups]
    assert ["KSTREAM-SOURCE-0000000001", "store-repartition-source"] in groups


def test_should_insert_repartition_topics_for_grouped_reused_in_same_cogroups():
    """Mirrors CogroupedKStreamImplTest.shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGrouped
    ReusedInSameCogroups: each cogroup gets its own repartition topic."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_one = one.map(_swap).group_by_key()
    grouped_two = two.group_by_key()
    cogrouped_two = (
        grouped_one.cogroup(string_aggregator).cogroup(grouped_two, string_aggregator).aggregate(lambda: "")
    )
    cogrouped_one = (
        grouped_one.cogroup(string_aggregator).cogroup(grouped_two, string_aggregator).aggregate(lambda: "")
    )
    cogrouped_one.to_stream().to("output")
    cogrouped_two.to_stream().to("OUTPUT2")
    assert str(builder.build().describe()) == expected.GROUPED_REUSED_IN_SAME_COGROUPS


def test_should_insert_repartition_topics_for_grouped_reused_in_different_cogroups():
    """Mirrors CogroupedKStreamImplTest.shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGrouped
    ReusedInDifferentCogroups."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    three = builder.stream("three", STRING_CONSUMED)
    grouped_one = one.map(_swap).group_by_key()
    grouped_two = two.group_by_key()
    grouped_three = three.group_by_key()
    grouped_one.cogroup(string_aggregator).cogroup(grouped_three, string_aggregator).aggregate(lambda: "")
    grouped_one.cogroup(string_aggregator).cogroup(grouped_two, string_aggregator).aggregate(lambda: "")
    assert str(builder.build().describe()) == expected.GROUPED_REUSED_IN_DIFFERENT_COGROUPS


def test_should_insert_repartition_topics_for_grouped_reused_by_a_plain_aggregate():
    """Mirrors CogroupedKStreamImplTest.shouldInsertRepartitionsTopicForUpstreamKeyModificationWithGrouped
    Reused: the cogroup and a plain aggregate of the same grouped stream each repartition."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_one = one.map(_swap).group_by_key()
    grouped_two = two.group_by_key()
    grouped_one.cogroup(string_aggregator).cogroup(grouped_two, string_aggregator).aggregate(lambda: "")
    grouped_one.aggregate(lambda: "", string_aggregator)
    assert str(builder.build().describe()) == expected.GROUPED_REUSED


def test_should_insert_one_repartition_topic_for_a_cogroup_aggregated_twice():
    """Mirrors CogroupedKStreamImplTest.shouldInsertRepartitionsTopicForCogroupsUsedTwice: the second
    aggregation re-uses the named repartition topic."""
    builder = StreamsBuilder()
    one = builder.stream("one", STRING_CONSUMED)
    cogrouped = one.map(_swap).group_by_key(Grouped.as_("foo")).cogroup(string_aggregator)
    cogrouped.aggregate(lambda: "")
    cogrouped.aggregate(lambda: "")
    assert str(builder.build().describe()) == expected.COGROUPS_USED_TWICE


def test_cogroup_rejects_bad_arguments():
    """Mirrors CogroupedKStreamImplTest's null-argument checks (shouldNotHaveNullAggregatorOnCogroup,
    shouldNotHaveNullInitializerOnAggregate, shouldThrowNPEInCogroupIfKGroupedStreamIsNull)."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key()
    with pytest.raises(TypeError, match="aggregator"):
        grouped.cogroup(None)
    cogrouped = grouped.cogroup(to_string_adder)
    with pytest.raises(TypeError, match="KGroupedStream"):
        cogrouped.cogroup(None, to_string_adder)
    with pytest.raises(TypeError, match="initializer"):
        cogrouped.aggregate(None)
    with pytest.raises(TypeError, match="windowed_by"):
        cogrouped.windowed_by(None)


# ---------------------------------------------------------------- results


def _run(builder, inputs, value_serde=S, config=None):
    """Pipe ``(topic, key, value, timestamp, serde)`` records; the output as (key, value, timestamp)."""
    with TopologyTestDriver(builder.build(), config) as driver:
        topics = {}
        for topic, key, value, timestamp, serde in inputs:
            if topic not in topics:
                topics[topic] = driver.create_input_topic(topic, S, serde)
            topics[topic].pipe_input(key, value, timestamp)
        return records(driver.create_output_topic("output", S, value_serde))


def _rows(topic, rows, serde=S):
    return [(topic, key, value, ts, serde) for key, value, ts in rows]


def test_should_cogroup_and_aggregate_single_kstream(make_config):
    """Mirrors CogroupedKStreamImplTest.shouldCogroupAndAggregateSingleKStreams."""
    builder = StreamsBuilder()
    builder.stream("one", STRING_CONSUMED).group_by_key().cogroup(string_aggregator).aggregate(
        lambda: ""
    ).to_stream().to("output")
    out = _run(
        builder,
        _rows("one", [("k1", "A", 0), ("k2", "B", 0), ("k2", "B", 0), ("k1", "A", 0)]),
        config=make_config(),
    )
    assert out == [("k1", "A", 0), ("k2", "B", 0), ("k2", "BB", 0), ("k1", "AA", 0)]


def test_cogroup_handles_null_values(make_config):
    """Mirrors CogroupedKStreamImplTest.testCogroupHandleNullValues: a null value is skipped."""
    builder = StreamsBuilder()
    builder.stream("one", STRING_CONSUMED).group_by_key().cogroup(string_aggregator).aggregate(
        lambda: ""
    ).to_stream().to("output")
    rows = [("k1", "A", 0), ("k2", "B", 0), ("k2", None, 0), ("k2", "B", 0), ("k1", "A", 0)]
    out = _run(builder, _rows("one", rows), config=make_config())
    assert out == [("k1", "A", 0), ("k2", "B", 0), ("k2", "BB", 0), ("k1", "AA", 0)]


def _two_input_table(builder, first_aggregator, second_aggregator, initializer, materialized=None):
    one, two = _two_streams(builder)
    grouped_two = two.group_by_key()
    return (
        one.group_by_key()
        .cogroup(first_aggregator)
        .cogroup(grouped_two, second_aggregator)
        .aggregate(initializer, materialized)
    )


def test_should_cogroup_and_aggregate_two_kstreams_with_distinct_keys(make_config):
    """Mirrors CogroupedKStreamImplTest.shouldCogroupAndAggregateTwoKStreamsWithDistinctKeys."""
    builder = StreamsBuilder()
    _two_input_table(builder, string_aggregator, string_aggregator, lambda: "").to_stream().to("output")
    inputs = _rows("one", [("k1", "A", 0), ("k1", "A", 1), ("k1", "A", 10), ("k1", "A", 100)]) + _rows(
        "two",
        [
            ("k2", "B", 100),
            ("k2", "B", 200),
            ("k2", "B", 1),
            ("k2", "B", 500),
            ("k2", "B", 500),
            ("k2", "B", 100),
        ],
    )
    assert _run(builder, inputs, config=make_config()) == [
        ("k1", "A", 0),
        ("k1", "AA", 1),
        ("k1", "AAA", 10),
        ("k1", "AAAA", 100),
        ("k2", "B", 100),
        ("k2", "BB", 200),
        ("k2", "BBB", 200),
        ("k2", "BBBB", 500),
        ("k2", "BBBBB", 500),
        ("k2", "BBBBBB", 500),
    ]


SHARED_KEYS_ONE = [("k1", "A", 0), ("k2", "A", 1), ("k1", "A", 10), ("k2", "A", 100)]
SHARED_KEYS_TWO = [
    ("k2", "B", 100),
    ("k2", "B", 200),
    ("k1", "B", 1),
    ("k2", "B", 500),
    ("k1", "B", 500),
    ("k2", "B", 500),
    ("k3", "B", 500),
    ("k2", "B", 100),
]


def test_should_cogroup_and_aggregate_two_kstreams_with_shared_keys(make_config):
    """Mirrors CogroupedKStreamImplTest.shouldCogroupAndAggregateTwoKStreamsWithSharedKeys."""
    builder = StreamsBuilder()
    _two_input_table(builder, string_aggregator, string_aggregator, lambda: "").to_stream().to("output")
    out = _run(builder, _rows("one", SHARED_KEYS_ONE) + _rows("two", SHARED_KEYS_TWO), config=make_config())
    assert out[:10] == [
        ("k1", "A", 0),
        ("k2", "A", 1),
        ("k1", "AA", 10),
        ("k2", "AA", 100),
        ("k2", "AAB", 100),
        ("k2", "AABB", 200),
        ("k1", "AAB", 10),
        ("k2", "AABBB", 500),
        ("k1", "AABB", 500),
        ("k2", "AABBBB", 500),
    ]


SUM_ONE = [("k1", "1", 0), ("k2", "1", 1), ("k1", "1", 10), ("k2", "1", 100)]
SUM_TWO = [
    ("k2", 2, 100),
    ("k2", 2, 200),
    ("k1", 2, 1),
    ("k2", 2, 500),
    ("k1", 2, 500),
    ("k2", 3, 500),
    ("k3", 2, 500),
    ("k2", 2, 100),
]
SUM_EXPECTED = [
    ("k1", 1, 0),
    ("k2", 1, 1),
    ("k1", 2, 10),
    ("k2", 2, 100),
    ("k2", 4, 100),
    ("k2", 6, 200),
    ("k1", 4, 10),
    ("k2", 8, 500),
    ("k1", 6, 500),
    ("k2", 11, 500),
]


def test_should_allow_different_output_type_in_cogroup(make_config):
    """Mirrors CogroupedKStreamImplTest.shouldAllowDifferentOutputTypeInCoGroup: string inputs, int sums."""
    builder = StreamsBuilder()
    _two_input_table(
        builder,
        string_sum_aggregator,
        string_sum_aggregator,
        lambda: 0,
        Materialized.as_("store1").with_value_serde(Serdes.Integer()),
    ).to_stream().to("output")
    two = [(k, str(v), ts) for k, v, ts in SUM_TWO]
    out = _run(builder, _rows("one", SUM_ONE) + _rows("two", two), Serdes.Integer(), make_config())
    assert out[:10] == SUM_EXPECTED


def test_should_cogroup_streams_with_different_input_types(make_config):
    """Mirrors CogroupedKStreamImplTest.shouldCoGroupStreamsWithDifferentInputTypes: a string stream and an
    integer stream summed into one table."""
    builder = StreamsBuilder()
    one = builder.stream("one", STRING_CONSUMED)
    two = builder.stream("two", Consumed.with_(S, Serdes.Integer()))
    grouped_two = two.group_by_key()
    (
        one.group_by_key()
        .cogroup(string_sum_aggregator)
        .cogroup(grouped_two, sum_aggregator)
        .aggregate(lambda: 0, Materialized.as_("store1").with_value_serde(Serdes.Integer()))
        .to_stream()
        .to("output")
    )
    inputs = _rows("one", SUM_ONE) + _rows("two", SUM_TWO, Serdes.Integer())
    assert _run(builder, inputs, Serdes.Integer(), make_config()) == [
        *SUM_EXPECTED,
        ("k3", 2, 500),
        ("k2", 13, 500),
    ]


def test_cogroup_key_mixed_aggregators(make_config):
    """Mirrors CogroupedKStreamImplTest.testCogroupKeyMixedAggregators: a remover on one input, an adder on
    the other."""
    builder = StreamsBuilder()
    _two_input_table(
        builder,
        to_string_remover,
        to_string_adder,
        string_init,
        Materialized.as_("store1").with_value_serde(S),
    ).to_stream().to("output")
    inputs = _rows("one", [("k1", "1", 0), ("k2", "1", 1), ("k1", "1", 10), ("k2", "1", 100)]) + _rows(
        "two", [("k1", "2", 500), ("k2", "2", 500), ("k1", "2", 500), ("k2", "2", 100)]
    )
    assert _run(builder, inputs, config=make_config()) == [
        ("k1", "0-1", 0),
        ("k2", "0-1", 1),
        ("k1", "0-1-1", 10),
        ("k2", "0-1-1", 100),
        ("k1", "0-1-1+2", 500),
        ("k2", "0-1-1+2", 500),
        ("k1", "0-1-1+2+2", 500),
        ("k2", "0-1-1+2+2", 500),
    ]


def test_cogroup_with_three_grouped_streams(make_config):
    """Mirrors CogroupedKStreamImplTest.testCogroupWithThreeGroupedStreams."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    three = builder.stream("three", STRING_CONSUMED)
    grouped_two, grouped_three = two.group_by_key(), three.group_by_key()
    (
        one.group_by_key()
        .cogroup(string_aggregator)
        .cogroup(grouped_two, string_aggregator)
        .cogroup(grouped_three, string_aggregator)
        .aggregate(lambda: "")
        .to_stream()
        .to("output")
    )
    inputs = (
        _rows("one", [("k1", "A", 0), ("k2", "A", 1), ("k1", "A", 10), ("k2", "A", 100)])
        + _rows("two", [("k2", "B", 100), ("k2", "B", 200), ("k1", "B", 1), ("k2", "B", 500)])
        + _rows("three", [("k1", "B", 500), ("k2", "B", 500), ("k3", "B", 500), ("k2", "B", 100)])
    )
    assert _run(builder, inputs, config=make_config())[:11] == [
        ("k1", "A", 0),
        ("k2", "A", 1),
        ("k1", "AA", 10),
        ("k2", "AA", 100),
        ("k2", "AAB", 100),
        ("k2", "AABB", 200),
        ("k1", "AAB", 10),
        ("k2", "AABBB", 500),
        ("k1", "AABB", 500),
        ("k2", "AABBBB", 500),
        ("k3", "B", 500),
    ]


def test_cogroup_with_ktable_ktable_inner_join(make_config):
    """Mirrors CogroupedKStreamImplTest.testCogroupWithKTableKTableInnerJoin: the cogrouped table's store
    answers the join's lookups."""
    builder = StreamsBuilder()
    one, two = _two_streams(builder)
    grouped_two = two.group_by_key()
    table1 = (
        one.group_by_key()
        .cogroup(string_aggregator)
        .cogroup(grouped_two, string_aggregator)
        .aggregate(lambda: "", Materialized.as_("store"), name="name")
    )
    table2 = builder.table("three", STRING_CONSUMED)
    table1.join(table2, lambda a, b: f"{a}+{b}", Materialized.with_(S, S)).to_stream().to("output")
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        inputs = {t: driver.create_input_topic(t, S, S) for t in ("one", "two", "three")}
        output = driver.create_output_topic("output", S, S)
        inputs["one"].pipe_input("k1", "A", 5)
        inputs["two"].pipe_input("k2", "B", 6)
        assert output.is_empty()
        inputs["three"].pipe_input("k1", "C", 0)
        inputs["three"].pipe_input("k2", "D", 10)
        assert records(output) == [("k1", "A+C", 5), ("k2", "B+D", 10)]


# ---------------------------------------------------------------- windowed cogroups


def _windowed_records(builder, inputs, config, value_serde=S):
    """Output records as (key.key, value, timestamp), what the windowed tests' assertions compare."""
    seen = []
    builder_table, topology = builder
    builder_table.to_stream().process(lambda: _Collect(seen))
    with TopologyTestDriver(topology.build(), config) as driver:
        topics = {}
        for topic, key, value, timestamp in inputs:
            if topic not in topics:
                topics[topic] = driver.create_input_topic(topic, S, S)
            topics[topic].pipe_input(key, value, timestamp)
    return seen


class _Collect:
    def __init__(self, seen):
        self.seen = seen

    def init(self, context):
        pass

    def process(self, record):
        self.seen.append((record.key.key, record.value, record.timestamp))

    def close(self):
        pass


def _time_cogroup(builder, windows, second=True):
    """The windowed tests' setup: ``topic`` with TOSTRING_ADDER, ``topic2`` with TOSTRING_REMOVER."""
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
    cogrouped = grouped.cogroup(to_string_adder)
    if second:
        grouped2 = builder.stream("topic2", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
        cogrouped = cogrouped.cogroup(grouped2, to_string_remover)
    return cogrouped.windowed_by(windows)


def test_time_windowed_cogroup_named_param_sets_name():
    """Mirrors TimeWindowedCogroupedKStreamImplTest.namedParamShouldSetName."""
    builder = StreamsBuilder()
    _time_cogroup(builder, TimeWindows.of_size_with_no_grace(500), second=False).aggregate(
        string_init, name="foo"
    )
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n"
        "      --> foo-cogroup-agg-0\n"
        "    Processor: foo-cogroup-agg-0 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> foo-cogroup-merge\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: foo-cogroup-merge (stores: [])\n"
        "      --> none\n"
        "      <-- foo-cogroup-agg-0\n\n"
    )


def test_time_window_aggregate_one_stream(make_config):
    """Mirrors TimeWindowedCogroupedKStreamImplTest.timeWindowAggregateTestStreamsTest."""
    builder = StreamsBuilder()
    table = _time_cogroup(builder, TimeWindows.of_size_with_no_grace(500)).aggregate(
        string_init, Materialized.with_(S, S)
    )
    rows = [
        ("k1", "A", 0),
        ("k2", "A", 0),
        ("k2", "A", 1),
        ("k1", "A", 2),
        ("k1", "B", 3),
        ("k2", "B", 3),
        ("k2", "B", 4),
        ("k1", "B", 4),
    ]
    seen = _windowed_records((table, builder), [("topic", *r) for r in rows], make_config())
    assert seen == [
        ("k1", "0+A", 0),
        ("k2", "0+A", 0),
        ("k2", "0+A+A", 1),
        ("k1", "0+A+A", 2),
        ("k1", "0+A+A+B", 3),
        ("k2", "0+A+A+B", 3),
        ("k2", "0+A+A+B+B", 4),
        ("k1", "0+A+A+B+B", 4),
    ]


def test_time_window_mix_aggregators(make_config):
    """Mirrors TimeWindowedCogroupedKStreamImplTest.timeWindowMixAggregatorsTest."""
    builder = StreamsBuilder()
    table = _time_cogroup(builder, TimeWindows.of_size_with_no_grace(500)).aggregate(
        string_init, Materialized.with_(S, S)
    )
    inputs = [
        ("topic", "k1", "A", 0),
        ("topic", "k2", "A", 0),
        ("topic", "k2", "A", 1),
        ("topic", "k1", "A", 2),
    ]
    inputs += [
        ("topic2", "k1", "B", 3),
        ("topic2", "k2", "B", 3),
        ("topic2", "k2", "B", 4),
        ("topic2", "k1", "B", 4),
    ]
    assert _windowed_records((table, builder), inputs, make_config()) == [
        ("k1", "0+A", 0),
        ("k2", "0+A", 0),
        ("k2", "0+A+A", 1),
        ("k1", "0+A+A", 2),
        ("k1", "0+A+A-B", 3),
        ("k2", "0+A+A-B", 3),
        ("k2", "0+A+A-B-B", 4),
        ("k1", "0+A+A-B-B", 4),
    ]


def test_time_window_aggregate_overlapping_windows(make_config):
    """Mirrors TimeWindowedCogroupedKStreamImplTest.timeWindowAggregateOverlappingWindowsTest: size 500,
    advance 200."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
    table = (
        grouped.cogroup(to_string_adder)
        .windowed_by(TimeWindows.of_size_with_no_grace(500).advance_by(200))
        .aggregate(string_init, Materialized.with_(S, S))
    )
    rows = [
        ("k1", "A", 0),
        ("k2", "A", 0),
        ("k1", "B", 250),
        ("k2", "B", 250),
        ("k2", "A", 500),
        ("k1", "A", 500),
    ]
    assert _windowed_records((table, builder), [("topic", *r) for r in rows], make_config()) == [
        ("k1", "0+A", 0),
        ("k2", "0+A", 0),
        ("k1", "0+A+B", 250),
        ("k1", "0+B", 250),
        ("k2", "0+A+B", 250),
        ("k2", "0+B", 250),
        ("k2", "0+B+A", 500),
        ("k2", "0+A", 500),
        ("k1", "0+B+A", 500),
        ("k1", "0+A", 500),
    ]


def test_time_window_mix_aggregators_many_windows(make_config):
    """Mirrors TimeWindowedCogroupedKStreamImplTest.timeWindowMixAggregatorsManyWindowsTest."""
    builder = StreamsBuilder()
    table = _time_cogroup(builder, TimeWindows.of_size_with_no_grace(500)).aggregate(
        string_init, Materialized.with_(S, S)
    )
    inputs = [
        ("topic", "k1", "A", 0),
        ("topic", "k2", "A", 0),
        ("topic", "k2", "A", 1),
        ("topic", "k1", "A", 2),
    ]
    inputs += [
        ("topic2", "k1", "B", 3),
        ("topic2", "k2", "B", 3),
        ("topic2", "k2", "B", 501),
        ("topic2", "k1", "B", 501),
    ]
    assert _windowed_records((table, builder), inputs, make_config()) == [
        ("k1", "0+A", 0),
        ("k2", "0+A", 0),
        ("k2", "0+A+A", 1),
        ("k1", "0+A+A", 2),
        ("k1", "0+A+A-B", 3),
        ("k2", "0+A+A-B", 3),
        ("k2", "0-B", 501),
        ("k1", "0-B", 501),
    ]


def test_sliding_window_aggregate_overlapping_windows(make_config):
    """Mirrors SlidingWindowedCogroupedKStreamImplTest.slidingWindowAggregateOverlappingWindowsTest: time
    difference 500, grace 2000; only the windows a record creates or updates are shown (the even lines of
    the Java assertions)."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
    table = (
        grouped.cogroup(to_string_adder)
        .windowed_by(SlidingWindows.of_time_difference_and_grace(500, 2000))
        .aggregate(string_init, Materialized.with_(S, S))
    )
    rows = [
        ("k1", "A", 500),
        ("k2", "A", 500),
        ("k1", "B", 750),
        ("k2", "B", 750),
        ("k2", "A", 1000),
        ("k1", "A", 1000),
    ]
    seen = _windowed_records((table, builder), [("topic", *r) for r in rows], make_config())
    assert seen == [
        ("k1", "0+A", 500),
        ("k2", "0+A", 500),
        ("k1", "0+B", 750),
        ("k1", "0+A+B", 750),
        ("k2", "0+B", 750),
        ("k2", "0+A+B", 750),
        ("k2", "0+B+A", 1000),
        ("k2", "0+A", 1000),
        ("k2", "0+A+B+A", 1000),
        ("k1", "0+B+A", 1000),
        ("k1", "0+A", 1000),
        ("k1", "0+A+B+A", 1000),
    ]


def _session_merger(key, one, two):
    return f"{one}+{two}"


def test_session_window_cogroup_named_param_sets_name():
    """Mirrors SessionWindowedCogroupedKStreamImplTest.namedParamShouldSetName."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
    grouped.cogroup(to_string_adder).windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(1)).aggregate(
        string_init, _session_merger, name="foo"
    )
    text = str(builder.build().describe())
    assert "Processor: foo-cogroup-agg-0 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000001])" in text
    assert "Processor: foo-cogroup-merge (stores: [])\n      --> none\n      <-- foo-cogroup-agg-0\n" in text


def test_session_window_aggregate(make_config):
    """Mirrors SessionWindowedCogroupedKStreamImplTest.sessionWindowAggregate2Test."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", STRING_CONSUMED).group_by_key(Grouped.with_(S, S))
    table = (
        grouped.cogroup(to_string_adder)
        .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(500))
        .aggregate(string_init, _session_merger, Materialized.with_(S, S))
    )
    rows = [("k1", "A", 0), ("k1", "A", 0), ("k2", "B", 599), ("k1", "B", 607)]
    seen = _windowed_records((table, builder), [("topic", *r) for r in rows], make_config())
    assert [r for r in seen if r[1] is not None] == [
        ("k1", "0+A", 0),
        ("k1", "0+0+A+A", 0),
        ("k2", "0+B", 599),
        ("k1", "0+B", 607),
    ]


def test_session_window_aggregate_two_streams(make_config):
    """Mirrors SessionWindowedCogroupedKStreamImplTest.sessionWindowAggregateTest2StreamsTest: gap 100,
    grace one day; merged sessions are retracted with tombstones."""
    builder = StreamsBuilder()
    table = _time_cogroup(builder, SessionWindows.of_inactivity_gap_and_grace(100, 86_400_000)).aggregate(
        string_init, _session_merger, Materialized.with_(S, S)
    )
    rows = [
        ("k1", "A", 0),
        ("k1", "A", 84),
        ("k1", "A", 113),
        ("k1", "A", 199),
        ("k1", "B", 300),
        ("k2", "B", 301),
        ("k2", "B", 400),
        ("k1", "B", 400),
    ]
    seen = _windowed_records((table, builder), [("topic", *r) for r in rows], make_config())
    assert seen == [
        ("k1", "0+A", 0),
        ("k1", None, 0),
        ("k1", "0+0+A+A", 84),
        ("k1", None, 84),
        ("k1", "0+0+0+A+A+A", 113),
        ("k1", None, 113),
        ("k1", "0+0+0+0+A+A+A+A", 199),
        ("k1", "0+B", 300),
        ("k2", "0+B", 301),
        ("k2", None, 301),
        ("k2", "0+0+B+B", 400),
        ("k1", None, 300),
        ("k1", "0+0+B+B", 400),
    ]
