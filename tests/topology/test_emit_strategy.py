"""Emit strategies (KIP-825) through the TopologyTestDriver.

``emit_strategy(EmitStrategy.on_window_close())``: a windowed aggregation forwards nothing while a
window is open and one final result per window once stream time passes window end + grace, in
window-start then key order, stamped with the aggregate's timestamp; late records are dropped and
counted on ``dropped-records``. ``on_window_update()`` is the default and changes nothing.
"""

from __future__ import annotations

import pytest

from streams_runtime import (
    EmitStrategy,
    KeyValue,
    Materialized,
    Produced,
    Serdes,
    SessionWindows,
    SlidingWindows,
    StreamsBuilder,
    TestRecord,
    TimeWindow,
    TimeWindows,
    TopologyTestDriver,
    Windowed,
)
from streams_runtime.kstream.emit_strategy import StrategyType

S, L = Serdes.String(), Serdes.Long()


def _materialized(with_cache: bool, store_type: str = "rocksdb"):
    mat = (
        Materialized.as_("counts").with_store_type(store_type)
        if store_type != "rocksdb"
        else Materialized.as_("counts")
    )
    return mat.with_caching_enabled() if with_cache else mat.with_caching_disabled()


def _flat(table):
    return table.to_stream().map(lambda k, v: (f"{k.key}@{k.window.start}/{k.window.end}", v))


def _to_out(table):
    _flat(table).to("out", Produced.with_(S, L))


def _count_on_close(windows, mat, strategy=None):
    builder = StreamsBuilder()
    grouped = builder.stream("in").group_by_key().windowed_by(windows)
    _to_out(grouped.emit_strategy(strategy or EmitStrategy.on_window_close()).count(mat))
    return builder.build()


def _driver(topology):
    driver = TopologyTestDriver(topology, {"default_key_serde": S, "default_value_serde": S})
    return driver, driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)


def _pipe(topic, *key_ts):
    for key, ts in key_ts:
        topic.pipe_input(key, "v", ts)


STORES = [(True, "rocksdb"), (False, "rocksdb"), (True, "in_memory"), (False, "in_memory")]
STORE_IDS = ["cached-rocksdb", "uncached-rocksdb", "cached-in_memory", "uncached-in_memory"]


@pytest.mark.parametrize("with_cache,store_type", STORES, ids=STORE_IDS)
def test_should_emit_each_tumbling_window_once_after_stream_time_passes_end_plus_grace(
    with_cache, store_type
):
    topology = _count_on_close(TimeWindows.of_size_and_grace(10, 5), _materialized(with_cache, store_type))
    driver, inp, out = _driver(topology)
    with driver:
        _pipe(inp, ("a", 1), ("b", 3), ("a", 7), ("a", 12), ("b", 14))
        assert out.read_records_to_list() == []  # close time 9: window [0,10) still open
        _pipe(inp, ("a", 15))  # close time 10: [0,10) closes
        assert out.read_records_to_list() == [TestRecord("a@0/10", 2, 7), TestRecord("b@0/10", 1, 3)]
        _pipe(inp, ("a", 4))  # late for [0,10): dropped, nothing re-emitted
        assert out.read_records_to_list() == []
        assert driver.metrics.total("dropped-records") == 1
        _pipe(inp, ("b", 19))  # close time 14: nothing new has closed
        assert out.read_records_to_list() == []
        _pipe(inp, ("a", 25), ("a", 21))  # close time 20: [10,20) closes; 21 still fits [20,30)
        assert out.read_records_to_list() == [TestRecord("a@10/20", 2, 15), TestRecord("b@10/20", 2, 19)]
        assert driver.metrics.total("dropped-records") == 1
        assert driver.metrics.total("emitted-records", "stream-processor-node-metrics") == 4


@pytest.mark.parametrize("with_cache,store_type", STORES, ids=STORE_IDS)
def test_should_emit_hopping_windows_in_start_then_key_order_and_drop_late_records(with_cache, store_type):
    windows = TimeWindows.of_size_and_grace(10, 2).advance_by(5)
    driver, inp, out = _driver(_count_on_close(windows, _materialized(with_cache, store_type)))
    with driver:
        _pipe(inp, ("a", 3), ("a", 8), ("b", 11))
        assert out.read_records_to_list() == []
        _pipe(inp, ("a", 12))  # close time 10
        assert out.read_records_to_list() == [TestRecord("a@0/10", 2, 8)]
        _pipe(inp, ("a", 9))  # dropped for [0,10), counted once; still updates [5,15)
        assert driver.metrics.total("dropped-records") == 1
        assert out.read_records_to_list() == []
        _pipe(inp, ("b", 17))  # close time 15
        assert out.read_records_to_list() == [TestRecord("a@5/15", 3, 12), TestRecord("b@5/15", 1, 11)]
        # close time 28: starts 10 and 15 close together, and the write at 30 takes both out of the
        # store's retention (size + grace = 12): their finals still go out (emitted before the write)
        _pipe(inp, ("a", 30))
        assert out.read_records_to_list() == [
            TestRecord("a@10/20", 1, 12),
            TestRecord("b@10/20", 2, 17),
            TestRecord("b@15/25", 1, 17),
        ]
        _pipe(inp, ("a", 2))  # its only window [0,10) closed long ago
        assert out.read_records_to_list() == []
        assert driver.metrics.total("dropped-records") == 2


