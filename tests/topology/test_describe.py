"""describe() prints Kafka Streams' text exactly (expected strings from Kafka's TopologyTest)."""

from __future__ import annotations

import logging

from streams_runtime import (
    Consumed,
    Joined,
    Materialized,
    Produced,
    Serdes,
    Stores,
    StreamsBuilder,
    Topology,
)
from streams_runtime.processor.api import Processor


class _Noop(Processor):
    def process(self, record):
        pass


def _word_count(builder: StreamsBuilder) -> None:
    counts = (
        builder.stream("text-input", Consumed.with_(Serdes.String(), Serdes.String()))
        .flat_map_values(lambda line: line.lower().split())
        .group_by(lambda key, word: word)
        .count(Materialized.as_("word-count-store"))
    )
    counts.to_stream().to("wordcount-output", Produced.with_(Serdes.String(), Serdes.Long()))


WORD_COUNT = (
    "Topologies:\n"
    "   Sub-topology: 0\n"
    "    Source: KSTREAM-SOURCE-0000000000 (topics: [text-input])\n"
    "      --> KSTREAM-FLATMAPVALUES-0000000001\n"
    "    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])\n"
    "      --> KSTREAM-KEY-SELECT-0000000002\n"
    "      <-- KSTREAM-SOURCE-0000000000\n"
    "    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])\n"
    "      --> word-count-store-repartition-filter\n"
    "      <-- KSTREAM-FLATMAPVALUES-0000000001\n"
    "    Processor: word-count-store-repartition-filter (stores: [])\n"
    "      --> word-count-store-repartition-sink\n"
    "      <-- KSTREAM-KEY-SELECT-0000000002\n"
    "    Sink: word-count-store-repartition-sink (topic: {topic})\n"
    "      <-- word-count-store-repartition-filter\n"
    "\n"
    "  Sub-topology: 1\n"
    "    Source: word-count-store-repartition-source (topics: [{topic}])\n"
    "      --> KSTREAM-AGGREGATE-0000000003\n"
    "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [word-count-store])\n"
    "      --> KTABLE-TOSTREAM-0000000007\n"
    "      <-- word-count-store-repartition-source\n"
    "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
    "      --> KSTREAM-SINK-0000000008\n"
    "      <-- KSTREAM-AGGREGATE-0000000003\n"
    "    Sink: KSTREAM-SINK-0000000008 (topic: wordcount-output)\n"
    "      <-- KTABLE-TOSTREAM-0000000007\n"
    "\n"
)


def test_word_count_describes_two_sub_topologies_joined_by_one_repartition_topic_named_with_the_app_id():
    builder = StreamsBuilder({"application_id": "wordcount-app"})
    _word_count(builder)
    topology = builder.build()
    assert str(topology.describe()) == WORD_COUNT.format(topic="wordcount-app-word-count-store-repartition")
    infos = topology.sub_topologies()
    assert [i.id for i in infos] == [0, 1]
    assert infos[0].repartition_sink_topics == ["wordcount-app-word-count-store-repartition"]
    assert infos[1].repartition_source_topics == ["wordcount-app-word-count-store-repartition"]


def test_word_count_without_application_id_prints_topics_undecorated_like_kafka_streams():
    builder = StreamsBuilder()
    _word_count(builder)
    assert str(builder.build().describe()) == WORD_COUNT.format(topic="word-count-store-repartition")


def test_empty_topology_describes_as_kafka_streams_does():
    assert str(Topology().describe()) == "Topologies:\n "


def test_grouped_stream_zero_arg_count_uses_generated_store_name():
    # TopologyTest.kGroupedStreamZeroArgCountShouldPreserveTopologyStructure
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count()
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_table_zero_arg_count_materializes_the_source_and_repartitions():
    # TopologyTest.tableZeroArgCountShouldPreserveTopologyStructure
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda k, v: None).count()
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [input-topic-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 "
        "(topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000007\n"
        "    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "\n"
    )


def test_table_anonymous_materialized_filter_burns_an_index_but_has_no_store():
    # TopologyTest.kTableAnonymousMaterializedFilterShouldPreserveTopologyStructure
    builder = StreamsBuilder()
    builder.table("input-topic").filter(lambda k, v: False, Materialized.with_(None, None))
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        "      --> KTABLE-FILTER-0000000004\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-FILTER-0000000004 (stores: [])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "\n"
    )


