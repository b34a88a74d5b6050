"""Windowed aggregations through the TopologyTestDriver: tumbling, hopping and session windows,
out-of-order and late records, grace boundaries, window/session stores and their changelogs."""

from __future__ import annotations

import pytest

from streams_runtime import (
    Consumed,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    SessionWindows,
    SlidingWindows,
    StreamsBuilder,
    TestRecord,
    TimeWindows,
    TopologyError,
    TopologyTestDriver,
)

S, L = Serdes.String(), Serdes.Long()


def _flatten(windowed_table):
    return windowed_table.to_stream().map(lambda k, v: (f"{k.key}@{k.window.start}/{k.window.end}", v))


def _time_window_driver(windows, materialized=None, op="count"):
    builder = StreamsBuilder()
    grouped = builder.stream("in", Consumed.with_(S, S)).group_by_key().windowed_by(windows)
    mat = materialized or Materialized.as_("counts").with_caching_disabled()
    table = (
        grouped.count(mat) if op == "count" else grouped.reduce(lambda a, v: a + v, mat.with_value_serde(S))
    )
    _flatten(table).to("out", Produced.with_(S, L if op == "count" else S))
    topology = builder.build()
    driver = TopologyTestDriver(topology)
    return (
        topology,
        driver,
        driver.create_input_topic("in", S, S),
        driver.create_output_topic("out", S, L if op == "count" else S),
    )


def test_should_count_per_tumbling_window_with_max_timestamp_of_window():
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_with_no_grace(10))
    with driver:
        for ts in (1, 7, 3, 12):
            inp.pipe_input("a", "x", ts)
        assert out.read_records_to_list() == [
            TestRecord("a@0/10", 1, 1),
            TestRecord("a@0/10", 2, 7),
            TestRecord("a@0/10", 3, 7),
            TestRecord("a@10/20", 1, 12),
        ]


def test_should_update_every_hopping_window_containing_the_record():
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_with_no_grace(10).advance_by(5))
    with driver:
        inp.pipe_input("a", "x", 7)
        assert out.read_key_values_to_map() == {"a@0/10": 1, "a@5/15": 1}


def test_should_accept_out_of_order_record_within_grace_and_drop_it_exactly_at_window_end_plus_grace():
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_and_grace(10, 5))
    with driver:
        inp.pipe_input("a", "x", 14)  # stream time 14: window [0,10) still open (10 > 14 - 5)
        inp.pipe_input("a", "x", 2)  # out of order, within grace
        assert [r.key for r in out.read_records_to_list()] == ["a@10/20", "a@0/10"]
        inp.pipe_input("a", "x", 15)  # stream time 15 = window end + grace: [0,10) now closed
        out.read_records_to_list()
        inp.pipe_input("a", "x", 3)  # late: dropped, counted, not emitted
        assert out.is_empty()
        assert driver.metrics.total("dropped-records") == 1


def test_should_drop_record_with_null_key_and_count_it():
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_with_no_grace(10))
    with driver:
        inp.pipe_input(None, "x", 1)
        assert out.is_empty()
        assert driver.metrics.total("dropped-records") == 1


def test_should_reduce_per_window():
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_with_no_grace(10), op="reduce")
    with driver:
        inp.pipe_input("a", "x", 1)
        inp.pipe_input("a", "y", 2)
        assert out.read_values_to_list() == ["x", "xy"]


def test_should_expose_window_store_through_the_driver_and_fetch_by_time_range():
    _, driver, inp, _ = _time_window_driver(TimeWindows.of_size_and_grace(10, 100))
    with driver:
        for ts in (1, 11, 12, 25):
            inp.pipe_input("a", "x", ts)
        store = driver.get_window_store("counts")
        assert store.fetch("a", 10) == 2
        with store.fetch("a", 0, 20) as it:
            assert [(kv.key, kv.value) for kv in it] == [(0, 1), (10, 2), (20, 1)]
        with store.fetch_all(10, 20) as it:
            assert [(kv.key.key, kv.key.window.start, kv.value) for kv in it] == [("a", 10, 2), ("a", 20, 1)]
        timestamped = driver.get_timestamped_window_store("counts")
        assert timestamped.fetch("a", 10).timestamp == 12


def test_window_store_retention_and_changelog_follow_size_plus_grace_or_materialized_retention():
    topology, driver, _, _ = _time_window_driver(TimeWindows.of_size_and_grace(10, 5))
    driver.close()
    config = topology.internal_topic_configs()["counts-changelog"]
    assert config["cleanup.policy"] == "compact,delete"
    assert int(config["retention.ms"]) == 15 + 24 * 3600 * 1000
    topology, driver, _, _ = _time_window_driver(
        TimeWindows.of_size_and_grace(10, 5), Materialized.as_("counts").with_retention(1000)
    )
    driver.close()
    assert (
        int(topology.internal_topic_configs()["counts-changelog"]["retention.ms"]) == 1000 + 24 * 3600 * 1000
    )


def test_should_reject_retention_smaller_than_size_plus_grace():
    with pytest.raises(TopologyError):
        _time_window_driver(
            TimeWindows.of_size_and_grace(10, 5), Materialized.as_("counts").with_retention(12)
        )


def test_should_work_with_in_memory_window_store_and_caching():
    _, driver, inp, out = _time_window_driver(
        TimeWindows.of_size_with_no_grace(10), Materialized.as_("counts").with_store_type("in_memory")
    )
    with driver:
        inp.pipe_input("a", "x", 1)
        inp.pipe_input("a", "x", 2)
        # the driver commits after every record, so each update is flushed from the cache
        assert out.read_values_to_list() == [1, 2]


