"""Replays Kafka Streams' KStreamSessionWindowAggregateProcessorTest (both emit strategies) and the
emit-on-window-close cases of SessionWindowedKStreamImplTest, through the DSL and the test driver.

The close rule is Kafka Streams' since 3.0: a session closes once stream time passes its end plus the
inactivity gap plus the grace period, since a record within the gap of its end can still merge into it.
Kafka's processor tests read results after a cache flush (one result per session); the driver commits
after every record, so under "on window update" the cached cases compare the last result per session,
and the "on window close" cases (never cached, as in Kafka) compare the exact output.
"""

import logging

import pytest

from streams_runtime import (
    Consumed,
    EmitStrategy,
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

GAP_MS = 5 * 60 * 1000
STORE = "session-store"
STRATEGIES = pytest.mark.parametrize("emit_final", [False, True], ids=["on_window_update", "on_window_close"])


def _s(key, start, end):
    return Windowed(key, SessionWindow(start, end))


def _count_topology(capture, windows, emit_final, caching=True, retention=None):
    """KStreamSessionWindowAggregateProcessorTest's processor: count (initializer 0, aggregator +1,
    merger adds) into session store ``session-store`` (retention three gaps, as the test builds it)."""
    builder = StreamsBuilder()
    grouped = builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String())).group_by_key(
        Grouped.with_(Serdes.String(), Serdes.String())
    )
    windowed = grouped.windowed_by(windows)
    if emit_final:
        windowed = windowed.emit_strategy(EmitStrategy.on_window_close())
    mat = Materialized.as_(STORE).with_value_serde(Serdes.Long())
    mat = mat.with_caching_enabled() if caching else mat.with_caching_disabled()
    mat = mat.with_retention(retention if retention is not None else GAP_MS * 3)
    (
        windowed.aggregate(lambda: 0, lambda k, v, agg: agg + 1, lambda k, a, b: a + b, mat)
        .to_stream()
        .process(capture)
    )
    return builder.build()


def _pipe(driver, records):
    topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
    for key, value, timestamp in records:
        topic.pipe_input(key, value, timestamp)


def _sessions(driver, key, earliest_end, latest_start):
    with driver.get_session_store(STORE).find_sessions(key, earliest_end, latest_start) as it:
        return [(kv.key, kv.value) for kv in it]


def _last_per_session(capture):
    return capture.last_value_and_timestamp_per_key()


def test_kafka_12718_a_record_within_the_gap_of_a_closed_looking_session_still_merges(make_config, capture):
    """The KAFKA-12718 example (Kafka Streams 3.0+): gap 5, grace 0, k1@0, k2@4, k1@2. At stream time 4 the
    session [0,0] has not closed (4 - 5 - 0 < 0), so k1@2 merges into it: [k1@0/0] is retracted and
    [k1@0/2]=2 follows; nothing is dropped."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_with_no_grace(5), False, caching=False, retention=5
    )
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("k1", "a", 0), ("k2", "b", 4), ("k1", "c", 2)])
        assert driver.metrics.total("dropped-records") == 0
    assert capture.processed == [
        (_s("k1", 0, 0), 1, 0),
        (_s("k2", 4, 4), 1, 4),
        (_s("k1", 0, 0), None, 0),
        (_s("k1", 0, 2), 2, 2),
    ]


@STRATEGIES
def test_should_create_single_session_when_within_gap(make_config, capture, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldCreateSingleSessionWhenWithinGap."""
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("john", "first", 0), ("john", "second", 500)])
        assert [value for _, value in _sessions(driver, "john", 0, 2000)][:1] == [2]