def test_table_named_materialized_map_values_owns_the_store():
    # TopologyTest.kTableNamedMaterializedMapValuesShouldPreserveTopologyStructure
    builder = StreamsBuilder()
    builder.table("input-topic").map_values(lambda k, v: None, Materialized.as_("store-name"))
    assert "    Processor: KTABLE-MAPVALUES-0000000003 (stores: [store-name])\n" in str(
        builder.build().describe()
    )


def test_dynamic_routing_sink_describes_its_extractor():
    # TopologyTest.topologyWithDynamicRoutingShouldDescribeExtractorClass
    class Chooser:
        def __call__(self, key, value, record_context):
            return record_context.topic + "-" + key

        def __str__(self):
            return "anonymous topic name extractor. topic is [recordContext.topic()]-[key]"

    builder = StreamsBuilder()
    builder.stream("input-topic").to(Chooser())
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000001 (extractor class: anonymous topic name extractor. "
        "topic is [recordContext.topic()]-[key])\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_nodes_order_by_sub_graph_size_then_name_and_global_stores_get_their_own_section():
    topology = (
        Topology()
        .add_source("source", "input")
        .add_processor("b", _Noop, "source")
        .add_processor("a", _Noop, "source")
        .add_processor("a-child", _Noop, "a")
        .add_global_store(
            Stores.key_value_store_builder(Stores.in_memory_key_value_store("global-store")),
            "global-source",
            "global-topic",
            "global-processor",
            _Noop,
        )
    )
    assert str(topology.describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: source (topics: [input])\n"
        "      --> a, b\n"
        "    Processor: a (stores: [])\n"
        "      --> a-child\n"
        "      <-- source\n"
        "    Processor: a-child (stores: [])\n"
        "      --> none\n"
        "      <-- a\n"
        "    Processor: b (stores: [])\n"
        "      --> none\n"
        "      <-- source\n"
        "\n"
        "  Sub-topology: 1 for global store (will not generate tasks)\n"
        "    Source: global-source (topics: [global-topic])\n"
        "      --> global-processor\n"
        "    Processor: global-processor (stores: [global-store])\n"
        "      --> none\n"
        "      <-- global-source\n"
    )


def test_multi_topic_sources_print_topics_in_java_hash_set_order():
    topology = Topology().add_source("s", "topic1", "topic2", "a")
    assert "Source: s (topics: [topic1, topic2, a])" in str(topology.describe())


def test_unnamed_internal_topics_and_stores_are_warned_about(caplog):
    builder = StreamsBuilder()
    builder.stream("in").select_key(lambda k, v: v).group_by_key().count()
    with caplog.at_level(logging.WARNING, logger="streams_runtime.kstream"):
        builder.build()
    text = caplog.text
    assert "KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition" in text
    assert "State store KSTREAM-AGGREGATE-STATE-STORE-0000000002" in text


def test_named_internal_resources_are_not_warned_about(caplog):
    builder = StreamsBuilder()
    _word_count(builder)
    with caplog.at_level(logging.WARNING, logger="streams_runtime.kstream"):
        builder.build()
    assert "generated name" not in caplog.text


def test_a_join_repartition_warning_names_the_option_that_names_it(caplog):
    """A stream re-keyed before a stream-table join: the warning points at Joined.as_, and the
    repartition topic named with it is not warned about."""

    def build(joined: Joined) -> None:
        builder = StreamsBuilder()
        table = builder.table("categories", materialized=Materialized.as_("categories"))
        builder.stream("lines").select_key(lambda k, v: v).join(table, lambda v, c: c, joined).to("out")
        builder.build()

    with caplog.at_level(logging.WARNING, logger="streams_runtime.kstream"):
        build(Joined.with_(Serdes.String(), Serdes.String(), Serdes.String()))
    assert "-repartition has a generated name" in caplog.text
    assert "Joined.as_ (a stream-table join)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="streams_runtime.kstream"):
        build(Joined.as_("enrich").with_key_serde(Serdes.String()))
    assert "generated name" not in caplog.text
