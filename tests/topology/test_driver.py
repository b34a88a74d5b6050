"""TopologyTestDriver and its test topics behave like Kafka Streams' driver."""

from __future__ import annotations

import pytest

from streams_runtime import (
    KeyValue,
    Materialized,
    NoSuchElementError,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamsError,
    TestRecord,
    TopologyTestDriver,
    ValueAndTimestamp,
)

S = Serdes.String()
L = Serdes.Long()
CONFIG = {"application_id": "drv", "default_key_serde": "string", "default_value_serde": "string"}


def _pass_through():
    builder = StreamsBuilder()
    builder.stream("input").to("output")
    return builder.build()


def test_pipe_input_forms_and_auto_advancing_timestamps():
    with TopologyTestDriver(_pass_through(), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S, start_timestamp_ms=100, auto_advance_ms=10)
        out = driver.create_output_topic("output", S, S)
        topic.pipe_input("only-value")
        topic.pipe_input("k", "v")
        topic.pipe_input("k", "v-at-5", 5)
        topic.pipe_input("k", "v-with-headers", timestamp=7, headers={"h": b"x"})
        topic.pipe_record(TestRecord("rk", "rv"))
        assert out.read_records_to_list() == [
            TestRecord(None, "only-value", 100),
            TestRecord("k", "v", 110),
            TestRecord("k", "v-at-5", 5),
            TestRecord("k", "v-with-headers", 7, (("h", b"x"),)),
            TestRecord("rk", "rv", 120),
        ]


def test_lists_can_be_piped_and_read_back_as_lists_and_maps():
    with TopologyTestDriver(_pass_through(), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        out = driver.create_output_topic("output", S, S)
        topic.pipe_key_value_list(
            [KeyValue("a", "1"), ("b", "2"), ("a", "3")], start_timestamp=10, advance_ms=5
        )
        assert out.queue_size() == 3
        assert out.read_key_value() == KeyValue("a", "1")
        assert out.read_record().timestamp == 15
        assert out.read_value() == "3"
        assert out.is_empty()
        topic.pipe_value_list(["x", "y"], start_timestamp=0)
        assert out.read_values_to_list() == ["x", "y"]
        topic.pipe_key_value_list([("a", "1"), ("b", None), ("a", "2")], start_timestamp=0)
        assert out.read_key_values_to_map() == {"a": "2", "b": None}


def test_reading_an_empty_topic_raises_and_unknown_input_topics_are_rejected():
    with TopologyTestDriver(_pass_through(), CONFIG) as driver:
        with pytest.raises(NoSuchElementError, match="empty topic: output"):
            driver.create_output_topic("output", S, S).read_value()
        with pytest.raises(StreamsError, match="unknown topic: nope"):
            driver.create_input_topic("nope", S, S).pipe_input("k", "v", 1)


def test_repartition_records_are_readable_and_fed_back_synchronously():
    builder = StreamsBuilder()
    (
        builder.stream("input")
        .select_key(lambda k, v: v)
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to("output", Produced.with_(S, L))
    )
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k1", "x", 1)
        topic.pipe_input("k2", "x", 2)
        assert driver.create_output_topic("output", S, L).read_key_values_to_list() == [("x", 1), ("x", 2)]
        repartition = driver.create_output_topic("drv-counts-repartition", S, S)
        assert repartition.read_key_values_to_list() == [("x", "x"), ("x", "x")]
        changelog = driver.create_output_topic("drv-counts-changelog", S, L)
        assert [(r.key, r.value, r.timestamp) for r in changelog.read_records_to_list()] == [
            ("x", 1, 1),
            ("x", 2, 2),
        ]
        assert driver.produced_topic_names() == {"output", "drv-counts-repartition", "drv-counts-changelog"}


def _burst_count_topology():
    builder = StreamsBuilder()
    (
        builder.stream("input")
        .flat_map_values(lambda line: line.split())
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to("output", Produced.with_(S, L))
    )
    return builder.build()


def test_with_caching_updates_of_one_key_within_one_input_record_collapse_into_one_emission():
    with TopologyTestDriver(_burst_count_topology(), CONFIG) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", "a a a", 1)
        assert driver.create_output_topic("output", S, L).read_key_values_to_list() == [("k", 3)]


def test_without_caching_every_update_is_emitted():
    config = dict(CONFIG, statestore_cache_max_bytes=0)
    with TopologyTestDriver(_burst_count_topology(), config) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", "a a a", 1)
        assert driver.create_output_topic("output", S, L).read_key_values_to_list() == [
            ("k", 1),
            ("k", 2),
            ("k", 3),
        ]


def test_store_access_plain_values_or_value_and_timestamp():
    with TopologyTestDriver(_burst_count_topology(), CONFIG) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", "a b", 42)
        assert driver.get_key_value_store("counts").get("k") == 2
        assert driver.get_timestamped_key_value_store("counts").get("k") == ValueAndTimestamp(2, 42)
        assert driver.get_state_store("counts") is driver.get_all_state_stores()["counts"]
        assert driver.get_key_value_store("missing") is None


def test_closing_flushes_and_makes_the_driver_unusable():
    driver = TopologyTestDriver(_pass_through(), CONFIG)
    topic = driver.create_input_topic("input", S, S)
    driver.close()
    with pytest.raises(StreamsError, match="closed"):
        topic.pipe_input("k", "v", 1)


def test_missing_default_serde_fails_at_driver_creation_naming_the_config_key():
    with pytest.raises(StreamsError, match="default_key_serde"):
        TopologyTestDriver(_pass_through(), {"application_id": "x"})


def test_global_table_is_filled_from_its_topic_and_readable():
    builder = StreamsBuilder()
    builder.global_table("globals", Materialized.as_("global-store"))
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("globals", S, S).pipe_input("k", "v", 3)
        assert driver.get_key_value_store("global-store").get("k") == "v"
        assert not any(t.endswith("changelog") for t in driver.produced_topic_names())
