"""DSL behaviour: repartition insertion, KTable old values and tombstones, timestamps, branches."""

from __future__ import annotations

from streams_runtime import (
    Branched,
    Consumed,
    Grouped,
    Joined,
    Materialized,
    Produced,
    Repartitioned,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
)

S = Serdes.String()
L = Serdes.Long()
I = Serdes.Integer()  # noqa: E741
CONFIG = {
    "application_id": "dsl",
    "default_key_serde": "string",
    "default_value_serde": "string",
    "statestore_cache_max_bytes": 0,
}


def _repartition_topics(topology):
    return sorted(n for n, c in topology.internal_topics().items() if c.kind == "repartition")


def test_select_key_then_group_by_key_repartitions_exactly_once():
    builder = StreamsBuilder()
    builder.stream("in").select_key(lambda k, v: v).group_by_key().count(Materialized.as_("c"))
    topology = builder.build()
    assert _repartition_topics(topology) == ["c-repartition"]
    assert len(topology.sub_topologies()) == 2


def test_value_only_operations_keep_the_key_and_never_repartition():
    builder = StreamsBuilder()
    (
        builder.stream("in")
        .map_values(lambda v: v)
        .flat_map_values(lambda v: [v])
        .filter(lambda k, v: True)
        .group_by_key()
        .count(Materialized.as_("c"))
    )
    topology = builder.build()
    assert _repartition_topics(topology) == []
    assert len(topology.sub_topologies()) == 1


def test_group_by_always_repartitions_and_a_named_grouping_shares_one_topic_across_aggregations():
    builder = StreamsBuilder()
    grouped = builder.stream("in").group_by(lambda k, v: v, Grouped.as_("by-value"))
    grouped.count(Materialized.as_("counts"))
    grouped.reduce(lambda a, b: a + b, Materialized.as_("concat"))
    assert _repartition_topics(builder.build()) == ["by-value-repartition"]


def test_unnamed_grouping_gets_one_repartition_topic_per_aggregation():
    builder = StreamsBuilder()
    grouped = builder.stream("in").map(lambda k, v: (v, k)).group_by_key()
    grouped.count(Materialized.as_("counts"))
    grouped.reduce(lambda a, b: a + b, Materialized.as_("concat"))
    assert _repartition_topics(builder.build()) == ["concat-repartition", "counts-repartition"]


def test_to_table_after_a_key_change_repartitions():
    builder = StreamsBuilder()
    builder.stream("in").select_key(lambda k, v: v).to_table(Materialized.as_("t"), name="as-table")
    assert _repartition_topics(builder.build()) == ["as-table-repartition"]


def test_explicit_repartition_fixes_the_partition_count_of_the_downstream_tasks():
    builder = StreamsBuilder()
    builder.stream("in").repartition(Repartitioned.as_("spread").with_number_of_partitions(3)).to("out")
    topology = builder.build({"application_id": "app"})
    assert topology.task_counts({"in": 8}) == {0: 8, 1: 3}
    configs = topology.internal_topic_configs()["app-spread-repartition"]
    assert configs == {
        "cleanup.policy": "delete",
        "segment.bytes": "52428800",
        "retention.ms": "-1",
        "message.timestamp.type": "CreateTime",
    }


def test_word_count_task_counts_follow_the_input_partitions_through_the_repartition_topic():
    builder = StreamsBuilder({"application_id": "wordcount-app"})
    (
        builder.stream("text-input")
        .flat_map_values(lambda line: line.split())
        .group_by(lambda k, w: w)
        .count(Materialized.as_("word-count-store"))
    )
    topology = builder.build()
    assert topology.task_counts({"text-input": 6}) == {0: 6, 1: 6}
    assert (
        topology.internal_topic_configs()["wordcount-app-word-count-store-changelog"]["cleanup.policy"]
        == "compact"
    )


def test_stream_aggregation_outputs_the_max_timestamp_of_contributing_records():
    builder = StreamsBuilder()
    builder.stream("in").group_by_key().count().to_stream().to("out", Produced.with_(S, L))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("in", S, S)
        for ts in (10, 5, 20, 15):
            topic.pipe_input("k", "v", ts)
        records = driver.create_output_topic("out", S, L).read_records_to_list()
    assert [(r.value, r.timestamp) for r in records] == [(1, 10), (2, 10), (3, 20), (4, 20)]


def test_table_aggregation_subtracts_the_old_value_before_adding_the_new():
    calls = []
    builder = StreamsBuilder()
    table = builder.table("in", Consumed.with_(S, I))

    def adder(key, value, agg):
        calls.append(("add", key, value, agg))
        return agg + value

    def subtractor(key, value, agg):
        calls.append(("sub", key, value, agg))
        return agg - value

    (
        table.group_by(lambda k, v: ("all", v), Grouped.with_(S, I))
        .aggregate(lambda: 0, adder, subtractor, Materialized.as_("sum").with_value_serde(I))
        .to_stream()
        .to("out", Produced.with_(S, I))
    )
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("in", S, I)
        topic.pipe_input("a", 1, 10)
        topic.pipe_input("b", 2, 5)
        topic.pipe_input("a", 5, 7)
        topic.pipe_input("b", None, 30)
        out = driver.create_output_topic("out", S, I).read_records_to_list()
    assert [(r.value, r.timestamp) for r in out] == [(1, 10), (3, 10), (7, 10), (5, 30)]
    assert calls[2:4] == [("sub", "all", 1, 3), ("add", "all", 5, 2)]


