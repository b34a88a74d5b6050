"""Replays Kafka Streams' KStreamImplTest: merge, repartition, to (fixed and dynamic topics),
process / process_values, and to_table, with the describe() text Kafka Streams expects."""

from streams_runtime import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Processor,
    Produced,
    Repartitioned,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyTestDriver,
)

from .support import Capture, records, store_contents

STRINGS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())


def _config(make_config):
    return make_config(Serdes.String(), Serdes.String())


def test_merge_two_streams_keeps_arrival_order(make_config, capture):
    """Mirrors KStreamImplTest.shouldMergeTwoStreams."""
    builder = StreamsBuilder()
    merged = builder.stream("topic-1").merge(builder.stream("topic-2"))
    merged.process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        t1 = driver.create_input_topic("topic-1", Serdes.String(), Serdes.String())
        t2 = driver.create_input_topic("topic-2", Serdes.String(), Serdes.String())
        t1.pipe_input("A", "aa", timestamp=0)
        t2.pipe_input("B", "bb", timestamp=0)
        t2.pipe_input("C", "cc", timestamp=0)
        t1.pipe_input("D", "dd", timestamp=0)

    assert capture.processed == [("A", "aa", 0), ("B", "bb", 0), ("C", "cc", 0), ("D", "dd", 0)]


def test_merge_multiple_streams_keeps_arrival_order_and_timestamps(make_config, capture):
    """Mirrors KStreamImplTest.shouldMergeMultipleStreams: out-of-order timestamps pass through as piped."""
    builder = StreamsBuilder()
    s1, s2, s3, s4 = (builder.stream(f"topic-{i}") for i in range(1, 5))
    s1.merge(s2).merge(s3).merge(s4).process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        t = {
            i: driver.create_input_topic(f"topic-{i}", Serdes.String(), Serdes.String()) for i in range(1, 5)
        }
        t[1].pipe_input("A", "aa", timestamp=1)
        t[2].pipe_input("B", "bb", timestamp=9)
        t[3].pipe_input("C", "cc", timestamp=2)
        t[4].pipe_input("D", "dd", timestamp=8)
        t[4].pipe_input("E", "ee", timestamp=3)
        t[3].pipe_input("F", "ff", timestamp=7)
        t[2].pipe_input("G", "gg", timestamp=4)
        t[1].pipe_input("H", "hh", timestamp=6)

    assert capture.processed == [
        ("A", "aa", 1),
        ("B", "bb", 9),
        ("C", "cc", 2),
        ("D", "dd", 8),
        ("E", "ee", 3),
        ("F", "ff", 7),
        ("G", "gg", 4),
        ("H", "hh", 6),
    ]


def test_repartition_with_serdes_delivers_records(make_config, capture):
    """Mirrors KStreamImplTest.shouldSendDataThroughRepartitionTopicUsingRepartitioned."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", STRINGS)
    stream.repartition(Repartitioned(key_serde=Serdes.String(), value_serde=Serdes.String())).process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        driver.create_input_topic("topic", Serdes.String(), Serdes.String()).pipe_input("a", "b", timestamp=0)

    assert capture.processed == [("a", "b", 0)]


def test_to_with_produced_writes_to_a_topic_read_back_by_the_topology(make_config, capture):
    """Mirrors KStreamImplTest.shouldSendDataToTopicUsingProduced."""
    builder = StreamsBuilder()
    builder.stream("topic", STRINGS).to(
        "to-topic", Produced(key_serde=Serdes.String(), value_serde=Serdes.String())
    )
    builder.stream("to-topic", STRINGS).process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        driver.create_input_topic("topic", Serdes.String(), Serdes.String()).pipe_input("e", "f", timestamp=0)

    assert capture.processed == [("e", "f", 0)]


def test_to_with_topic_chooser_routes_per_record(make_config):
    """Mirrors KStreamImplTest.shouldSendDataToDynamicTopics: topic = <source topic>-<key>-<value[0]>."""
    to_a, to_b = Capture(), Capture()
    builder = StreamsBuilder()
    builder.stream("topic", STRINGS).to(
        lambda key, value, record_context: f"{record_context.topic}-{key}-{value[0]}",
        Produced(key_serde=Serdes.String(), value_serde=Serdes.String()),
    )
    builder.stream("topic-a-v", STRINGS).process(to_a)
    builder.stream("topic-b-v", STRINGS).process(to_b)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        source = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        source.pipe_input("a", "v1", timestamp=0)
        source.pipe_input("a", "v2", timestamp=0)
        source.pipe_input("b", "v1", timestamp=0)

    assert to_a.processed == [("a", "v1", 0), ("a", "v2", 0)]
    assert to_b.processed == [("b", "v1", 0)]


class ValueLength(Processor):
    """Forwards each record with its value replaced by the value's length."""

    def init(self, context):
        self.context = context

    def process(self, record):
        self.context.forward(record.with_value(len(record.value)))

    def close(self):
        pass


