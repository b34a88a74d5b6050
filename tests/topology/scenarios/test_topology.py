"""Replays Kafka Streams' TopologyTest.

For the DSL: the describe() text -- positional names, which operators burn an index for a store
name, which stores are materialized, and where a repartition topic cuts the topology into
sub-topologies. For the Processor API: which nodes share a sub-topology, and the checks that reject
an invalid topology when the offending node or store is added.
"""

import pytest

from streams_runtime import (
    Materialized,
    Processor,
    Serdes,
    Stores,
    StreamsBuilder,
    StreamsError,
    Topology,
    TopologyError,
    TopologyTestDriver,
)
from tests.fakes import NoOpProcessor


def describe(builder) -> str:
    return str(builder.build().describe())


def test_grouped_stream_zero_arg_count():
    """Mirrors TopologyTest.kGroupedStreamZeroArgCountShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count()
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000002\n"
        "    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000001])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_grouped_stream_named_materialized_count():
    """Mirrors TopologyTest.kGroupedStreamNamedMaterializedCountShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count(
        Materialized(store_name="count-store", store_type="in_memory")
    )
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000001\n"
        "    Processor: KSTREAM-AGGREGATE-0000000001 (stores: [count-store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_grouped_stream_anonymous_materialized_count():
    """Mirrors TopologyTest.kGroupedStreamAnonymousMaterializedCountShouldPreserveTopologyStructure:
    an unnamed Materialized burns one more index than the zero-argument count."""
    builder = StreamsBuilder()
    builder.stream("input-topic").group_by_key().count(
        Materialized(value_serde=Serdes.Long(), store_type="rocksdb")
    )
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-AGGREGATE-0000000003\n"
        "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_table_zero_arg_count():
    """Mirrors TopologyTest.tableZeroArgCountShouldPreserveTopologyStructure: two sub-topologies."""
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda key, value: None).count()
    assert describe(builder) == (
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


def test_table_named_materialized_count():
    """Mirrors TopologyTest.tableNamedMaterializedCountShouldPreserveTopologyStructure: the
    repartition topic takes the store's name."""
    builder = StreamsBuilder()
    builder.table("input-topic").group_by(lambda key, value: None).count(
        Materialized(store_name="count-store", store_type="in_memory")
    )
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [input-topic-STATE-STORE-0000000000])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KTABLE-SOURCE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: count-store-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000005 (topics: [count-store-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000006\n"
        "    Processor: KTABLE-AGGREGATE-0000000006 (stores: [count-store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000005\n"
        "\n"
    )


def _single_table_processor(name: str, stores: str) -> str:
    return (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000001 (topics: [input-topic])\n"
        "      --> KTABLE-SOURCE-0000000002\n"
        "    Processor: KTABLE-SOURCE-0000000002 (stores: [])\n"
        f"      --> {name}\n"
        "      <-- KSTREAM-SOURCE-0000000001\n"
        f"    Processor: {name} (stores: [{stores}])\n"
        "      --> none\n"
        "      <-- KTABLE-SOURCE-0000000002\n\n"
    )


def test_table_non_materialized_map_values():
    """Mirrors TopologyTest.kTableNonMaterializedMapValuesShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.table("input-topic").map_values(lambda read_only_key, value: None)
    assert describe(builder) == _single_table_processor("KTABLE-MAPVALUES-0000000003", "")


def test_table_anonymous_materialized_map_values():
    """Mirrors TopologyTest.kTableAnonymousMaterializedMapValuesShouldPreserveTopologyStructure:
    an unnamed Materialized burns an index but creates no store."""
    builder = StreamsBuilder()
    builder.table("input-topic").map_values(
        lambda read_only_key, value: None, Materialized(store_type="in_memory")
    )
    assert describe(builder) == _single_table_processor("KTABLE-MAPVALUES-0000000004", "")


def test_table_named_materialized_map_values():
    """Mirrors TopologyTest.kTableNamedMaterializedMapValuesShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.table("input-topic").map_values(lambda read_only_key, value: None, Materialized.as_("store-name"))
    assert describe(builder) == _single_table_processor("KTABLE-MAPVALUES-0000000003", "store-name")


def test_table_non_materialized_filter():
    """Mirrors TopologyTest.kTableNonMaterializedFilterShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.table("input-topic").filter(lambda key, value: False)
    assert describe(builder) == _single_table_processor("KTABLE-FILTER-0000000003", "")


def test_table_anonymous_materialized_filter():
    """Mirrors TopologyTest.kTableAnonymousMaterializedFilterShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.table("input-topic").filter(lambda key, value: False, Materialized())
    assert describe(builder) == _single_table_processor("KTABLE-FILTER-0000000004", "")


def test_table_named_materialized_filter():
    """Mirrors TopologyTest.kTableNamedMaterializedFilterShouldPreserveTopologyStructure."""
    builder = StreamsBuilder()
    builder.table("input-topic").filter(lambda key, value: False, Materialized.as_("store-name"))
    assert describe(builder) == _single_table_processor("KTABLE-FILTER-0000000003", "store-name")


class TopicPerKey:
    """A topic chooser whose str() is what describe() prints as the sink's extractor class."""

    def __call__(self, key, value, record_context):
        return f"{record_context.topic}-{key}"

    def __str__(self):
        return "anonymous topic name extractor. topic is [recordContext.topic()]-[key]"


def test_dynamic_routing_describes_the_extractor():
    """Mirrors TopologyTest.topologyWithDynamicRoutingShouldDescribeExtractorClass."""
    builder = StreamsBuilder()
    builder.stream("input-topic").to(TopicPerKey())
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input-topic])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000001 (extractor class: anonymous topic name extractor. "
        "topic is [recordContext.topic()]-[key])\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_word_count_describe_names_the_repartition_after_the_store():
    """Mirrors the WordCount topology printed in Kafka Streams' tutorial (docs/streams/tutorial.html):
    flat_map_values, group_by (a key change) and count into "counts-store" give two sub-topologies
    joined by counts-store-repartition, with a filter before the repartition sink. The tutorial's
    printout predates KIP-307; current Kafka Streams (KStreamImpl.createRepartitionedSource) names
    the filter, sink and source after a non-generated repartition topic ("<topic>-filter", "-sink",
    "-source") while still burning indices 4-6, so the aggregate keeps index 3 and to_stream 7."""
    builder = StreamsBuilder()
    (
        builder.stream("streams-plaintext-input")
        .flat_map_values(lambda value: value.lower().split())
        .group_by(lambda key, value: value)
        .count(Materialized.as_("counts-store"))
        .to_stream()
        .to("streams-wordcount-output")
    )
    assert describe(builder) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])\n"
        "      --> KSTREAM-FLATMAPVALUES-0000000001\n"
        "    Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])\n"
        "      --> KSTREAM-KEY-SELECT-0000000002\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])\n"
        "      --> counts-store-repartition-filter\n"
        "      <-- KSTREAM-FLATMAPVALUES-0000000001\n"
        "    Processor: counts-store-repartition-filter (stores: [])\n"
        "      --> counts-store-repartition-sink\n"
        "      <-- KSTREAM-KEY-SELECT-0000000002\n"
        "    Sink: counts-store-repartition-sink (topic: counts-store-repartition)\n"
        "      <-- counts-store-repartition-filter\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: counts-store-repartition-source (topics: [counts-store-repartition])\n"
        "      --> KSTREAM-AGGREGATE-0000000003\n"
        "    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts-store])\n"
        "      --> KTABLE-TOSTREAM-0000000007\n"
        "      <-- counts-store-repartition-source\n"
        "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000008\n"
        "      <-- KSTREAM-AGGREGATE-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000008 (topic: streams-wordcount-output)\n"
        "      <-- KTABLE-TOSTREAM-0000000007\n\n"
    )