def test_table_filter_turns_filtered_updates_into_tombstones():
    builder = StreamsBuilder()
    (
        builder.table("in", Consumed.with_(S, I))
        .filter(lambda k, v: v % 2 == 0)
        .to_stream()
        .to("out", Produced.with_(S, I))
    )
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("in", S, I)
        topic.pipe_input("a", 2, 1)
        topic.pipe_input("a", 3, 2)
        assert driver.create_output_topic("out", S, I).read_key_values_to_list() == [("a", 2), ("a", None)]


def test_table_source_drops_null_keys_and_propagates_record_timestamps():
    builder = StreamsBuilder()
    builder.table("in", Materialized.as_("t")).map_values(lambda v: v.upper()).to_stream().to("out")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("in", S, S)
        topic.pipe_input(None, "x", 1)
        topic.pipe_input("k", "y", 9)
        out = driver.create_output_topic("out", S, S).read_records_to_list()
        assert [(r.key, r.value, r.timestamp) for r in out] == [("k", "Y", 9)]
        assert driver.metrics.total("dropped-records") == 1


def test_split_sends_each_record_to_the_first_matching_branch_or_the_default():
    builder = StreamsBuilder()
    branches = (
        builder.stream("in")
        .split(name="split-")
        .branch(lambda k, v: v.startswith("a"), Branched.as_("a"))
        .branch(lambda k, v: v.startswith("ab"), Branched.as_("ab"))
        .default_branch(Branched.as_("other"))
    )
    assert sorted(branches) == ["split-a", "split-ab", "split-other"]
    for name, stream in branches.items():
        stream.to(name)
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_value_list(["abc", "b", "a"], start_timestamp=0)
        assert driver.create_output_topic("split-a", S, S).read_values_to_list() == ["abc", "a"]
        assert driver.create_output_topic("split-ab", S, S).is_empty()
        assert driver.create_output_topic("split-other", S, S).read_values_to_list() == ["b"]


def test_a_null_key_does_not_cross_a_repartition_topic():
    """Kafka Streams turns the filter before a repartition topic into a null-key filter at build
    time: repartition() drops a null-key record (the plain sink next to it keeps it)."""
    builder = StreamsBuilder()
    stream = builder.stream("in", consumed=Consumed.with_(S, S))
    stream.repartition(Repartitioned.with_(S, S)).to("out", Produced.with_(S, S))
    stream.to("plain", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        source = driver.create_input_topic("in", S, S)
        source.pipe_input(None, "lost", 1)
        source.pipe_input("k", "kept", 2)
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [("k", "kept")]
        assert driver.create_output_topic("plain", S, S).read_key_values_to_list() == [
            (None, "lost"),
            ("k", "kept"),
        ]


def test_a_null_key_crosses_a_repartition_topic_on_its_way_to_a_left_join():
    """...unless a left or outer join lies downstream: it joins null keys (with null), so the
    repartition before it keeps them."""
    builder = StreamsBuilder()
    table = builder.table("table", consumed=Consumed.with_(S, S))
    rekeyed = builder.stream("in", consumed=Consumed.with_(S, S)).select_key(
        lambda k, v: None if v == "-" else v
    )
    joined = Joined.with_(S, S, S)
    rekeyed.left_join(table, lambda v, t: f"{v}|{t}", joined).to("left", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "-", 1)
        assert driver.create_output_topic("left", S, S).read_key_values_to_list() == [(None, "-|None")]


def test_merge_and_topic_chooser_route_records():
    builder = StreamsBuilder()
    merged = builder.stream("left").merge(builder.stream("right"))
    merged.to(lambda key, value, ctx: f"out-{ctx.topic}")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("left", S, S).pipe_input("k", "l", 1)
        driver.create_input_topic("right", S, S).pipe_input("k", "r", 2)
        assert driver.create_output_topic("out-left", S, S).read_values_to_list() == ["l"]
        assert driver.create_output_topic("out-right", S, S).read_values_to_list() == ["r"]


def test_reading_the_same_topic_twice_shares_one_source():
    builder = StreamsBuilder()
    builder.stream("in").to("a")
    builder.stream("in").to("b")
    topology = builder.build()
    assert topology.sub_topologies()[0].source_topics == ["in"]
    with TopologyTestDriver(topology, CONFIG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("k", "v", 1)
        assert driver.create_output_topic("a", S, S).read_value() == "v"
        assert driver.create_output_topic("b", S, S).read_value() == "v"
