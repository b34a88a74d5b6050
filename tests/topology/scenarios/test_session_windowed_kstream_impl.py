"""Replays Kafka Streams' SessionWindowedKStreamImplTest: count, reduce and aggregate over sessions with
a 500 ms inactivity gap and no grace ("on window update").

When a record merges into an existing session, the old session is retracted with a tombstone (at the
old session's end) before the merged session is forwarded. A session result carries the session end as
its timestamp.
"""

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    SessionWindow,
    SessionWindows,
    StreamsBuilder,
    TopologyTestDriver,
    Windowed,
)

from .windows_joins_support import session_merger, string_init, string_reducer, to_string_adder


def _sessions(builder):
    return (
        builder.stream("input", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(500))
    )


def _process_data(driver):
    topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
    topic.pipe_input("1", "1", 10)
    topic.pipe_input("1", "2", 15)
    topic.pipe_input("1", "3", 600)
    topic.pipe_input("2", "1", 600)
    topic.pipe_input("2", "2", 599)


def _s(key, start, end):
    return Windowed(key, SessionWindow(start, end))


def _expected(first, merged_first, third, fourth, merged_fourth):
    return [
        (_s("1", 10, 10), first, 10),
        (_s("1", 10, 10), None, 10),
        (_s("1", 10, 15), merged_first, 15),
        (_s("1", 600, 600), third, 600),
        (_s("2", 600, 600), fourth, 600),
        (_s("2", 600, 600), None, 600),
        (_s("2", 599, 600), merged_fourth, 600),
    ]


def test_count_session_windowed_with_caching_disabled(make_config, capture):
    """Mirrors SessionWindowedKStreamImplTest.shouldCountSessionWindowedWithCachingDisabled
    (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _sessions(builder).count().to_stream().process(capture)

    config = make_config(Serdes.String(), Serdes.String(), statestore_cache_max_bytes=0)
    with TopologyTestDriver(builder.build(), config) as driver:
        _process_data(driver)

    assert capture.processed == _expected(1, 2, 1, 1, 2)


def test_count_session_windowed_with_caching_enabled(make_config, capture):
    """Mirrors SessionWindowedKStreamImplTest.shouldCountSessionWindowedWithCachingEnabled
    (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _sessions(builder).count().to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == _expected(1, 2, 1, 1, 2)


def test_reduce_session_windowed(make_config, capture):
    """Mirrors SessionWindowedKStreamImplTest.shouldReduceWindowed (ON_WINDOW_UPDATE)."""
    builder = StreamsBuilder()
    _sessions(builder).reduce(string_reducer).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == _expected("1", "1+2", "3", "1", "1+2")


def test_aggregate_session_windowed_merges_with_the_merger(make_config, capture):
    """Mirrors SessionWindowedKStreamImplTest.shouldAggregateSessionWindowed (ON_WINDOW_UPDATE): a merge
    starts from a fresh initial aggregate, merges the existing session into it (merger("0", "0+1") =
    "0+0+1"), then adds the new value ("0+0+1+2")."""
    builder = StreamsBuilder()
    _sessions(builder).aggregate(
        string_init, to_string_adder, session_merger, Materialized.with_(Serdes.String(), Serdes.String())
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        _process_data(driver)

    assert capture.processed == _expected("0+1", "0+0+1+2", "0+3", "0+1", "0+0+1+2")
