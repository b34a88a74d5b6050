"""Replays Kafka Streams' KGroupedTableImplTest: reduce, count and aggregate on a re-grouped table,
where an update first subtracts the old value and then adds the new one."""

from streams_runtime import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
)

TOPIC = "input"


def int_projection(key, value):
    return KeyValue(key, int(value))


def _config(make_config):
    return make_config(Serdes.String(), Serdes.Integer())


def _assert_reduced(capture, driver):
    """The shared body of KGroupedTableImplTest.assertReduced: A and B change value and timestamp."""
    source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.Double())
    source.pipe_input("A", 1.1, timestamp=10)
    source.pipe_input("B", 2.2, timestamp=11)

    latest = capture.last_value_and_timestamp_per_key()
    assert latest["A"] == (1, 10)
    assert latest["B"] == (2, 11)

    source.pipe_input("A", 2.6, timestamp=30)
    source.pipe_input("B", 1.3, timestamp=30)
    source.pipe_input("A", 5.7, timestamp=50)
    source.pipe_input("B", 6.2, timestamp=20)

    latest = capture.last_value_and_timestamp_per_key()
    assert latest["A"] == (5, 50)
    assert latest["B"] == (6, 30)  # the aggregate keeps the larger of its timestamps


def _double_table(builder, materialized=None):
    consumed = Consumed(key_serde=Serdes.String(), value_serde=Serdes.Double())
    if materialized is None:
        return builder.table(TOPIC, consumed)
    return builder.table(TOPIC, consumed, materialized)


def test_reduce_with_named_store(make_config, capture):
    """Mirrors KGroupedTableImplTest.shouldReduce."""
    builder = StreamsBuilder()
    reduced = (
        _double_table(
            builder, Materialized(store_name="store", key_serde=Serdes.String(), value_serde=Serdes.Double())
        )
        .group_by(int_projection)
        .reduce(lambda a, b: a + b, lambda a, b: a - b, Materialized.as_("reduced"))
    )
    reduced.to_stream().process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        _assert_reduced(capture, driver)
    assert reduced.queryable_store_name == "reduced"


def test_reduce_with_internal_store_name(make_config, capture):
    """Mirrors KGroupedTableImplTest.shouldReduceWithInternalStoreName: no queryable store name."""
    builder = StreamsBuilder()
    reduced = (
        _double_table(
            builder, Materialized(store_name="store", key_serde=Serdes.String(), value_serde=Serdes.Double())
        )
        .group_by(int_projection)
        .reduce(lambda a, b: a + b, lambda a, b: a - b)
    )
    reduced.to_stream().process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        _assert_reduced(capture, driver)
    assert reduced.queryable_store_name is None


def test_reduce_materializes_results(make_config, capture):
    """Mirrors KGroupedTableImplTest.shouldReduceAndMaterializeResults."""
    builder = StreamsBuilder()
    reduced = (
        _double_table(builder)
        .group_by(int_projection)
        .reduce(
            lambda a, b: a + b,
            lambda a, b: a - b,
            Materialized(store_name="reduce", key_serde=Serdes.String(), value_serde=Serdes.Integer()),
        )
    )
    reduced.to_stream().process(capture)

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        _assert_reduced(capture, driver)
        store = driver.get_key_value_store("reduce")
        assert (store.get("A"), store.get("B")) == (5, 6)
        timestamped = driver.get_timestamped_key_value_store("reduce")
        a, b = timestamped.get("A"), timestamped.get("B")
        assert (a.value, a.timestamp) == (5, 50)
        assert (b.value, b.timestamp) == (6, 30)


def _process_data(driver):
    source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.String())
    source.pipe_input("A", "1", timestamp=10)
    source.pipe_input("B", "1", timestamp=50)
    source.pipe_input("C", "1", timestamp=30)
    source.pipe_input("D", "2", timestamp=40)
    source.pipe_input("E", "2", timestamp=60)


def _by_value(builder):
    return builder.table(TOPIC, Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())).group_by(
        lambda key, value: KeyValue(value, value),
        Grouped(key_serde=Serdes.String(), value_serde=Serdes.String()),
    )


def test_count_materializes_results(make_config):
    """Mirrors KGroupedTableImplTest.shouldCountAndMaterializeResults."""
    builder = StreamsBuilder()
    _by_value(builder).count(
        Materialized(store_name="count", key_serde=Serdes.String(), value_serde=Serdes.Long())
    )

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        _process_data(driver)
        counts = driver.get_key_value_store("count")
        assert (counts.get("1"), counts.get("2")) == (3, 2)
        timestamped = driver.get_timestamped_key_value_store("count")
        one, two = timestamped.get("1"), timestamped.get("2")
        assert (one.value, one.timestamp) == (3, 50)
        assert (two.value, two.timestamp) == (2, 60)


def test_aggregate_materializes_results(make_config):
    """Mirrors KGroupedTableImplTest.shouldAggregateAndMaterializeResults: adder "+v", subtractor "-v"."""
    builder = StreamsBuilder()
    _by_value(builder).aggregate(
        lambda: "0",
        lambda key, value, aggregate: f"{aggregate}+{value}",
        lambda key, value, aggregate: f"{aggregate}-{value}",
        Materialized(store_name="aggregate", key_serde=Serdes.String(), value_serde=Serdes.String()),
    )

    with TopologyTestDriver(builder.build(), _config(make_config)) as driver:
        _process_data(driver)
        aggregate = driver.get_key_value_store("aggregate")
        assert (aggregate.get("1"), aggregate.get("2")) == ("0+1+1+1", "0+2+2")
        timestamped = driver.get_timestamped_key_value_store("aggregate")
        one, two = timestamped.get("1"), timestamped.get("2")
        assert (one.value, one.timestamp) == ("0+1+1+1", 50)
        assert (two.value, two.timestamp) == ("0+2+2", 60)
