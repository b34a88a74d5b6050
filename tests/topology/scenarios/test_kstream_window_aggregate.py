"""Replays Kafka Streams' KStreamWindowAggregateTest: hopping-window aggregation, out-of-order records,
and records dropped because their window has expired (logged and counted, never silently lost).

Only the default emit strategy ("on window update") is replayed; caching is exercised both ways, which
the driver's commit-per-record makes invisible downstream.
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

from .support import records
from .windows_joins_support import string_init, to_string_adder, warnings


def _caching(materialized, with_cache):
    return materialized.with_caching_enabled() if with_cache else materialized.with_caching_disabled()


def _w(key, start, end):
    return Windowed(key, TimeWindow(start, end))


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_hopping_window_aggregation_updates_every_window_a_record_falls_into(
    make_config, capture, with_cache
):
    """Mirrors KStreamWindowAggregateTest.testAggBasic (ON_WINDOW_UPDATE): size 10, advance 5, grace 100;
    the last three records are out of order but within grace."""
    builder = StreamsBuilder()
    (
        builder.stream("topic1", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(TimeWindows.of_size_and_grace(10, 100).advance_by(5))
        .aggregate(
            string_init,
            to_string_adder,
            _caching(Materialized.as_("topic1-Canonized").with_value_serde(Serdes.String()), with_cache),
        )
        .to_stream()
        .process(capture)
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic1", Serdes.String(), Serdes.String())
        for key, value, timestamp in [
            ("A", "1", 0),
            ("B", "2", 1),
            ("C", "3", 2),
            ("D", "4", 3),
            ("A", "1", 4),
            ("A", "1", 5),
            ("B", "2", 6),
            ("D", "4", 7),
            ("B", "2", 8),
            ("C", "3", 9),
            ("A", "1", 10),
            ("B", "2", 11),
            ("D", "4", 12),
            ("B", "2", 13),
            ("C", "3", 14),
            ("B", "1", 3),
            ("B", "2", 2),
            ("B", "3", 9),
        ]:
            topic.pipe_input(key, value, timestamp)

    assert capture.processed == [
        (_w("A", 0, 10), "0+1", 0),
        (_w("B", 0, 10), "0+2", 1),
        (_w("C", 0, 10), "0+3", 2),
        (_w("D", 0, 10), "0+4", 3),
        (_w("A", 0, 10), "0+1+1", 4),
        (_w("A", 0, 10), "0+1+1+1", 5),
        (_w("A", 5, 15), "0+1", 5),
        (_w("B", 0, 10), "0+2+2", 6),
        (_w("B", 5, 15), "0+2", 6),
        (_w("D", 0, 10), "0+4+4", 7),
        (_w("D", 5, 15), "0+4", 7),
        (_w("B", 0, 10), "0+2+2+2", 8),
        (_w("B", 5, 15), "0+2+2", 8),
        (_w("C", 0, 10), "0+3+3", 9),
        (_w("C", 5, 15), "0+3", 9),
        (_w("A", 5, 15), "0+1+1", 10),
        (_w("A", 10, 20), "0+1", 10),
        (_w("B", 5, 15), "0+2+2+2", 11),
        (_w("B", 10, 20), "0+2", 11),
        (_w("D", 5, 15), "0+4+4", 12),
        (_w("D", 10, 20), "0+4", 12),
        (_w("B", 5, 15), "0+2+2+2+2", 13),
        (_w("B", 10, 20), "0+2+2", 13),
        (_w("C", 5, 15), "0+3+3", 14),
        (_w("C", 10, 20), "0+3", 14),
        (_w("B", 0, 10), "0+2+2+2+1", 8),
        (_w("B", 0, 10), "0+2+2+2+1+2", 8),
        (_w("B", 0, 10), "0+2+2+2+1+2+3", 9),
        (_w("B", 5, 15), "0+2+2+2+2+3", 13),
    ]


def _aggregate_to_output(builder, windows, materialized):
    (
        builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(windows)
        .aggregate(lambda: "", lambda key, value, aggregate: f"{aggregate}+{value}", materialized)
        .to_stream()
        .map(lambda key, value: (str(key), value))
        .to("output")
    )


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_records_for_expired_windows_are_logged_counted_and_dropped(make_config, caplog, with_cache):
    """Mirrors KStreamWindowAggregateTest.shouldLogAndMeterWhenSkippingExpiredWindow (ON_WINDOW_UPDATE):
    size 10, advance 5, grace 90, retention 100; at stream time 100 the windows of records 0..6 have
    expired."""
    builder = StreamsBuilder()
    _aggregate_to_output(
        builder,
        TimeWindows.of_size_and_grace(10, 90).advance_by(5),
        _caching(
            Materialized.as_("topic1-Canonicalized")
            .with_value_serde(Serdes.String())
            .with_logging_disabled()
            .with_retention(100),
            with_cache,
        ),
    )

    caplog.set_level("WARNING")
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        for value, timestamp in [
            ("100", 100),
            ("0", 0),
            ("1", 1),
            ("2", 2),
            ("3", 3),
            ("4", 4),
            ("5", 5),
            ("6", 6),
            ("105", 105),
            ("106", 106),
        ]:
            topic.pipe_input("k", value, timestamp)

        assert driver.metrics.total("dropped-records") == 7
        logged = warnings(caplog)
        for offset, timestamp in zip(range(1, 8), range(0, 7), strict=True):
            assert (
                f"Skipping record for expired window. topic=[topic] partition=[0] offset=[{offset}] "
                f"timestamp=[{timestamp}] window=[0,10) expiration=[10] streamTime=[100]"
            ) in logged
        assert records(driver.create_output_topic("output", Serdes.String(), Serdes.String())) == [
            ("[k@95/105]", "+100", 100),
            ("[k@100/110]", "+100", 100),
            ("[k@5/15]", "+5", 5),
            ("[k@5/15]", "+5+6", 6),
            ("[k@100/110]", "+100+105", 105),
            ("[k@105/115]", "+105", 105),
            ("[k@100/110]", "+100+105+106", 106),
            ("[k@105/115]", "+105+106", 106),
        ]


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_records_behind_the_grace_period_are_logged_counted_and_dropped(make_config, caplog, with_cache):
    """Mirrors KStreamWindowAggregateTest.shouldLogAndMeterWhenSkippingExpiredWindowByGrace
    (ON_WINDOW_UPDATE):
    tumbling windows of 10 with grace 90; at stream time 200 a window closes at its end + 90."""
    builder = StreamsBuilder()
    _aggregate_to_output(
        builder,
        TimeWindows.of_size_and_grace(10, 90).advance_by(10),
        _caching(
            Materialized.as_("topic1-Canonicalized")
            .with_value_serde(Serdes.String())
            .with_logging_disabled(),
            with_cache,
        ),
    )

    caplog.set_level("WARNING")
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        for value, timestamp in [
            ("100", 200),
            ("0", 100),
            ("1", 101),
            ("2", 102),
            ("3", 103),
            ("4", 104),
            ("5", 105),
            ("6", 6),
        ]:
            topic.pipe_input("k", value, timestamp)

        assert driver.metrics.total("dropped-records") == 7
        logged = warnings(caplog)
        for offset, timestamp in zip(range(1, 7), range(100, 106), strict=True):
            assert (
                f"Skipping record for expired window. topic=[topic] partition=[0] offset=[{offset}] "
                f"timestamp=[{timestamp}] window=[100,110) expiration=[110] streamTime=[200]"
            ) in logged
        assert (
            "Skipping record for expired window. topic=[topic] partition=[0] offset=[7] "
            "timestamp=[6] window=[0,10) expiration=[110] streamTime=[200]"
        ) in logged
        assert records(driver.create_output_topic("output", Serdes.String(), Serdes.String())) == [
            ("[k@200/210]", "+100", 200),
        ]
