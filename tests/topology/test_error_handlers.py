"""A corrupt or failing record under each handler setting: skipped and counted, dead-lettered with
its error headers (nothing lost), or a clear error naming where it happened."""

from __future__ import annotations

import logging

import pytest

from streams_runtime import (
    Consumed,
    DeserializationFailedError,
    Serdes,
    StreamsBuilder,
    StreamsConfigError,
    StreamsProcessingError,
    TopologyTestDriver,
)

S = Serdes.String()
BYTES = Serdes.Bytes()
BASE = {"application_id": "handlers", "default_key_serde": "string", "default_value_serde": "string"}


def _long_values_topology():
    builder = StreamsBuilder()
    builder.stream("input", Consumed.with_(S, Serdes.Long())).map_values(lambda v: v * 2).to(
        "output", __import__("streams_runtime").Produced.with_(S, Serdes.Long())
    )
    return builder.build()


def _pipe_one_corrupt_between_two_good(driver):
    topic = driver.create_input_topic("input", S, BYTES)
    topic.pipe_input("a", (1).to_bytes(8, "big"), 1)
    topic.pipe_input("bad", b"\x01\x02", 2)  # 2 bytes: not a Long
    topic.pipe_input("b", (3).to_bytes(8, "big"), 3)


def test_log_and_continue_skips_the_corrupt_record_logs_and_counts_it(caplog):
    config = dict(BASE, default_deserialization_exception_handler="log_and_continue")
    with caplog.at_level(logging.WARNING), TopologyTestDriver(_long_values_topology(), config) as driver:
        _pipe_one_corrupt_between_two_good(driver)
        out = driver.create_output_topic("output", S, Serdes.Long())
        assert out.read_key_values_to_list() == [("a", 2), ("b", 6)]
        assert driver.metrics.total("dropped-records") == 1
        assert driver.metrics.total("dead-letter-records") == 0  # skipped, not dead-lettered
    assert "topic=input partition=0 offset=1" in caplog.text


def test_log_and_fail_raises_naming_topic_partition_offset_and_serde():
    with TopologyTestDriver(_long_values_topology(), BASE) as driver:
        with pytest.raises(DeserializationFailedError) as err:
            _pipe_one_corrupt_between_two_good(driver)
    message = str(err.value)
    assert "topic=input partition=0 offset=1" in message
    assert "Serdes.Long" in message and "value" in message


def test_dead_letter_sends_the_raw_record_with_error_headers_and_loses_nothing():
    config = dict(BASE, default_deserialization_exception_handler="dead_letter", dead_letter_topic="dlq")
    with TopologyTestDriver(_long_values_topology(), config) as driver:
        _pipe_one_corrupt_between_two_good(driver)
        assert driver.create_output_topic("output", S, Serdes.Long()).read_key_values_to_list() == [
            ("a", 2),
            ("b", 6),
        ]
        dead = driver.create_output_topic("dlq", S, BYTES).read_records_to_list()
        assert driver.metrics.total("dead-letter-records") == 1
        assert driver.metrics.total("dropped-records") == 1
    assert len(dead) == 1
    record = dead[0]
    assert (record.key, record.value, record.timestamp) == ("bad", b"\x01\x02", 2)
    assert record.header("__streams.errors.topic") == b"input"
    assert record.header("__streams.errors.partition") == b"0"
    assert record.header("__streams.errors.offset") == b"1"
    assert record.header("__streams.errors.exception") == b"SerializationError"
    assert b"Serdes.Long" in record.header("__streams.errors.message")


def test_dead_letter_handler_requires_a_topic():
    with pytest.raises(StreamsConfigError, match="dead_letter_topic"):
        TopologyTestDriver(
            _long_values_topology(), dict(BASE, default_deserialization_exception_handler="dead_letter")
        )


