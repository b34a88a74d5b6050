"""Replays Kafka Streams' KGroupedStreamImplTest: count, reduce and aggregate on a grouped stream,
read back through the driver's store access (plain and timestamped views)."""

import logging

from streams_runtime import Consumed, Grouped, Materialized, Serdes, StreamsBuilder, TopologyTestDriver

TOPIC = "topic"


def _grouped(builder):
    stream = builder.stream(TOPIC, Consumed(key_serde=Serdes.String(), value_serde=Serdes.String()))
    return stream.group_by_key(Grouped(key_serde=Serdes.String(), value_serde=Serdes.String()))


def _process_data(driver):
    source = driver.create_input_topic(TOPIC, Serdes.String(), Serdes.String())
    source.pipe_input("1", "A", timestamp=5)
    source.pipe_input("2", "B", timestamp=1)
    source.pipe_input("1", "C", timestamp=3)
    source.pipe_input("1", "D", timestamp=10)
    source.pipe_input("3", "E", timestamp=8)
    source.pipe_input("3", "F", timestamp=9)
    source.pipe_input("3", None)  # a null value is skipped by the aggregation


def _value_and_timestamp(store, key):
    found = store.get(key)
    return None if found is None else (found.value, found.timestamp)


def test_count_materializes_results(make_config):
    """Mirrors KGroupedStreamImplTest.shouldCountAndMaterializeResults."""
    builder = StreamsBuilder()
    _grouped(builder).count(Materialized(store_name="count", key_serde=Serdes.String()))

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        count = driver.get_key_value_store("count")
        assert (count.get("1"), count.get("2"), count.get("3")) == (3, 1, 2)
        timestamped = driver.get_timestamped_key_value_store("count")
        assert _value_and_timestamp(timestamped, "1") == (3, 10)
        assert _value_and_timestamp(timestamped, "2") == (1, 1)
        assert _value_and_timestamp(timestamped, "3") == (2, 9)


def test_reduce_materializes_results(make_config):
    """Mirrors KGroupedStreamImplTest.shouldReduceAndMaterializeResults."""
    builder = StreamsBuilder()
    _grouped(builder).reduce(
        lambda v1, v2: f"{v1}+{v2}",
        Materialized(store_name="reduce", key_serde=Serdes.String(), value_serde=Serdes.String()),
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        reduced = driver.get_key_value_store("reduce")
        assert (reduced.get("1"), reduced.get("2"), reduced.get("3")) == ("A+C+D", "B", "E+F")
        timestamped = driver.get_timestamped_key_value_store("reduce")
        assert _value_and_timestamp(timestamped, "1") == ("A+C+D", 10)
        assert _value_and_timestamp(timestamped, "2") == ("B", 1)
        assert _value_and_timestamp(timestamped, "3") == ("E+F", 9)


def test_aggregate_materializes_results(make_config):
    """Mirrors KGroupedStreamImplTest.shouldAggregateAndMaterializeResults: initializer "0", adder "+v"."""
    builder = StreamsBuilder()
    _grouped(builder).aggregate(
        lambda: "0",
        lambda key, value, aggregate: f"{aggregate}+{value}",
        Materialized(store_name="aggregate", key_serde=Serdes.String(), value_serde=Serdes.String()),
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        aggregate = driver.get_key_value_store("aggregate")
        assert (aggregate.get("1"), aggregate.get("2"), aggregate.get("3")) == ("0+A+C+D", "0+B", "0+E+F")
        timestamped = driver.get_timestamped_key_value_store("aggregate")
        assert _value_and_timestamp(timestamped, "1") == ("0+A+C+D", 10)
        assert _value_and_timestamp(timestamped, "2") == ("0+B", 1)
        assert _value_and_timestamp(timestamped, "3") == ("0+E+F", 9)


def test_aggregate_with_default_serdes(make_config, capture):
    """Mirrors KGroupedStreamImplTest.shouldAggregateWithDefaultSerdes: the downstream view of the
    aggregate's latest value and timestamp per key."""
    builder = StreamsBuilder()
    _grouped(builder).aggregate(
        lambda: "0", lambda key, value, aggregate: f"{aggregate}+{value}"
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    latest = capture.last_value_and_timestamp_per_key()
    assert latest["1"] == ("0+A+C+D", 10)
    assert latest["2"] == ("0+B", 1)
    assert latest["3"] == ("0+E+F", 9)


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_count_logs_skipped_null_value(make_config, caplog):
    """Mirrors KGroupedStreamImplTest.shouldLogAndMeasureSkipsInAggregate: the null-valued seventh
    record (offset 6) is skipped with Kafka Streams' warning."""
    builder = StreamsBuilder()
    _grouped(builder).count(Materialized(store_name="count", key_serde=Serdes.String()))

    caplog.set_level(logging.WARNING)
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        assert (
            "Skipping record due to null key or value. topic=[topic] partition=[0] offset=[6]"
            in _warnings(caplog)
        )


def test_reduce_logs_skipped_null_value(make_config, caplog):
    """Mirrors KGroupedStreamImplTest.shouldLogAndMeasureSkipsInReduce."""
    builder = StreamsBuilder()
    _grouped(builder).reduce(
        lambda v1, v2: f"{v1}+{v2}",
        Materialized(store_name="reduce", key_serde=Serdes.String(), value_serde=Serdes.String()),
    )

    caplog.set_level(logging.WARNING)
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        assert (
            "Skipping record due to null key or value. topic=[topic] partition=[0] offset=[6]"
            in _warnings(caplog)
        )
