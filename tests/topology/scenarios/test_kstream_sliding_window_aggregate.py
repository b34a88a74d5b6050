"""Replays Kafka Streams' KStreamSlidingWindowAggregateTest (small inputs, "on window update").

A sliding window of time difference 10 has, per record at time t, a left window [t-10, t] and (once a
later record exists) a right window [t+1, t+11]. Kafka Streams' test compares the set of
``(value, timestamp)`` results per window start, since one record may update several windows.
"""

import pytest

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    SlidingWindows,
    StreamsBuilder,
    TopologyTestDriver,
)

from .windows_joins_support import (
    string_init,
    string_reducer,
    to_string_adder,
    warnings,
    windowed_records_by_start,
)


def _sliding(builder):
    return (
        builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(SlidingWindows.of_time_difference_and_grace(10, 5))
    )


def _materialized(with_cache):
    materialized = Materialized.as_("store-name")
    return materialized.with_caching_enabled() if with_cache else materialized.with_caching_disabled()


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_aggregate_small_input(make_config, capture, with_cache):
    """Mirrors KStreamSlidingWindowAggregateTest.testAggregateSmallInput (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _sliding(builder).aggregate(string_init, to_string_adder, _materialized(with_cache)).to_stream().process(
        capture
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        for value, timestamp in [("1", 10), ("2", 10), ("3", 14), ("4", 15), ("5", 20), ("6", 22), ("7", 30)]:
            topic.pipe_input("A", value, timestamp)

    assert windowed_records_by_start(capture) == {
        0: {("0+1", 10), ("0+1+2", 10)},
        4: {("0+1+2+3", 14)},
        5: {("0+1+2+3+4", 15)},
        10: {("0+1+2+3+4+5", 20)},
        11: {("0+3", 14), ("0+3+4", 15), ("0+3+4+5", 20)},
        12: {("0+3+4+5+6", 22)},
        15: {("0+4", 15), ("0+4+5", 20), ("0+4+5+6", 22)},
        16: {("0+5", 20), ("0+5+6", 22)},
        20: {("0+5+6+7", 30)},
        21: {("0+6", 22), ("0+6+7", 30)},
        23: {("0+7", 30)},
    }


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_reduce_small_input(make_config, capture, with_cache):
    """Mirrors KStreamSlidingWindowAggregateTest.testReduceSmallInput (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _sliding(builder).reduce(string_reducer, _materialized(with_cache)).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        for value, timestamp in [("1", 10), ("2", 14), ("3", 15), ("4", 22), ("5", 26), ("6", 30)]:
            topic.pipe_input("A", value, timestamp)

    assert windowed_records_by_start(capture) == {
        0: {("1", 10)},
        4: {("1+2", 14)},
        5: {("1+2+3", 15)},
        11: {("2", 14), ("2+3", 15)},
        12: {("2+3+4", 22)},
        15: {("3", 15), ("3+4", 22)},
        16: {("4", 22), ("4+5", 26)},
        20: {("4+5+6", 30)},
        23: {("5", 26), ("5+6", 30)},
        27: {("6", 30)},
    }


def test_should_log_and_count_a_late_record_and_a_null_value(make_config, capture, caplog):
    """A record whose windows all closed is dropped, logged with the window Kafka Streams checks:
    [t, t + time difference]; a null value is dropped too (sliding windows, unlike time and session
    windows, do not aggregate it). Both count on dropped-records."""
    builder = StreamsBuilder()
    _sliding(builder).count(_materialized(False)).to_stream().process(capture)
    caplog.set_level("WARNING")
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        topic.pipe_input("A", "on time", 100)
        topic.pipe_input("A", "late", 0)
        topic.pipe_input("A", None, 100)
        assert driver.metrics.total("dropped-records") == 2
    logged = warnings(caplog)
    assert (
        "Skipping record for expired window. topic=[topic] partition=[0] offset=[1] timestamp=[0] "
        "window=[0,10] expiration=[95] streamTime=[100]"
    ) in logged
    assert "Skipping record due to null key or value. topic=[topic] partition=[0] offset=[2]" in logged
    assert windowed_records_by_start(capture) == {90: {(1, 100)}}