# ---------------------------------------------------------------------------- Processor API


def store(name):
    return Stores.key_value_store_builder(
        Stores.in_memory_key_value_store(name), Serdes.String(), Serdes.String()
    )


def subtopologies(topology) -> dict[int, set[str]]:
    """Sub-topology id -> names of its nodes, from describe()."""
    return {sub.id: {node.name for node in sub.nodes} for sub in topology.describe().subtopologies}


def stores_of(topology, node_name) -> set[str]:
    for sub in topology.describe().subtopologies:
        for node in sub.nodes:
            if node.name == node_name:
                return set(node.stores)
    raise AssertionError(f"no node {node_name}")


def test_empty_topology_describes_nothing():
    """Mirrors TopologyTest.shouldDescribeEmptyTopology."""
    description = Topology().describe()
    assert description.subtopologies == []
    assert description.global_stores == []


def test_single_source_has_single_subtopology():
    """Mirrors TopologyTest.singleSourceShouldHaveSingleSubtopology."""
    topology = Topology().add_source("source", "topic")
    assert subtopologies(topology) == {0: {"source"}}


def test_single_source_with_list_of_topics_has_single_subtopology():
    """Mirrors TopologyTest.singleSourceWithListOfTopicsShouldHaveSingleSubtopology."""
    topology = Topology().add_source("source", "topic1", "topic2", "topic3")
    assert subtopologies(topology) == {0: {"source"}}
    [source] = topology.describe().subtopologies[0].nodes
    assert set(source.topics) == {"topic1", "topic2", "topic3"}


