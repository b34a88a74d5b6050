"""Task-level metrics through the TopologyTestDriver, as Kafka Streams 4.3.1 reports them
(``stream-task-metrics``, tag ``task-id``): ``record-lateness`` (avg and max; debug recording
level only) and what each processor and store counts on ``dropped-records``. The cases are the
oracle's (docs/oracle.md), each once different from Kafka Streams."""

from __future__ import annotations

from typing import Any

from streams_runtime import (
    Consumed,
    Grouped,
    Joined,
    Materialized,
    Produced,
    Serdes,
    Stores,
    StreamsBuilder,
    TimeWindows,
    TopologyTestDriver,
)

S, L = Serdes.String(), Serdes.Long()
DEBUG = {"metrics.recording.level": "DEBUG", "statestore.cache.max.bytes": 0}


def _sensor(driver: TopologyTestDriver, name: str) -> Any:
    found = [s for s in driver.metrics.sensors() if s.name == name and s.group == "stream-task-metrics"]
    return found[0] if found else None


def _dropped(driver: TopologyTestDriver) -> float:
    return float(_sensor(driver, "dropped-records").total)


def _versioned(store: Any) -> Materialized:
    return Materialized.as_(store).with_key_serde(S).with_value_serde(S)


def _pass_through() -> Any:
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).to("out", Produced.with_(S, S))
    return builder.build()


def test_record_lateness_should_measure_each_record_against_the_task_stream_time() -> None:
    with TopologyTestDriver(_pass_through(), DEBUG) as driver:
        topic = driver.create_input_topic("in", S, S)
        for timestamp in (10, 4, 12, 12, 7):  # late by 0, 6, 0, 0, 5
            topic.pipe_input("a", "x", timestamp)
        lateness = _sensor(driver, "record-lateness")
        assert dict(lateness.tags) == {"task-id": "0_0"}
        assert (lateness.count, lateness.max, lateness.avg()) == (5, 6, 11 / 5)


def test_record_lateness_should_not_be_recorded_at_the_info_level() -> None:
    with TopologyTestDriver(_pass_through(), {"statestore.cache.max.bytes": 0}) as driver:
        driver.create_input_topic("in", S, S).pipe_input("a", "x", 1)
        assert _sensor(driver, "record-lateness") is None


def test_an_expired_put_into_a_versioned_table_should_count_as_dropped() -> None:
    """History retention 0: ``b`` at 10 after ``a`` at 14 is older than the store's stream time,
    never written, and counted (Kafka Streams: "Skipping record for expired put")."""
    builder = StreamsBuilder()
    store = Stores.persistent_versioned_key_value_store("in-versioned", 0)
    builder.table("in", Consumed.with_(S, S), _versioned(store))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        topic = driver.create_input_topic("in", S, S)
        topic.pipe_input("a", "x", 14)
        topic.pipe_input("b", "y", 10)  # an expired put
        topic.pipe_input("c", None, 9)  # an expired delete
        assert _dropped(driver) == 2
        assert driver.get_state_store("in-versioned").get("b") is None


def test_an_out_of_order_versioned_update_should_count_as_dropped_by_a_table_join() -> None:
    builder = StreamsBuilder()
    store = Stores.persistent_versioned_key_value_store("in2-versioned", 1000)
    right = builder.table("in2", Consumed.with_(S, S), _versioned(store))
    left = builder.table("in", Consumed.with_(S, S))
    left.outer_join(right, lambda a, b: f"{a}|{b}").to_stream().to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        topic = driver.create_input_topic("in2", S, S)
        out = driver.create_output_topic("out", S, S)
        topic.pipe_input("a", "ab", 15)
        topic.pipe_input("a", None, 14)  # older than the key's latest version: joins nothing
        assert [r.value for r in out.read_records_to_list()] == ["None|ab"]
        assert _dropped(driver) == 1


