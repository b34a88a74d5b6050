"""Replays Kafka Streams' KStreamMapTest: map swaps key and value, keeping each record's timestamp."""

import pytest

from streams_runtime import Consumed, KeyValue, Serdes, StreamsBuilder, StreamsError, TopologyTestDriver


def test_map_swaps_key_and_value_and_keeps_timestamps(make_config, capture):
    """Mirrors KStreamMapTest.testMap: keys 0..3 piped at timestamp 10 - key."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.map(lambda key, value: KeyValue(value, key)).process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String())) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.String())
        for key in [0, 1, 2, 3]:
            source.pipe_input(key, f"V{key}", timestamp=10 - key)

    assert capture.processed == [("V0", 0, 10), ("V1", 1, 9), ("V2", 2, 8), ("V3", 3, 7)]


def test_mapper_returning_none_fails_processing(make_config):
    """Mirrors KStreamMapTest.testKeyValueMapperResultNotNull: a mapper result of null (None) is not
    allowed; Kafka Streams fails with "The provided KeyValueMapper returned null ...". Under the
    default log_and_fail processing handler the failure reaches the caller."""
    builder = StreamsBuilder()
    builder.stream("topic", Consumed(key_serde=Serdes.String(), value_serde=Serdes.Integer())).map(
        lambda key, value: None
    ).foreach(lambda key, value: None)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.Integer())) as driver:
        source = driver.create_input_topic("topic", Serdes.String(), Serdes.Integer())
        with pytest.raises(StreamsError, match="returned None"):
            source.pipe_input("K", 0, timestamp=0)