def test_multiple_sources_have_distinct_subtopologies():
    """Mirrors TopologyTest.multipleSourcesShouldHaveDistinctSubtopologies."""
    topology = (
        Topology()
        .add_source("source1", "topic1")
        .add_source("source2", "topic2")
        .add_source("source3", "topic3")
    )
    assert subtopologies(topology) == {0: {"source1"}, 1: {"source2"}, 2: {"source3"}}


def test_source_and_processor_have_single_subtopology():
    """Mirrors TopologyTest.sourceAndProcessorShouldHaveSingleSubtopology."""
    topology = Topology().add_source("source", "topic").add_processor("processor", NoOpProcessor, "source")
    assert subtopologies(topology) == {0: {"source", "processor"}}


@pytest.mark.parametrize(
    "store_names",
    [
        pytest.param(["store"], id="sourceAndProcessorWithStateShouldHaveSingleSubtopology"),
        pytest.param(
            ["store1", "store2"], id="sourceAndProcessorWithMultipleStatesShouldHaveSingleSubtopology"
        ),
    ],
)
def test_source_and_processor_with_state_have_single_subtopology(store_names):
    """Mirrors TopologyTest.sourceAndProcessorWithStateShouldHaveSingleSubtopology and
    TopologyTest.sourceAndProcessorWithMultipleStatesShouldHaveSingleSubtopology."""
    topology = Topology().add_source("source", "topic").add_processor("processor", NoOpProcessor, "source")
    for name in store_names:
        topology.add_state_store(store(name), "processor")
    assert subtopologies(topology) == {0: {"source", "processor"}}
    assert stores_of(topology, "processor") == set(store_names)


def test_source_with_multiple_processors_has_single_subtopology():
    """Mirrors TopologyTest.sourceWithMultipleProcessorsShouldHaveSingleSubtopology."""
    topology = (
        Topology()
        .add_source("source", "topic")
        .add_processor("processor1", NoOpProcessor, "source")
        .add_processor("processor2", NoOpProcessor, "source")
    )
    assert subtopologies(topology) == {0: {"source", "processor1", "processor2"}}


def test_multiple_sources_with_processors_have_distinct_subtopologies():
    """Mirrors TopologyTest.multipleSourcesWithProcessorsShouldHaveDistinctSubtopologies."""
    topology = Topology()
    for i in (1, 2, 3):
        topology.add_source(f"source{i}", f"topic{i}").add_processor(
            f"processor{i}", NoOpProcessor, f"source{i}"
        )
    assert subtopologies(topology) == {
        0: {"source1", "processor1"},
        1: {"source2", "processor2"},
        2: {"source3", "processor3"},
    }


def test_multiple_sources_with_sinks_have_distinct_subtopologies():
    """Mirrors TopologyTest.multipleSourcesWithSinksShouldHaveDistinctSubtopologies."""
    topology = Topology()
    for i in (1, 2, 3):
        topology.add_source(f"source{i}", f"topic{i}").add_sink(f"sink{i}", f"sinkTopic{i}", f"source{i}")
    assert subtopologies(topology) == {
        0: {"source1", "sink1"},
        1: {"source2", "sink2"},
        2: {"source3", "sink3"},
    }