LENGTH_INPUT = [
    ("A", "0", 5),
    ("B", "00", 100),
    ("C", "000", 0),
    ("D", "0000", 0),
    ("A", "00000", 10),
    ("A", "000000", 8),
]
LENGTH_OUTPUT = [("A", 1, 5), ("B", 2, 100), ("C", 3, 0), ("D", 4, 0), ("A", 5, 10), ("A", 6, 8)]


def _run_length_topology(builder, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.String(), Serdes.Integer())
        for key, value, ts in LENGTH_INPUT:
            source.pipe_input(key, value, timestamp=ts)
        return records(out)


def test_process_with_named_processor(make_config):
    """Mirrors KStreamImplTest.shouldBindStateWithOldProcessor: process(..., Named "p") then to(output)."""
    builder = StreamsBuilder()
    builder.stream("input", STRINGS).process(ValueLength, name="p").to(
        "output", Produced(value_serde=Serdes.Integer())
    )

    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> p\n"
        "    Processor: p (stores: [])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Sink: KSTREAM-SINK-0000000001 (topic: output)\n"
        "      <-- p\n\n"
    )
    assert _run_length_topology(builder, _config(make_config)) == LENGTH_OUTPUT


def test_process_values_with_named_processor(make_config):
    """Mirrors KStreamImplTest.shouldProcessValues: process_values(..., Named "fkp") then to(output)."""
    builder = StreamsBuilder()
    builder.stream("input", STRINGS).process_values(ValueLength, name="fkp").to(
        "output", Produced(value_serde=Serdes.Integer())
    )

    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> fkp\n"
        "    Processor: fkp (stores: [])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Sink: KSTREAM-SINK-0000000001 (topic: output)\n"
        "      <-- fkp\n\n"
    )
    assert _run_length_topology(builder, _config(make_config)) == LENGTH_OUTPUT


TABLE_INPUT = [
    ("A", "01", 5),
    ("B", "02", 100),
    ("C", "03", 0),
    ("D", "04", 0),
    ("A", "05", 10),
    ("A", "06", 8),
]


def test_to_table_without_materialization(make_config):
    """Mirrors KStreamImplTest.shouldNotMaterializedKTableFromKStream: no store, every update emitted."""
    builder = StreamsBuilder()
    builder.stream("input", STRINGS).to_table().to_stream().to("output")

    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000003\n\n"
    )
    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.String(), Serdes.String())
        for key, value, ts in TABLE_INPUT:
            source.pipe_input(key, value, timestamp=ts)
        assert records(out) == TABLE_INPUT


def test_to_table_materialized_in_named_store(make_config):
    """Mirrors KStreamImplTest.shouldMaterializeKTableFromKStream: an in-memory store named "store"."""
    builder = StreamsBuilder()
    builder.stream("input", STRINGS).to_table(Materialized.as_(Stores.in_memory_key_value_store("store")))

    topology = builder.build()
    assert str(topology.describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [store])\n"
        "      --> none\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )
    with TopologyTestDriver(topology, _config(make_config)) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        store = driver.get_key_value_store("store")
        source.pipe_input("A", "01")
        source.pipe_input("B", "02")
        source.pipe_input("A", "03")
        assert store_contents(store) == {"A": "03", "B": "02"}


def test_to_table_after_key_change_repartitions(make_config):
    """Mirrors KStreamImplTest.shouldSupportKeyChangeKTableFromKStream: map then to_table cuts a
    sub-topology at KSTREAM-TOTABLE-0000000002-repartition."""
    builder = StreamsBuilder()
    (
        builder.stream("input", STRINGS)
        .map(lambda key, value: KeyValue(ord(key[0]) - ord("A"), value))
        .to_table(Materialized(key_serde=Serdes.Integer()))
        .to_stream()
        .to("output")
    )

    topology = builder.build()
    assert str(topology.describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-MAP-0000000001\n"
        "    Processor: KSTREAM-MAP-0000000001 (stores: [])\n"
        "      --> KSTREAM-FILTER-0000000005\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KSTREAM-FILTER-0000000005 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000004\n"
        "      <-- KSTREAM-MAP-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-TOTABLE-0000000002-repartition)\n"
        "      <-- KSTREAM-FILTER-0000000005\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-TOTABLE-0000000002-repartition])\n"
        "      --> KSTREAM-TOTABLE-0000000002\n"
        "    Processor: KSTREAM-TOTABLE-0000000002 (stores: [])\n"
        "      --> KTABLE-TOSTREAM-0000000007\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000008\n"
        "      <-- KSTREAM-TOTABLE-0000000002\n"
        "    Sink: KSTREAM-SINK-0000000008 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000007\n\n"
    )
    with TopologyTestDriver(topology, _config(make_config)) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.Integer(), Serdes.String())
        for key, value, ts in TABLE_INPUT:
            source.pipe_input(key, value, timestamp=ts)
        assert records(out) == [
            (0, "01", 5),
            (1, "02", 100),
            (2, "03", 0),
            (3, "04", 0),
            (0, "05", 10),
            (0, "06", 8),
        ]