@STRATEGIES
def test_should_merge_sessions(make_config, capture, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldMergeSessions: a record half a gap after the
    first bridges it with the session one gap + 1 later."""
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        topic.pipe_input("mel", "first", 0)
        assert _sessions(driver, "mel", 0, 0)
        topic.pipe_input("mel", "second", GAP_MS + 1)
        assert _sessions(driver, "mel", GAP_MS + 1, GAP_MS + 1)
        assert _sessions(driver, "mel", 0, 0)  # not within the gap: still its own session
        topic.pipe_input("mel", "third", GAP_MS // 2)
        assert _sessions(driver, "mel", 0, GAP_MS + 1) == [(_s("mel", 0, GAP_MS + 1), 3)]


@STRATEGIES
def test_should_update_session_if_the_same_time(make_config, capture, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldUpdateSessionIfTheSameTime."""
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("mel", "first", 0), ("mel", "second", 0)])
        assert _sessions(driver, "mel", 0, 0) == [(_s("mel", 0, 0), 2)]


@STRATEGIES
def test_should_have_multiple_sessions_for_same_id_when_timestamp_apart_by_session_gap(
    make_config, capture, emit_final
):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldHaveMultipleSessionsForSameIdWhenTimestamp
    ApartBySessionGap: three sessions of "mel"; on window close only the two closed ones are emitted."""
    now = 2 * (GAP_MS + 1)
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(
            driver,
            [("mel", "first", 0)] + [("mel", "second", GAP_MS + 1)] * 2 + [("mel", "third", now)] * 3,
        )
    expected = [
        (_s("mel", 0, 0), 1, 0),
        (_s("mel", GAP_MS + 1, GAP_MS + 1), 2, GAP_MS + 1),
    ]
    if emit_final:
        assert capture.processed == expected
    else:
        expected.append((_s("mel", now, now), 3, now))
        assert _last_per_session(capture) == {key: (value, ts) for key, value, ts in expected}


@STRATEGIES
def test_should_remove_merged_sessions_from_state_store(make_config, capture, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldRemoveMergedSessionsFromStateStore."""
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        topic.pipe_input("a", "1", 0)
        assert _sessions(driver, "a", 0, 0)[:1] == [(_s("a", 0, 0), 1)]
        topic.pipe_input("a", "2", 100)
        assert _sessions(driver, "a", 0, 100) == [(_s("a", 0, 100), 2)]


@STRATEGIES
def test_should_handle_multiple_sessions_and_merging(make_config, capture, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldHandleMultipleSessionsAndMerging: on window
    close the sessions ending at 0 close first (ordered by key), then d's merged session."""
    half = GAP_MS // 2
    topology = _count_topology(capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final)
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(
            driver,
            [
                ("a", "1", 0),
                ("b", "1", 0),
                ("c", "1", 0),
                ("d", "1", 0),
                ("d", "2", half),
                ("a", "2", GAP_MS + 1),
                ("b", "2", GAP_MS + 1),
                ("a", "3", GAP_MS + 1 + half),
                ("c", "3", GAP_MS + 1 + half),
            ],
        )
    expected = [
        (_s("a", 0, 0), 1, 0),
        (_s("b", 0, 0), 1, 0),
        (_s("c", 0, 0), 1, 0),
        (_s("d", 0, half), 2, half),
    ]
    if emit_final:
        assert capture.processed == expected
    else:
        expected += [
            (_s("b", GAP_MS + 1, GAP_MS + 1), 1, GAP_MS + 1),
            (_s("a", GAP_MS + 1, GAP_MS + 1 + half), 2, GAP_MS + 1 + half),
            (_s("c", GAP_MS + 1 + half, GAP_MS + 1 + half), 1, GAP_MS + 1 + half),
        ]
        assert _last_per_session(capture) == {key: (value, ts) for key, value, ts in expected}


def test_should_immediately_forward_new_session_when_non_cached_store(make_config, capture):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldImmediatelyForwardNewSessionWhenNonCached
    Store (on window update)."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), False, caching=False
    )
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("a", "1", 0), ("b", "1", 0), ("c", "1", 0)])
    assert capture.processed == [(_s("a", 0, 0), 1, 0), (_s("b", 0, 0), 1, 0), (_s("c", 0, 0), 1, 0)]


def test_should_immediately_forward_removed_sessions_when_merging(make_config, capture):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldImmediatelyForwardRemovedSessionsWhenMerging
    (on window update): the merged-away session goes out as a tombstone at its end."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), False, caching=False
    )
    with TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("a", "1", 0), ("a", "1", 5)])
    assert capture.processed == [(_s("a", 0, 0), 1, 0), (_s("a", 0, 0), None, 0), (_s("a", 0, 5), 2, 5)]