def test_a_put_into_an_expired_window_store_segment_should_count_as_dropped() -> None:
    """A cogrouped window aggregation: each grouped stream's aggregator keeps its own stream
    time, so ``in2``'s record at 0 passes it, but the shared in-memory store (stream time 12,
    retention 5) drops the write: counted, as Kafka Streams' window stores count it."""
    builder = StreamsBuilder()
    other = builder.stream("in2", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
    grouped = builder.stream("in", Consumed.with_(S, S)).group_by_key(Grouped.with_(S, S))
    cogrouped = grouped.cogroup(lambda k, v, agg: agg + v).cogroup(other, lambda k, v, agg: agg + v)
    windowed = cogrouped.windowed_by(TimeWindows.of_size_and_grace(5, 0))
    table = windowed.aggregate(lambda: "", Materialized.with_(S, S).with_store_type("in_memory"))
    table.to_stream().map(lambda k, v: (f"{k.key}@{k.window.start}", v)).to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        driver.create_input_topic("in", S, S).pipe_input("a", "x", 12)
        driver.create_input_topic("in2", S, S).pipe_input("b", "y", 0)
        out = driver.create_output_topic("out", S, S)
        assert [(r.key, r.value) for r in out.read_records_to_list()] == [("a@10", "x"), ("b@0", "y")]
        assert _dropped(driver) == 1


def test_a_dropped_record_should_not_move_a_stream_table_grace_join_buffer_stream_time() -> None:
    """A null-value record at 10 is dropped by the join; Kafka Streams' buffer keeps the newest
    buffered timestamp as its stream time, so a record at 0 (grace 5) still waits in the buffer
    and joins when a record at 20 moves stream time past it."""
    builder = StreamsBuilder()
    store = Stores.persistent_versioned_key_value_store("in2-versioned", 1000)
    table = builder.table("in2", Consumed.with_(S, S), _versioned(store))
    joined = Joined.with_(S, S, S).with_grace_period(5)
    stream = builder.stream("in", Consumed.with_(S, S))
    stream.left_join(table, lambda a, b: f"{a}|{b}", joined).to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        topic = driver.create_input_topic("in", S, S)
        out = driver.create_output_topic("out", S, S)
        topic.pipe_input("b", None, 10)
        topic.pipe_input("a", "x", 0)
        assert out.read_records_to_list() == []
        driver.create_input_topic("in2", S, S).pipe_input("a", "t", 0)
        topic.pipe_input("c", "z", 20)
        assert [(r.key, r.value) for r in out.read_records_to_list()] == [("a", "x|t")]
        assert _dropped(driver) == 1


def test_an_out_of_order_versioned_update_should_count_as_dropped_by_a_foreign_key_join() -> None:
    builder = StreamsBuilder()
    store = Stores.persistent_versioned_key_value_store("in-versioned", 1000)
    left = builder.table("in", Consumed.with_(S, S), _versioned(store))
    right = builder.table("in2", Consumed.with_(S, S))
    joined = left.join(right, lambda key, value: value, lambda a, b: f"{a}|{b}")
    joined.to_stream().to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        driver.create_input_topic("in2", S, S).pipe_input("x", "1", 0)
        topic = driver.create_input_topic("in", S, S)
        out = driver.create_output_topic("out", S, S)
        topic.pipe_input("a", "x", 10)
        topic.pipe_input("a", "y", 5)  # older than the key's latest version: joins nothing
        assert [(r.key, r.value) for r in out.read_records_to_list()] == [("a", "x|1")]
        assert _dropped(driver) == 1


def test_a_stream_table_grace_join_should_evict_records_of_one_timestamp_in_key_order() -> None:
    """Kafka Streams' join buffer orders its records by timestamp, then serialized key, then
    arrival: ``c`` and then ``a``, both at 0, leave as ``a``, ``c``."""
    builder = StreamsBuilder()
    store = Stores.persistent_versioned_key_value_store("in2-versioned", 1000)
    table = builder.table("in2", Consumed.with_(S, S), _versioned(store))
    joined = Joined.with_(S, S, S).with_grace_period(5)
    stream = builder.stream("in", Consumed.with_(S, S))
    stream.left_join(table, lambda a, b: f"{a}|{b}", joined).to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), DEBUG) as driver:
        topic = driver.create_input_topic("in", S, S)
        out = driver.create_output_topic("out", S, S)
        topic.pipe_input("c", "1", 0)
        topic.pipe_input("a", "2", 0)
        topic.pipe_input("c", "3", 0)
        topic.pipe_input("b", "4", 9)
        assert [(r.key, r.value) for r in out.read_records_to_list()] == [
            ("a", "2|None"),
            ("c", "1|None"),
            ("c", "3|None"),
        ]