def test_group_by_count_on_table_from_stream(make_config):
    """Mirrors KStreamImplTest.shouldSupportGroupByCountWithKStreamToKTable: regrouping a to_table()
    result materializes it and splits at KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition."""
    builder = StreamsBuilder()
    (
        builder.stream("input", STRINGS)
        .to_table()
        .group_by(
            lambda key, value: KeyValue(value, value),
            Grouped(key_serde=Serdes.String(), value_serde=Serdes.String()),
        )
        .count()
        .to_stream()
        .to("output")
    )

    topology = builder.build()
    assert str(topology.describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n"
        "      --> KTABLE-SELECT-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-SELECT-0000000003 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n"
        "      <-- KTABLE-SELECT-0000000003\n"
        "\n"
        "  Sub-topology: 1\n"
        "    Source: KSTREAM-SOURCE-0000000006 "
        "(topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n"
        "      --> KTABLE-AGGREGATE-0000000007\n"
        "    Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n"
        "      --> KTABLE-TOSTREAM-0000000008\n"
        "      <-- KSTREAM-SOURCE-0000000006\n"
        "    Processor: KTABLE-TOSTREAM-0000000008 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000009\n"
        "      <-- KTABLE-AGGREGATE-0000000007\n"
        "    Sink: KSTREAM-SINK-0000000009 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000008\n\n"
    )
    with TopologyTestDriver(topology, _config(make_config)) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.String(), Serdes.Long())
        source.pipe_input("A", "green", timestamp=10)
        source.pipe_input("B", "green", timestamp=9)
        source.pipe_input("A", "blue", timestamp=12)
        source.pipe_input("C", "yellow", timestamp=15)
        source.pipe_input("D", "green", timestamp=11)
        assert records(out) == [
            ("green", 1, 10),
            ("green", 2, 10),
            ("green", 1, 12),
            ("blue", 1, 12),
            ("yellow", 1, 15),
            ("green", 2, 12),
        ]


def test_materialized_map_values_on_table_from_stream(make_config):
    """Mirrors KStreamImplTest.shouldSupportTriggerMaterializedWithKTableFromKStream."""
    builder = StreamsBuilder()
    (
        builder.stream("input", STRINGS)
        .to_table()
        .map_values(
            lambda value: ord(value[0]) - ord("a"),
            Materialized(store_name="store", key_serde=Serdes.String(), value_serde=Serdes.Integer()),
        )
        .to_stream()
        .to("output")
    )

    topology = builder.build()
    assert str(topology.describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n"
        "      --> KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n"
        "      --> KTABLE-MAPVALUES-0000000003\n"
        "      <-- KSTREAM-SOURCE-0000000000\n"
        "    Processor: KTABLE-MAPVALUES-0000000003 (stores: [store])\n"
        "      --> KTABLE-TOSTREAM-0000000004\n"
        "      <-- KSTREAM-TOTABLE-0000000001\n"
        "    Processor: KTABLE-TOSTREAM-0000000004 (stores: [])\n"
        "      --> KSTREAM-SINK-0000000005\n"
        "      <-- KTABLE-MAPVALUES-0000000003\n"
        "    Sink: KSTREAM-SINK-0000000005 (topic: output)\n"
        "      <-- KTABLE-TOSTREAM-0000000004\n\n"
    )
    with TopologyTestDriver(topology, _config(make_config)) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output", Serdes.String(), Serdes.Integer())
        store = driver.get_key_value_store("store")
        source.pipe_input("A", "green", timestamp=10)
        source.pipe_input("B", "green", timestamp=9)
        source.pipe_input("A", "blue", timestamp=12)
        source.pipe_input("C", "yellow", timestamp=15)
        source.pipe_input("D", "green", timestamp=11)

        assert store_contents(store) == {"A": 1, "B": 6, "C": 24, "D": 6}
        assert records(out) == [("A", 6, 10), ("B", 6, 9), ("A", 1, 12), ("C", 24, 15), ("D", 6, 11)]
