"""Replays Kafka Streams' KTableFilterTest with caching off (statestore_cache_max_bytes=0): a table
filter turns a filtered-out update into a tombstone, and the store behind a materialized filter
holds only the rows that pass."""

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, TopologyTestDriver

from .support import Capture

TOPIC = "topic1"
INTS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.Integer())


def is_even(key, value):
    return value % 2 == 0


def _config(make_config):
    return make_config(Serdes.String(), Serdes.Integer(), statestore_cache_max_bytes=0)


def _do_test_ktable(builder, table2, table3, config):
    filtered, filtered_not = Capture(), Capture()
    table2.to_stream().process(filtered)
    table3.to_stream().process(filtered_not)

    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.Integer())
        source.pipe_input("A", 1, timestamp=10)
        source.pipe_input("B", 2, timestamp=5)
        source.pipe_input("C", 3, timestamp=8)
        source.pipe_input("D", 4, timestamp=14)
        source.pipe_input("A", None, timestamp=18)
        source.pipe_input("B", None, timestamp=15)

    assert filtered.processed == [
        ("A", None, 10),
        ("B", 2, 5),
        ("C", None, 8),
        ("D", 4, 14),
        ("A", None, 18),
        ("B", None, 15),
    ]
    assert filtered_not.processed == [
        ("A", 1, 10),
        ("B", None, 5),
        ("C", 3, 8),
        ("D", None, 14),
        ("A", None, 18),
        ("B", None, 15),
    ]


def test_filter_passes_through_without_materialization(make_config):
    """Mirrors KTableFilterTest.shouldPassThroughWithoutMaterialization."""
    builder = StreamsBuilder()
    table1 = builder.table(TOPIC, INTS)
    table2 = table1.filter(is_even)
    table3 = table1.filter_not(is_even)
    assert (table1.queryable_store_name, table2.queryable_store_name, table3.queryable_store_name) == (
        None,
        None,
        None,
    )

    _do_test_ktable(builder, table2, table3, _config(make_config))


def test_filter_passes_through_on_materialization(make_config):
    """Mirrors KTableFilterTest.shouldPassThroughOnMaterialization: only the filter is materialized."""
    builder = StreamsBuilder()
    table1 = builder.table(TOPIC, INTS)
    table2 = table1.filter(is_even, Materialized.as_("store2"))
    table3 = table1.filter_not(is_even)
    assert (table1.queryable_store_name, table2.queryable_store_name, table3.queryable_store_name) == (
        None,
        "store2",
        None,
    )

    _do_test_ktable(builder, table2, table3, _config(make_config))


def test_filter_stores_hold_only_passing_rows(make_config):
    """Mirrors KTableFilterTest.shouldGetValuesOnMaterialization: what the value getters of the
    materialized filter (store2) and filter_not (store3) return, read here from their stores."""
    builder = StreamsBuilder()
    table1 = builder.table(TOPIC, INTS)
    table2 = table1.filter(is_even, Materialized.as_("store2"))
    table3 = table1.filter_not(is_even, Materialized.as_("store3"))
    table4 = table1.filter_not(is_even)
    assert table1.queryable_store_name is None
    assert table2.queryable_store_name == "store2"
    assert table3.queryable_store_name == "store3"
    assert table4.queryable_store_name is None

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.Integer())
        store2 = driver.get_timestamped_key_value_store("store2")
        store3 = driver.get_timestamped_key_value_store("store3")

        def view(store, key):
            found = store.get(key)
            return None if found is None else (found.value, found.timestamp)

        source.pipe_input("A", 1, timestamp=5)
        source.pipe_input("B", 1, timestamp=10)
        source.pipe_input("C", 1, timestamp=15)
        assert [view(store2, k) for k in "ABC"] == [None, None, None]
        assert [view(store3, k) for k in "ABC"] == [(1, 5), (1, 10), (1, 15)]

        source.pipe_input("A", 2, timestamp=10)
        source.pipe_input("B", 2, timestamp=5)
        assert [view(store2, k) for k in "ABC"] == [(2, 10), (2, 5), None]
        assert [view(store3, k) for k in "ABC"] == [None, None, (1, 15)]

        source.pipe_input("A", 3, timestamp=15)
        assert [view(store2, k) for k in "ABC"] == [None, (2, 5), None]
        assert [view(store3, k) for k in "ABC"] == [(3, 15), None, (1, 15)]

        source.pipe_input("A", None, timestamp=10)
        source.pipe_input("B", None, timestamp=20)
        assert [view(store2, k) for k in "ABC"] == [None, None, None]
        assert [view(store3, k) for k in "ABC"] == [None, None, (1, 15)]