@STRATEGIES
def test_should_log_and_meter_when_skipping_null_key(make_config, capture, caplog, emit_final):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldLogAndMeterWhenSkippingNullKeyWithBuiltIn
    Metrics."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_with_no_grace(GAP_MS), emit_final, caching=False
    )
    with caplog.at_level(logging.WARNING), TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [(None, "1", 0)])
        assert driver.metrics.total("dropped-records") == 1
    assert "Skipping record due to null key. topic=[topic] partition=[0] offset=[0]" in caplog.messages
    assert capture.processed == []


def test_should_log_and_meter_when_skipping_late_record_with_zero_grace(make_config, capture, caplog):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldLogAndMeterWhenSkippingLateRecordWithZero
    Grace:
    gap 10, grace 0; at stream time 11 a session ending at 0 closed at 0 + 10 + 0 < 11."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_and_grace(10, 0), False, caching=False, retention=30
    )
    with caplog.at_level(logging.WARNING), TopologyTestDriver(topology, make_config()) as driver:
        _pipe(driver, [("dummy", "dummy", 0), ("OnTime1", "1", 0), ("dummy", "dummy", 11)])
        assert driver.metrics.total("dropped-records") == 0
        caplog.clear()
        _pipe(driver, [("Late1", "1", 0)])
        assert driver.metrics.total("dropped-records") == 1
    assert (
        "Skipping record for expired window. topic=[topic] partition=[0] offset=[3] timestamp=[0] "
        "window=[0,0] expiration=[1] streamTime=[11]"
    ) in caplog.messages
    assert (_s("OnTime1", 0, 0), 1, 0) in capture.processed
    assert all(key.key != "Late1" for key, _, _ in capture.processed)


def test_should_log_and_meter_when_skipping_late_record_with_nonzero_grace(make_config, capture, caplog):
    """Mirrors KStreamSessionWindowAggregateProcessorTest.shouldLogAndMeterWhenSkippingLateRecordWith
    NonzeroGrace: gap 10, grace 1; a record at 0 is on time at stream time 11, late at 12."""
    topology = _count_topology(
        capture, SessionWindows.of_inactivity_gap_and_grace(10, 1), False, caching=False, retention=30
    )
    with caplog.at_level(logging.WARNING), TopologyTestDriver(topology, make_config()) as driver:
        _pipe(
            driver,
            [
                ("dummy", "dummy", 0),
                ("OnTime1", "1", 0),
                ("dummy", "dummy", 11),
                ("OnTime2", "1", 0),
                ("dummy", "dummy", 12),
                ("Late1", "1", 0),
            ],
        )
        assert driver.metrics.total("dropped-records") == 1
    assert (
        "Skipping record for expired window. topic=[topic] partition=[0] offset=[5] timestamp=[0] "
        "window=[0,0] expiration=[1] streamTime=[12]"
    ) in caplog.messages
    assert (_s("OnTime2", 0, 0), 1, 0) in capture.processed


# ---------------------------------------------------------------- SessionWindowedKStreamImplTest, emit final


def _windowed_500(builder):
    return (
        builder.stream("input", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(500))
        .emit_strategy(EmitStrategy.on_window_close())
    )


def _process_data(driver):
    topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
    for key, value, timestamp in [
        ("1", "1", 10),
        ("1", "2", 15),
        ("1", "3", 600),
        ("2", "1", 600),
        ("2", "2", 599),
    ]:
        topic.pipe_input(key, value, timestamp)


@pytest.mark.parametrize("cache_bytes", [0, None], ids=["caching_disabled", "caching_enabled"])
def test_emit_final_count_session_windowed(make_config, capture, cache_bytes):
    """Mirrors SessionWindowedKStreamImplTest.shouldCountSessionWindowedWithCachingDisabled / ...Enabled
    (ON_WINDOW_CLOSE): only the session [10,15] closes (600 - 500 > 15)."""
    builder = StreamsBuilder()
    _windowed_500(builder).count().to_stream().process(capture)
    overrides = {} if cache_bytes is None else {"statestore_cache_max_bytes": cache_bytes}
    with TopologyTestDriver(builder.build(), make_config(**overrides)) as driver:
        _process_data(driver)
    assert capture.processed == [(_s("1", 10, 15), 2, 15)]