def _session_driver(gap, grace=0):
    builder = StreamsBuilder()
    table = (
        builder.stream("in", Consumed.with_(S, S))
        .group_by_key()
        .windowed_by(SessionWindows.of_inactivity_gap_and_grace(gap, grace))
        .aggregate(
            lambda: "",
            lambda k, v, agg: agg + v,
            lambda k, a, b: a + b,
            Materialized.as_("sessions").with_value_serde(S).with_caching_disabled(),
        )
    )
    _flatten(table).to("out", Produced.with_(S, S))
    driver = TopologyTestDriver(builder.build())
    return driver, driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, S)


def test_should_merge_sessions_when_a_record_bridges_the_gap():
    driver, inp, out = _session_driver(gap=5, grace=20)  # retention (gap + grace) keeps [0,0] readable
    with driver:
        inp.pipe_input("a", "1", 0)
        inp.pipe_input("a", "2", 10)
        inp.pipe_input("a", "3", 5)  # within 5 of both sessions: merges them
        assert out.read_records_to_list() == [
            TestRecord("a@0/0", "1", 0),
            TestRecord("a@10/10", "2", 10),
            TestRecord("a@0/0", None, 0),
            TestRecord("a@10/10", None, 10),
            TestRecord("a@0/10", "123", 10),
        ]
        store = driver.get_session_store("sessions")
        with store.fetch("a") as it:
            assert [(kv.key.window.start, kv.key.window.end, kv.value) for kv in it] == [(0, 10, "123")]


@pytest.mark.parametrize("store_type", ["rocksdb", "in_memory"])
def test_a_cached_session_merges_a_record_after_it_left_the_stores_retention(store_type):
    """Kafka Streams' caching session store bounds only the store below by retention: a session
    still in the record cache is found and merged with. Gap 10, grace 0 (retention 10): [0,0] is
    out of the store's retention at stream time 11, but a record at 8 still merges with it."""
    builder = StreamsBuilder()
    table = (
        builder.stream("in", Consumed.with_(S, S))
        .group_by_key()
        .windowed_by(SessionWindows.of_inactivity_gap_and_grace(10, 0))
        .count(Materialized.with_(S, L).with_caching_enabled())
    )
    _flatten(table).to("out", Produced.with_(S, L))
    config = {"application_id": "sessions", "default_dsl_store": store_type}
    with TopologyTestDriver(builder.build(), config) as driver:
        inp, out = driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)
        inp.pipe_input("a", "x", 0)
        inp.pipe_input("b", "x", 11)
        inp.pipe_input("a", "x", 8)
        assert out.read_key_values_to_list() == [
            KeyValue("a@0/0", 1),
            KeyValue("b@11/11", 1),
            KeyValue("a@0/8", 2),
        ]


def test_should_drop_late_session_record_beyond_grace():
    """A session closes at end + inactivity gap + grace (Kafka Streams 3.0+): with gap 5 and grace 10,
    stream time 100 closes sessions ending before 85."""
    driver, inp, out = _session_driver(gap=5, grace=10)
    with driver:
        inp.pipe_input("a", "1", 100)
        inp.pipe_input("a", "2", 90)  # end 90 >= 85: accepted (a new session, 10 ms from [100,100])
        inp.pipe_input("b", "3", 85)  # end 85 >= 85: accepted, exactly at the boundary
        inp.pipe_input("c", "4", 84)  # end 84 < 85: late
        assert [r.key for r in out.read_records_to_list()] == ["a@100/100", "a@90/90", "b@85/85"]
        assert driver.metrics.total("dropped-records") == 1


def test_sliding_window_count_creates_left_and_right_windows_per_record():
    """Two records 5 ms apart with a 10 ms difference: each gets its left window, the first a right window."""
    builder = StreamsBuilder()
    (
        builder.stream("in", Consumed.with_(S, S))
        .group_by_key()
        .windowed_by(SlidingWindows.of_time_difference_with_no_grace(10))
        .count(Materialized.as_("sliding").with_caching_disabled())
        .to_stream()
        .map(lambda w, c: (f"{w.key}@{w.window.start}/{w.window.end}", c))
        .to("out", Produced.with_(S, Serdes.Long()))
    )
    with TopologyTestDriver(builder.build()) as driver:
        source = driver.create_input_topic("in", S, S)
        out = driver.create_output_topic("out", S, Serdes.Long())
        source.pipe_input("a", "x", timestamp=20)
        source.pipe_input("a", "y", timestamp=25)
        assert out.read_key_values_to_list() == [
            KeyValue("a@10/20", 1),  # left window of the first record
            KeyValue("a@21/31", 1),  # right window of the first record, created by the second
            KeyValue("a@15/25", 2),  # left window of the second record holds both
        ]


def test_should_aggregate_a_null_value_into_tumbling_and_hopping_windows():
    """Kafka Streams' time-window aggregation skips a null key only: a null value is counted (and
    handed to the aggregator), as Kafka Streams 4.3.1 does (tests/oracle found it)."""
    _, driver, inp, out = _time_window_driver(TimeWindows.of_size_and_grace(10, 5).advance_by(5))
    with driver:
        inp.pipe_input("a", "x", 7)
        inp.pipe_input("a", None, 8)
        assert out.read_records_to_list() == [
            TestRecord("a@0/10", 1, 7),
            TestRecord("a@5/15", 1, 7),
            TestRecord("a@0/10", 2, 8),
            TestRecord("a@5/15", 2, 8),
        ]
        assert driver.metrics.total("dropped-records") == 0
