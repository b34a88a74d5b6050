"""Replays Kafka Streams' TimeWindowedKStreamImplTest: count, reduce and aggregate over 500 ms tumbling
windows without grace (the default emit strategy, "on window update"), with and without caching.

The driver commits after every record, so caching does not change what is forwarded. A windowed result
carries the largest timestamp of the records aggregated into it so far.
"""

import pytest

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    StreamsBuilder,
    TimeWindow,
    TimeWindows,
    TopologyTestDriver,
    Windowed,
)

from .windows_joins_support import string_init, string_reducer, to_string_adder

KEY_1_WINDOW_0 = Windowed("1", TimeWindow(0, 500))
KEY_1_WINDOW_1 = Windowed("1", TimeWindow(500, 1000))
KEY_2_WINDOW_1 = Windowed("2", TimeWindow(500, 1000))
KEY_2_WINDOW_2 = Windowed("2", TimeWindow(1000, 1500))


def _windowed_stream(builder):
    return (
        builder.stream("input", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(TimeWindows.of_size_with_no_grace(500))
    )


def _process_data(driver):
    topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
    topic.pipe_input("1", "1", 10)
    topic.pipe_input("1", "2", 15)
    topic.pipe_input("1", "3", 500)
    topic.pipe_input("2", "10", 550)
    topic.pipe_input("2", "20", 500)
    topic.pipe_input("2", "30", 1000)


def _caching(materialized, with_cache):
    return materialized.with_caching_enabled() if with_cache else materialized.with_caching_disabled()


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_count_windowed(make_config, capture, with_cache):
    """Mirrors TimeWindowedKStreamImplTest.shouldCountWindowed (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _windowed_stream(builder).count(
        _caching(Materialized.with_(Serdes.String(), Serdes.Long()), with_cache)
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == [
        (KEY_1_WINDOW_0, 1, 10),
        (KEY_1_WINDOW_0, 2, 15),
        (KEY_1_WINDOW_1, 1, 500),
        (KEY_2_WINDOW_1, 1, 550),
        (KEY_2_WINDOW_1, 2, 550),
        (KEY_2_WINDOW_2, 1, 1000),
    ]


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_reduce_windowed(make_config, capture, with_cache):
    """Mirrors TimeWindowedKStreamImplTest.shouldReduceWindowed (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _windowed_stream(builder).reduce(
        string_reducer, _caching(Materialized.with_(Serdes.String(), Serdes.String()), with_cache)
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == [
        (KEY_1_WINDOW_0, "1", 10),
        (KEY_1_WINDOW_0, "1+2", 15),
        (KEY_1_WINDOW_1, "3", 500),
        (KEY_2_WINDOW_1, "10", 550),
        (KEY_2_WINDOW_1, "10+20", 550),
        (KEY_2_WINDOW_2, "30", 1000),
    ]


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_aggregate_windowed(make_config, capture, with_cache):
    """Mirrors TimeWindowedKStreamImplTest.shouldAggregateWindowed (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _windowed_stream(builder).aggregate(
        string_init,
        to_string_adder,
        _caching(Materialized.with_(Serdes.String(), Serdes.String()), with_cache),
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == [
        (KEY_1_WINDOW_0, "0+1", 10),
        (KEY_1_WINDOW_0, "0+1+2", 15),
        (KEY_1_WINDOW_1, "0+3", 500),
        (KEY_2_WINDOW_1, "0+10", 550),
        (KEY_2_WINDOW_1, "0+10+20", 550),
        (KEY_2_WINDOW_2, "0+30", 1000),
    ]


def test_materialized_count_keeps_only_unexpired_windows_without_cache(make_config):
    """Mirrors TimeWindowedKStreamImplTest.shouldMaterializeCount (ON_WINDOW_UPDATE, caching disabled):
    with retention = size + grace = 500 ms and stream time 1000, a fetch of keys "1".."2" over [0, 1000]
    finds only the window [1000, 1500) of key "2" (plain and timestamped views)."""
    builder = StreamsBuilder()
    _windowed_stream(builder).count(
        Materialized.as_("count-store")
        .with_key_serde(Serdes.String())
        .with_value_serde(Serdes.Long())
        .with_caching_disabled()
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)
        store = driver.get_window_store("count-store")
        with store.fetch_all(0, 1000) as it:
            assert [(kv.key, kv.value) for kv in it] == [(KEY_2_WINDOW_2, 1)]
        timestamped = driver.get_timestamped_window_store("count-store")
        with timestamped.fetch_all(0, 1000) as it:
            assert [(kv.key, kv.value.value, kv.value.timestamp) for kv in it] == [(KEY_2_WINDOW_2, 1, 1000)]