def test_should_keep_current_aggregates_queryable_while_holding_results_back():
    driver, inp, out = _driver(_count_on_close(TimeWindows.of_size_and_grace(10, 5), _materialized(False)))
    with driver:
        _pipe(inp, ("a", 1), ("a", 2))
        assert out.read_records_to_list() == []
        store = driver.get_timestamped_window_store("counts")
        assert store.fetch("a", 0).value == 2


@pytest.mark.parametrize("with_cache", [True, False], ids=["cached", "uncached"])
def test_should_emit_final_reduce_and_aggregate_values_without_old_values(with_cache):
    builder = StreamsBuilder()
    windowed = (
        builder.stream("in")
        .group_by_key()
        .windowed_by(TimeWindows.of_size_with_no_grace(10))
        .emit_strategy(EmitStrategy.on_window_close())
    )
    mat = _materialized(with_cache).with_value_serde(S)
    reduced = windowed.reduce(lambda agg, v: agg + v, mat)
    reduced.to_stream().map(lambda k, v: (f"{k.key}@{k.window.start}", v)).to("out")
    driver = TopologyTestDriver(builder.build(), {"default_key_serde": S, "default_value_serde": S})
    with driver:
        inp, out = driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, S)
        for value, ts in (("x", 1), ("y", 9), ("z", 10)):
            inp.pipe_input("k", value, ts)
        assert out.read_key_values_to_list() == [KeyValue("k@0", "xy")]


def test_should_emit_sliding_windows_once_their_inclusive_end_is_below_close_time():
    builder = StreamsBuilder()
    sliding = SlidingWindows.of_time_difference_with_no_grace(5)
    windowed = builder.stream("in").group_by_key().windowed_by(sliding)
    table = windowed.emit_strategy(EmitStrategy.on_window_close()).count(_materialized(False))
    _to_out(table)
    driver, inp, out = _driver(builder.build())
    with driver:
        _pipe(inp, ("a", 10))
        assert out.read_records_to_list() == []
        _pipe(inp, ("a", 12))  # close time 12: [5,10] closed; [7,12] and [11,16] open
        assert out.read_records_to_list() == [TestRecord("a@5/10", 1, 10)]
        _pipe(inp, ("a", 30))
        assert out.read_records_to_list() == [TestRecord("a@7/12", 2, 12), TestRecord("a@11/16", 1, 12)]
        _pipe(inp, ("a", 20))  # cannot reach an open window: dropped
        assert out.read_records_to_list() == []
        assert driver.metrics.total("dropped-records") == 1


def test_should_forward_every_update_by_default_and_with_on_window_update():
    def run(strategy):
        driver, inp, out = _driver(
            _count_on_close(TimeWindows.of_size_and_grace(10, 5), _materialized(False), strategy)
        )
        run.metrics = driver.metrics
        with driver:
            _pipe(inp, ("a", 1), ("a", 7))
            return out.read_records_to_list()

    expected = [TestRecord("a@0/10", 1, 1), TestRecord("a@0/10", 2, 7)]
    assert run(EmitStrategy.on_window_update()) == expected
    assert not any(s.name == "emitted-records" for s in run.metrics.sensors())
    builder = StreamsBuilder()
    _to_out(
        builder.stream("in")
        .group_by_key()
        .windowed_by(TimeWindows.of_size_and_grace(10, 5))
        .count(_materialized(False))
    )
    driver, inp, out = _driver(builder.build())
    with driver:
        _pipe(inp, ("a", 1), ("a", 7))
        assert out.read_records_to_list() == expected