def test_processors_with_same_sink_have_same_subtopology():
    """Mirrors TopologyTest.processorsWithSameSinkShouldHaveSameSubtopology."""
    topology = (
        Topology()
        .add_source("source", "topic")
        .add_processor("processor1", NoOpProcessor, "source")
        .add_source("source2", "topic2")
        .add_processor("processor2", NoOpProcessor, "source2")
        .add_source("source3", "topic3")
        .add_processor("processor3", NoOpProcessor, "source3")
        .add_sink("sink", "sinkTopic", "processor1", "processor2", "processor3")
    )
    assert subtopologies(topology) == {
        0: {"source", "processor1", "source2", "processor2", "source3", "processor3", "sink"}
    }


def test_processors_with_shared_state_have_same_subtopology():
    """Mirrors TopologyTest.processorsWithSharedStateShouldHaveSameSubtopology."""
    topology = (
        Topology()
        .add_source("source", "topic")
        .add_processor("processor1", NoOpProcessor, "source")
        .add_state_store(store("store1"), "processor1")
        .add_source("source2", "topic2")
        .add_processor("processor2", NoOpProcessor, "source2")
        .add_state_store(store("store2"), "processor2")
        .add_source("source3", "topic3")
        .add_processor("processor3", NoOpProcessor, "source3")
        .connect_processor_and_state_stores("processor3", "store1", "store2")
    )
    assert subtopologies(topology) == {
        0: {"source", "processor1", "source2", "processor2", "source3", "processor3"}
    }
    assert stores_of(topology, "processor3") == {"store1", "store2"}


def test_global_store_topology_is_described():
    """Mirrors TopologyTest.shouldDescribeGlobalStoreTopology: global store id 0, its source and
    processor, and no regular sub-topology."""
    topology = Topology().add_global_store(
        store("globalStore"), "source", "globalTopic", "processor", NoOpProcessor
    )
    description = topology.describe()
    assert description.subtopologies == []
    [global_store] = description.global_stores
    assert global_store.id == 0
    assert global_store.source.name == "source"
    assert list(global_store.source.topics) == ["globalTopic"]
    assert global_store.processor.name == "processor"
    assert list(global_store.processor.stores) == ["globalStore"]


def test_rejects_source_without_topics():
    """Mirrors TopologyTest.shouldNotAllowZeroTopicsWhenAddingSource."""
    with pytest.raises(TopologyError):
        Topology().add_source("source")


def test_rejects_sources_with_same_name():
    """Mirrors TopologyTest.shouldNotAllowToAddSourcesWithSameName."""
    topology = Topology().add_source("source", "topic-1")
    with pytest.raises(TopologyError):
        topology.add_source("source", "topic-2")


def test_rejects_topic_read_by_two_sources():
    """Mirrors TopologyTest.shouldNotAllowToAddTopicTwice."""
    topology = Topology().add_source("source", "topic-1")
    with pytest.raises(TopologyError):
        topology.add_source("source-2", "topic-1")


def test_rejects_processors_with_same_name():
    """Mirrors TopologyTest.shouldNotAllowToAddProcessorWithSameName."""
    topology = Topology().add_source("source", "topic-1").add_processor("processor", NoOpProcessor, "source")
    with pytest.raises(TopologyError):
        topology.add_processor("processor", NoOpProcessor, "source")


def test_rejects_processor_without_parents():
    """Mirrors TopologyTest.shouldNotAllowToAddProcessorWithEmptyParents."""
    topology = Topology().add_source("source", "topic-1")
    with pytest.raises(TopologyError):
        topology.add_processor("processor", NoOpProcessor)


def test_rejects_processor_with_unknown_parent():
    """Mirrors TopologyTest.shouldFailOnUnknownSource."""
    with pytest.raises(TopologyError):
        Topology().add_processor("processor", NoOpProcessor, "source")


def test_rejects_processor_that_is_its_own_parent():
    """Mirrors TopologyTest.shouldFailIfNodeIsItsOwnParent."""
    with pytest.raises(TopologyError):
        Topology().add_processor("processor", NoOpProcessor, "processor")