def test_emit_final_reduce_and_aggregate_session_windowed(make_config):
    """Mirrors SessionWindowedKStreamImplTest.shouldReduceWindowed and shouldAggregateSessionWindowed
    (ON_WINDOW_CLOSE)."""
    from .support import Capture

    reduced, aggregated = Capture(), Capture()
    builder = StreamsBuilder()
    windowed = _windowed_500(builder)
    windowed.reduce(string_reducer).to_stream().process(reduced)
    windowed.aggregate(
        string_init, to_string_adder, session_merger, Materialized.with_(Serdes.String(), Serdes.String())
    ).to_stream().process(aggregated)
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        _process_data(driver)
    assert reduced.processed == [(_s("1", 10, 15), "1+2", 15)]
    assert aggregated.processed == [(_s("1", 10, 15), "0+0+1+2", 15)]


def test_emit_final_materialized_stores(make_config):
    """Mirrors SessionWindowedKStreamImplTest.shouldMaterializeCount / shouldMaterializeReduced /
    shouldMaterializeAggregated (ON_WINDOW_CLOSE): the closed session [10,15] is behind the store's
    retention (gap + grace = 500) at stream time 600, so only the open sessions remain readable."""
    builder = StreamsBuilder()
    windowed = _windowed_500(builder)
    windowed.count(Materialized.as_("count-store"))
    windowed.reduce(string_reducer, Materialized.as_("reduced"))
    windowed.aggregate(
        string_init,
        to_string_adder,
        session_merger,
        Materialized.as_("aggregated").with_value_serde(Serdes.String()),
    )
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        _process_data(driver)

        def fetched(name):
            with driver.get_session_store(name).fetch("1", "2") as it:
                return [(kv.key, kv.value) for kv in it]

        assert fetched("count-store") == [(_s("1", 600, 600), 1), (_s("2", 599, 600), 2)]
        assert fetched("reduced") == [(_s("1", 600, 600), "3"), (_s("2", 599, 600), "1+2")]
        assert fetched("aggregated") == [(_s("1", 600, 600), "0+3"), (_s("2", 599, 600), "0+0+1+2")]


def test_emit_final_session_store_is_never_cached(make_config):
    """Mirrors SessionWindowedKStreamImplTest.shouldNotEnableCachingWithEmitFinal: Materialized asks for
    caching, the emit-final session store is built without it."""
    builder = StreamsBuilder()
    _windowed_500(builder).aggregate(
        string_init,
        to_string_adder,
        session_merger,
        Materialized.as_("aggregated").with_value_serde(Serdes.String()).with_caching_enabled(),
    )
    topology = builder.build()
    entry = topology.internal_builder.stores["aggregated"]
    assert entry.builder.caching_enabled is False


def test_emit_final_reads_a_closing_session_behind_the_store_retention(make_config, capture):
    """Kafka's rule on the default store (retention = gap + grace = 5): a@0, b@5, c@6. At stream time 6 the
    session [a@0,0] closes (0 < 6 - 5) and is emitted, although the store no longer serves it to ordinary
    reads (its retention ends at 6 - 5 + 1); b's session closes at stream time 11."""
    builder = StreamsBuilder()
    (
        builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(5))
        .emit_strategy(EmitStrategy.on_window_close())
        .count()
        .to_stream()
        .process(capture)
    )
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        _pipe(driver, [("a", "1", 0), ("b", "1", 5), ("c", "1", 6)])
        assert capture.processed == [(_s("a", 0, 0), 1, 0)]
        _pipe(driver, [("c", "1", 11)])
    assert capture.processed == [(_s("a", 0, 0), 1, 0), (_s("b", 5, 5), 1, 5)]
