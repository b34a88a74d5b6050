"""Replays Kafka Streams' StreamsBuilderTest for the DSL core: reading back from sink topics,
repartition(), merge, and the processor names given with ``name=`` (Kafka Streams' Named)."""

import pytest

from streams_runtime import (
    Branched,
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
)

from .support import Capture, node_names

STREAM_TOPIC = "stream-topic"
STREAM_TOPIC_TWO = "stream-topic-two"
OPERATION = "stream-operation"


def test_processing_from_sink_topic(make_config, capture):
    """Mirrors StreamsBuilderTest.shouldProcessingFromSinkTopic: a stream written to a topic is
    still processed."""
    builder = StreamsBuilder()
    source = builder.stream("topic-source")
    source.to("topic-sink")
    source.process(capture)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        driver.create_input_topic("topic-source", Serdes.String(), Serdes.String()).pipe_input(
            "A", "aa", timestamp=0
        )

    assert capture.processed == [("A", "aa", 0)]


def test_processing_via_repartition_topic(make_config):
    """Mirrors StreamsBuilderTest.shouldProcessViaRepartitionTopic: both sides of repartition()
    see the record."""
    before, after = Capture(), Capture()
    builder = StreamsBuilder()
    source = builder.stream("topic-source")
    through = source.repartition()
    source.process(before)
    through.process(after)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        driver.create_input_topic("topic-source", Serdes.String(), Serdes.String()).pipe_input(
            "A", "aa", timestamp=0
        )

    assert before.processed == [("A", "aa", 0)]
    assert after.processed == [("A", "aa", 0)]


def test_merge_streams(make_config, capture):
    """Mirrors StreamsBuilderTest.shouldMergeStreams."""
    builder = StreamsBuilder()
    builder.stream("topic-1").merge(builder.stream("topic-2")).process(capture)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        t1 = driver.create_input_topic("topic-1", Serdes.String(), Serdes.String())
        t2 = driver.create_input_topic("topic-2", Serdes.String(), Serdes.String())
        t1.pipe_input("A", "aa", timestamp=0)
        t2.pipe_input("B", "bb", timestamp=0)
        t2.pipe_input("C", "cc", timestamp=0)
        t1.pipe_input("D", "dd", timestamp=0)

    assert capture.processed == [("A", "aa", 0), ("B", "bb", 0), ("C", "cc", 0), ("D", "dd", 0)]


def test_table_without_queryable_name_has_no_store():
    """Mirrors StreamsBuilderTest.shouldNotMaterializeStoresIfNotRequired: serdes alone do not
    make a store."""
    builder = StreamsBuilder()
    builder.table("topic", Materialized(key_serde=Serdes.Long(), value_serde=Serdes.String()))
    assert "(stores: [])" in str(builder.build().describe())
    assert "STATE-STORE" not in str(builder.build().describe())


def test_specified_name_for_stream_source():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForStreamSourceProcessor."""
    builder = StreamsBuilder()
    builder.stream(STREAM_TOPIC, Consumed(name="source-node"))
    builder.stream(STREAM_TOPIC_TWO)
    assert node_names(builder.build()) == {"source-node", "KSTREAM-SOURCE-0000000001"}


def test_specified_name_for_table_source():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForTableSourceProcessor: the name goes to
    the table processor, its source node gets "<name>-source"."""
    builder = StreamsBuilder()
    builder.table(STREAM_TOPIC, Consumed(name="source-node"))
    builder.table(STREAM_TOPIC_TWO)
    assert node_names(builder.build()) == {
        "source-node-source",
        "source-node",
        "KSTREAM-SOURCE-0000000004",
        "KTABLE-SOURCE-0000000005",
    }


def test_specified_name_for_sink():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForSinkProcessor."""
    builder = StreamsBuilder()
    stream = builder.stream(STREAM_TOPIC)
    stream.to(STREAM_TOPIC_TWO, Produced(name="sink-processor"))
    stream.to(STREAM_TOPIC_TWO)
    assert node_names(builder.build()) == {
        "KSTREAM-SOURCE-0000000000",
        "sink-processor",
        "KSTREAM-SINK-0000000002",
    }


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda s: s.map(lambda k, v: KeyValue(k, v), name=OPERATION), id="map"),
        pytest.param(lambda s: s.map_values(lambda v: v, name=OPERATION), id="map_values"),
        pytest.param(lambda s: s.map_values(lambda k, v: v, name=OPERATION), id="map_values_with_key"),
        pytest.param(lambda s: s.filter(lambda k, v: True, name=OPERATION), id="filter"),
        pytest.param(lambda s: s.foreach(lambda k, v: None, name=OPERATION), id="foreach"),
        pytest.param(lambda s: s.process(Capture(), name=OPERATION), id="process"),
    ],
)
def test_specified_name_for_stateless_operation(operation):
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForMapOperation, ...ForMapValuesOperation,
    ...ForMapValuesWithKeyOperation, ...ForFilterOperation, ...ForForEachOperation and
    ...ForProcessOperation (which names its processor "test-processor")."""
    builder = StreamsBuilder()
    operation(builder.stream(STREAM_TOPIC))
    assert node_names(builder.build()) == {"KSTREAM-SOURCE-0000000000", OPERATION}


def test_specified_name_for_split():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForSplitOperation: branch names are the
    split's name followed by each Branched name."""
    builder = StreamsBuilder()
    (
        builder.stream(STREAM_TOPIC)
        .split(name="branch-processor")
        .branch(lambda k, v: True, Branched(name="-1"))
        .branch(lambda k, v: False, Branched(name="-2"))
    )
    assert node_names(builder.build()) == {
        "KSTREAM-SOURCE-0000000000",
        "branch-processor",
        "branch-processor-1",
        "branch-processor-2",
    }


def test_specified_name_for_merge():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForMergeOperation."""
    builder = StreamsBuilder()
    builder.stream("topic-1").merge(builder.stream("topic-2"), name="merge-processor")
    assert node_names(builder.build()) == {
        "KSTREAM-SOURCE-0000000000",
        "KSTREAM-SOURCE-0000000001",
        "merge-processor",
    }


def test_specified_name_for_to_stream():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForToStream."""
    builder = StreamsBuilder()
    builder.table(STREAM_TOPIC).to_stream(name="to-stream")
    assert node_names(builder.build()) == {
        "KSTREAM-SOURCE-0000000001",
        "KTABLE-SOURCE-0000000002",
        "to-stream",
    }


def test_specified_name_for_table_aggregate():
    """Mirrors StreamsBuilderTest.shouldUseSpecifiedNameForAggregateOperationGivenTable: Grouped's name
    goes to the select node, count's name to the aggregate and its "-sink" / "-source"."""
    builder = StreamsBuilder()
    builder.table(STREAM_TOPIC).group_by(lambda k, v: KeyValue(k, v), Grouped(name="group-operation")).count(
        name=OPERATION
    )
    topology = builder.build()
    assert node_names(topology) == {
        "KSTREAM-SOURCE-0000000001",
        "KTABLE-SOURCE-0000000002",
        "group-operation",
        f"{OPERATION}-sink",
        f"{OPERATION}-source",
        OPERATION,
    }
    text = str(topology.describe())
    assert f"(stores: [{STREAM_TOPIC}-STATE-STORE-0000000000])" in text
    assert "(stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])" in text