def _failing_topology():
    builder = StreamsBuilder()
    source = builder.stream("input")
    source.map_values(lambda v: 10 // int(v)).map_values(str).to("divided")
    source.to("copy")  # a sibling branch that must keep working
    return builder.build()


def test_processing_error_with_log_and_continue_skips_the_record_at_the_failing_processor():
    config = dict(BASE, processing_exception_handler="log_and_continue")
    with TopologyTestDriver(_failing_topology(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        for value in ("2", "0", "5"):
            topic.pipe_input("k", value, 1)
        assert driver.create_output_topic("divided", S, S).read_values_to_list() == ["5", "2"]
        assert driver.create_output_topic("copy", S, S).read_values_to_list() == ["2", "0", "5"]
        assert driver.metrics.total("dropped-records") == 1


def test_processing_error_with_log_and_fail_names_the_processor_and_the_record():
    with TopologyTestDriver(_failing_topology(), BASE) as driver:
        with pytest.raises(StreamsProcessingError) as err:
            driver.create_input_topic("input", S, S).pipe_input("k", "0", 1)
    message = str(err.value)
    assert "processor KSTREAM-MAPVALUES-0000000001" in message
    assert "topic=input partition=0 offset=0" in message
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_records_skipped_by_an_aggregation_are_logged_and_counted(caplog):
    builder = StreamsBuilder()
    builder.stream("input").group_by_key().count().to_stream().to(
        "counts", __import__("streams_runtime").Produced.with_(S, Serdes.Long())
    )
    with (
        caplog.at_level(logging.WARNING),
        TopologyTestDriver(builder.build(), dict(BASE, statestore_cache_max_bytes=0)) as driver,
    ):
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input(None, "no-key", 1)
        topic.pipe_input("k", None, 2)
        topic.pipe_input("k", "v", 3)
        assert driver.create_output_topic("counts", S, Serdes.Long()).read_key_values_to_list() == [("k", 1)]
        assert driver.metrics.total("dropped-records") == 2
    assert "Skipping record due to null key or value" in caplog.text


def _chain_failing_inside():
    """A chain whose inner edges call their child directly (filter -> map_values -> map_values -> sink)."""
    builder = StreamsBuilder()
    builder.stream("input").filter(lambda k, v: v != "skip").map_values(lambda v: 10 // int(v)).map_values(
        str
    ).to("divided")
    return builder.build()


def test_processing_error_inside_a_dsl_chain_names_the_processor_and_the_source_record():
    with TopologyTestDriver(_chain_failing_inside(), BASE) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k", "5", 1)
        with pytest.raises(StreamsProcessingError) as err:
            topic.pipe_input("k", "0", 2)
    message = str(err.value)
    assert "processor KSTREAM-MAPVALUES-0000000002" in message
    assert "topic=input partition=0 offset=1" in message
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_processing_error_inside_a_dsl_chain_with_log_and_continue_skips_only_that_record():
    config = dict(BASE, processing_exception_handler="log_and_continue")
    with TopologyTestDriver(_chain_failing_inside(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        for value in ("2", "0", "skip", "5"):
            topic.pipe_input("k", value, 1)
        assert driver.create_output_topic("divided", S, S).read_values_to_list() == ["5", "2"]
        assert driver.metrics.total("dropped-records") == 1


def _count_then_failing_mapper():
    """count -> to_stream -> map_values -> sink: every edge after the count calls its child directly."""
    builder = StreamsBuilder()
    (
        builder.stream("input")
        .group_by_key()
        .count()
        .to_stream()
        .map_values(lambda count: 10 // (count - 2))
        .to("out", __import__("streams_runtime").Produced.with_(S, Serdes.Long()))
    )
    return builder.build()


def test_a_failure_behind_a_count_names_the_failing_node_and_keeps_the_update():
    config = dict(BASE, processing_exception_handler="log_and_continue", statestore_cache_max_bytes=0)
    with TopologyTestDriver(_count_then_failing_mapper(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        for _ in range(3):
            topic.pipe_input("k", "v", 1)
        # the second update fails in map_values: dropped there, the count itself went on
        assert driver.create_output_topic("out", S, Serdes.Long()).read_values_to_list() == [-10, 10]
        assert driver.metrics.total("dropped-records") == 1
        assert driver.get_key_value_store("KSTREAM-AGGREGATE-STATE-STORE-0000000001").get("k") == 3


def test_a_failure_behind_a_count_under_log_and_fail_names_the_mapper():
    config = dict(BASE, statestore_cache_max_bytes=0)
    with TopologyTestDriver(_count_then_failing_mapper(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k", "v", 1)
        with pytest.raises(StreamsProcessingError) as err:
            topic.pipe_input("k", "v", 2)
    assert "processor KSTREAM-MAPVALUES-" in str(err.value)
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_a_sink_that_cannot_serialize_fails_only_its_record_under_log_and_continue():
    builder = StreamsBuilder()
    builder.stream("input").map_values(lambda v: None if v == "x" else int(v)).to(
        "out", __import__("streams_runtime").Produced.with_(S, Serdes.Integer())
    )
    config = dict(BASE, processing_exception_handler="log_and_continue")
    with TopologyTestDriver(builder.build(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        for value in ("1", "2" * 20, "3"):  # 22222222222222222222 does not fit 4 bytes
            topic.pipe_input("k", value, 1)
        assert driver.create_output_topic("out", S, Serdes.Integer()).read_values_to_list() == [1, 3]
        assert driver.metrics.total("dropped-records") == 1


def test_flat_map_values_hands_each_element_to_the_handler_on_its_own():
    builder = StreamsBuilder()
    builder.stream("input").flat_map_values(lambda v: v.split(",")).map_values(
        lambda v: str(10 // int(v))
    ).to("out")
    config = dict(BASE, processing_exception_handler="log_and_continue")
    with TopologyTestDriver(builder.build(), config) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", "1,0,5", 1)
        # the element 0 fails alone; the ones after it still go through
        assert driver.create_output_topic("out", S, S).read_values_to_list() == ["10", "2"]
        assert driver.metrics.total("dropped-records") == 1
