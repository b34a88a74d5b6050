"""Replays Kafka Streams' KTableImplTest: a chain of table operators and a table re-read from a
topic; with a materialized source, a downstream filter gets old values and drops needless tombstones."""

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder, TopologyTestDriver

from .support import Capture

STRINGS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())
INPUT = [("A", "01", 5), ("B", "02", 100), ("C", "03", 0), ("D", "04", 0), ("A", "05", 10), ("A", "06", 8)]
AS_STRINGS = [
    ("A", "01", 5),
    ("B", "02", 100),
    ("C", "03", 0),
    ("D", "04", 0),
    ("A", "05", 10),
    ("A", "06", 8),
]
AS_INTS = [("A", 1, 5), ("B", 2, 100), ("C", 3, 0), ("D", 4, 0), ("A", 5, 10), ("A", 6, 8)]


def _build(builder, table1):
    c1, c2, c3, c4 = Capture(), Capture(), Capture(), Capture()
    table1.to_stream().process(c1)
    table2 = table1.map_values(lambda value: int(value))
    table2.to_stream().process(c2)
    table3 = table2.filter(lambda key, value: value % 2 == 0)
    table3.to_stream().process(c3)
    table1.to_stream().to("topic2", Produced(key_serde=Serdes.String(), value_serde=Serdes.String()))
    builder.table("topic2", STRINGS).to_stream().process(c4)
    return c1, c2, c3, c4


def _pipe(builder, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("topic1", Serdes.String(), Serdes.String())
        for key, value, ts in INPUT:
            source.pipe_input(key, value, timestamp=ts)


def test_table_operator_chain(make_config):
    """Mirrors KTableImplTest.testKTable: the filter on an unmaterialized chain forwards tombstones."""
    builder = StreamsBuilder()
    c1, c2, c3, c4 = _build(builder, builder.table("topic1", STRINGS))

    _pipe(builder, make_config())

    assert c1.processed == AS_STRINGS
    assert c2.processed == AS_INTS
    assert c3.processed == [
        ("A", None, 5),
        ("B", 2, 100),
        ("C", None, 0),
        ("D", 4, 0),
        ("A", None, 10),
        ("A", 6, 8),
    ]
    assert c4.processed == AS_STRINGS


def test_table_operator_chain_on_materialized_source(make_config):
    """Mirrors KTableImplTest.testMaterializedKTable: source materialized as "fred", so the filter
    receives old values and forwards no tombstone for a row it never passed."""
    builder = StreamsBuilder()
    c1, c2, c3, c4 = _build(builder, builder.table("topic1", STRINGS, Materialized.as_("fred")))

    _pipe(builder, make_config())

    assert c1.processed == AS_STRINGS
    assert c2.processed == AS_INTS
    assert c3.processed == [("B", 2, 100), ("D", 4, 0), ("A", 6, 8)]
    assert c4.processed == AS_STRINGS