def test_rejects_sinks_with_same_name():
    """Mirrors TopologyTest.shouldNotAllowToAddSinkWithSameName."""
    topology = Topology().add_source("source", "topic-1").add_sink("sink", "topic-2", "source")
    with pytest.raises(TopologyError):
        topology.add_sink("sink", "topic-3", "source")


def test_rejects_sink_without_parents():
    """Mirrors TopologyTest.shouldNotAllowToAddSinkWithEmptyParents."""
    topology = Topology().add_source("source", "topic-1").add_processor("processor", NoOpProcessor, "source")
    with pytest.raises(TopologyError):
        topology.add_sink("sink", "topic-2")


def test_rejects_sink_with_unknown_parent():
    """Mirrors TopologyTest.shouldFailWithUnknownParent."""
    with pytest.raises(TopologyError):
        Topology().add_sink("sink", "topic-2", "source")


def test_rejects_sink_that_is_its_own_parent():
    """Mirrors TopologyTest.shouldFailIfSinkIsItsOwnParent."""
    with pytest.raises(TopologyError):
        Topology().add_sink("sink", "topic-2", "sink")


def test_rejects_sink_as_parent():
    """Mirrors TopologyTest.shouldFailIfSinkIsParent."""
    topology = Topology().add_source("source", "topic-1").add_sink("sink-1", "topic-2", "source")
    with pytest.raises(TopologyError):
        topology.add_sink("sink-2", "topic-3", "sink-1")


def test_rejects_store_for_unknown_processor():
    """Mirrors TopologyTest.shouldNotAllowToAddStateStoreToNonExistingProcessor."""
    with pytest.raises(TopologyError):
        Topology().add_state_store(store("store"), "no-such-processor")


def test_rejects_store_on_source():
    """Mirrors TopologyTest.shouldNotAllowToAddStateStoreToSource."""
    topology = Topology().add_source("source-1", "topic-1")
    with pytest.raises(TopologyError):
        topology.add_state_store(store("store"), "source-1")


def test_rejects_store_on_sink():
    """Mirrors TopologyTest.shouldNotAllowToAddStateStoreToSink."""
    topology = Topology().add_source("source-1", "topic-1").add_sink("sink-1", "topic-1", "source-1")
    with pytest.raises(TopologyError):
        topology.add_state_store(store("store"), "sink-1")


def test_rejects_second_store_builder_with_same_name():
    """Mirrors TopologyTest.shouldNotAllowToAddStoreWithSameNameAndDifferentInstance."""
    topology = Topology().add_state_store(store("store"))
    with pytest.raises(TopologyError):
        topology.add_state_store(store("store"))


def test_shares_store_provided_by_two_suppliers_with_the_same_builder():
    """Mirrors TopologyTest.shouldAllowToShareStoreUsingSameStoreBuilder: one builder object provided
    by the suppliers of two processors is one shared store."""
    shared = store("store")

    class ProvidingStore:
        def __call__(self):
            return NoOpProcessor()

        def stores(self):
            return {shared}

    topology = (
        Topology()
        .add_source("source", "topic-1")
        .add_processor("processor-1", ProvidingStore(), "source")
        .add_processor("processor-2", ProvidingStore(), "source")
    )
    assert stores_of(topology, "processor-1") == {"store"}
    assert stores_of(topology, "processor-2") == {"store"}


def test_unassigned_store_access_fails_naming_the_processor(make_config):
    """Mirrors TopologyTest.shouldThrowOnUnassignedStateStoreAccess: a processor reading a store it
    is not connected to fails the driver's start, and the error names that processor."""

    class ReadsStore(Processor):
        def init(self, context):
            context.get_state_store("store")

        def process(self, record):
            pass

    topology = (
        Topology()
        .add_source("source", "topic")
        .add_processor("goodGuy", ReadsStore, "source")
        .add_state_store(store("store"), "goodGuy")
        .add_processor("badGuy", ReadsStore, "source")
    )
    with pytest.raises(StreamsError) as failure:
        TopologyTestDriver(topology, make_config(Serdes.Bytes(), Serdes.Bytes())).close()
    # Kafka Streams' message is "failed to initialize processor badGuy"; the fact carried over is
    # that the error names the processor at fault (and not the one connected to the store).
    assert "badGuy" in str(failure.value)
    assert "goodGuy" not in str(failure.value)