@pytest.mark.parametrize(
    "windows",
    [TimeWindows.of_size_and_grace(10, 5), SlidingWindows.of_time_difference_and_grace(10, 5)],
    ids=["time", "sliding"],
)
def test_should_leave_describe_unchanged(windows):
    def describe(strategy):
        builder = StreamsBuilder()
        windowed = builder.stream("in").group_by_key().windowed_by(windows)
        if strategy is not None:
            windowed = windowed.emit_strategy(strategy)
        windowed.count().to_stream().to("out")
        return str(builder.build().describe())

    plain = describe(None)
    assert describe(EmitStrategy.on_window_close()) == plain
    assert describe(EmitStrategy.on_window_update()) == plain


def test_should_apply_the_strategy_to_aggregations_built_after_it():
    builder = StreamsBuilder()
    windowed = builder.stream("in").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10))
    _to_out(windowed.count(Materialized.as_("updates").with_caching_disabled()))
    windowed.emit_strategy(EmitStrategy.on_window_close())
    driver, inp, out = _driver(builder.build())
    with driver:
        _pipe(inp, ("a", 1))
        assert out.read_records_to_list() == [TestRecord("a@0/10", 1, 1)]


@pytest.mark.parametrize("bad", ["on_window_close", None, StrategyType.ON_WINDOW_CLOSE, EmitStrategy])
def test_should_reject_an_emit_strategy_that_is_not_an_emit_strategy_naming_the_allowed_values(bad):
    windowed = StreamsBuilder().stream("in").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10))
    allowed = r"EmitStrategy\.on_window_update\(\) or EmitStrategy\.on_window_close\(\)"
    with pytest.raises(TypeError, match=allowed):
        windowed.emit_strategy(bad)


def test_should_reject_an_unknown_strategy_type_or_id():
    with pytest.raises(TypeError, match="StrategyType.ON_WINDOW_UPDATE, StrategyType.ON_WINDOW_CLOSE"):
        EmitStrategy("on_window_close")
    with pytest.raises(ValueError, match=r"0 \(ON_WINDOW_UPDATE\), 1 \(ON_WINDOW_CLOSE\)"):
        StrategyType.for_id(7)


def test_should_expose_the_strategy_type_like_kafka_streams():
    assert EmitStrategy.on_window_close().type is EmitStrategy.StrategyType.ON_WINDOW_CLOSE
    assert EmitStrategy.on_window_update().type is StrategyType.ON_WINDOW_UPDATE
    assert StrategyType.for_id(1) is StrategyType.ON_WINDOW_CLOSE
    assert EmitStrategy.on_window_close() == EmitStrategy.on_window_close() != EmitStrategy.on_window_update()
    assert repr(EmitStrategy.on_window_close()) == "EmitStrategy.on_window_close()"


def test_session_windows_take_an_emit_strategy_and_reject_anything_else():
    windowed = (
        StreamsBuilder()
        .stream("in")
        .group_by_key()
        .windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(10))
    )
    assert windowed.emit_strategy(EmitStrategy.on_window_close()) is windowed
    with pytest.raises(TypeError, match="on_window_close"):
        windowed.emit_strategy("close")


def test_should_emit_windowed_keys_with_their_time_window():
    builder = StreamsBuilder()
    seen = []
    builder.stream("in").group_by_key().windowed_by(TimeWindows.of_size_with_no_grace(10)).emit_strategy(
        EmitStrategy.on_window_close()
    ).count(_materialized(False)).to_stream().foreach(lambda k, v: seen.append((k, v)))
    driver = TopologyTestDriver(builder.build(), {"default_key_serde": S, "default_value_serde": S})
    with driver:
        inp = driver.create_input_topic("in", S, S)
        inp.pipe_input("a", "v", 3)
        inp.pipe_input("a", "v", 10)
    assert seen == [(Windowed("a", TimeWindow(0, 10)), 1)]


@pytest.mark.parametrize("store_type", ["rocksdb", "in_memory"])
def test_a_session_ending_at_the_retention_edge_is_emitted_by_the_rocksdb_store_only(store_type):
    """Gap 5, grace 2 (retention 7): b's session [5,5] comes at stream time 12. The aggregation
    accepts it (5 is not before 12 - 5 - 2); the RocksDB store keeps the write (it drops writes by
    whole segments, as Kafka Streams' does), so the record at 20 emits b's final count; the
    in-memory store, as Kafka Streams' in-memory store, drops that write."""
    windows = SessionWindows.of_inactivity_gap_and_grace(5, 2)
    driver, inp, out = _driver(_count_on_close(windows, _materialized(False, store_type)))
    with driver:
        _pipe(inp, ("a", 0), ("a", 12), ("b", 5), ("a", 20))
        emitted = [kv.key for kv in out.read_key_values_to_list()]
    b_session = ["b@5/5"] if store_type == "rocksdb" else []
    assert emitted == ["a@0/0", *b_session, "a@12/12"]
