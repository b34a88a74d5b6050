"""Replays Kafka Streams' KTableMapValuesTest: map_values on a table, with and without a store."""

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, TopologyTestDriver

TOPIC = "topic1"
STRINGS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())


def _do_test_ktable(builder, capture, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.String())
        source.pipe_input("A", "1", timestamp=5)
        source.pipe_input("B", "2", timestamp=25)
        source.pipe_input("C", "3", timestamp=20)
        source.pipe_input("D", "4", timestamp=10)
        assert capture.processed == [("A", 1, 5), ("B", 2, 25), ("C", 3, 20), ("D", 4, 10)]


def digit(value):
    return ord(value[0]) - 48


def test_map_values_on_table(make_config, capture):
    """Mirrors KTableMapValuesTest.testKTable."""
    builder = StreamsBuilder()
    builder.table(TOPIC, STRINGS).map_values(digit).to_stream().process(capture)

    _do_test_ktable(builder, capture, make_config())


def test_map_values_on_table_queryable(make_config, capture):
    """Mirrors KTableMapValuesTest.testQueryableKTable: the same output with a store "anyName"."""
    builder = StreamsBuilder()
    builder.table(TOPIC, STRINGS).map_values(
        digit, Materialized(store_name="anyName", value_serde=Serdes.Integer())
    ).to_stream().process(capture)

    _do_test_ktable(builder, capture, make_config())


def test_map_values_stores_hold_mapped_values(make_config):
    """Mirrors KTableMapValuesTest.testQueryableValueGetter: what the value getters of store2
    (int(v)) and store3 (-int(v)) return, read here from the stores with their timestamps."""
    builder = StreamsBuilder()
    table1 = builder.table(TOPIC, STRINGS)
    table2 = table1.map_values(
        lambda value: int(value), Materialized(store_name="store2", value_serde=Serdes.Integer())
    )
    table3 = table1.map_values(
        lambda v: -int(v), Materialized(store_name="store3", value_serde=Serdes.Integer())
    )
    table4 = table1.map_values(lambda value: int(value))
    assert table2.queryable_store_name == "store2"
    assert table3.queryable_store_name == "store3"
    assert table4.queryable_store_name is None

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.String())
        store2 = driver.get_timestamped_key_value_store("store2")
        store3 = driver.get_timestamped_key_value_store("store3")

        def view(store):
            out = []
            for key in "ABC":
                found = store.get(key)
                out.append(None if found is None else (found.value, found.timestamp))
            return out

        source.pipe_input("A", "01", timestamp=50)
        source.pipe_input("B", "01", timestamp=10)
        source.pipe_input("C", "01", timestamp=30)
        assert view(store2) == [(1, 50), (1, 10), (1, 30)]
        assert view(store3) == [(-1, 50), (-1, 10), (-1, 30)]

        source.pipe_input("A", "02", timestamp=25)
        source.pipe_input("B", "02", timestamp=20)
        assert view(store2) == [(2, 25), (2, 20), (1, 30)]
        assert view(store3) == [(-2, 25), (-2, 20), (-1, 30)]

        source.pipe_input("A", "03", timestamp=35)
        assert view(store2) == [(3, 35), (2, 20), (1, 30)]
        assert view(store3) == [(-3, 35), (-2, 20), (-1, 30)]

        source.pipe_input("A", None, timestamp=1)
        assert view(store2) == [None, (2, 20), (1, 30)]
        assert view(store3) == [None, (-2, 20), (-1, 30)]
