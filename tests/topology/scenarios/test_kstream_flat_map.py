"""Replays Kafka Streams' KStreamFlatMapTest: flat_map emits zero or more new key-value pairs per record."""

import pytest

from streams_runtime import Consumed, KeyValue, Serdes, StreamsBuilder, StreamsError, TopologyTestDriver


def test_flat_map_emits_key_many_records_per_input(make_config, capture):
    """Mirrors KStreamFlatMapTest.testFlatMap: key k yields k records keyed str(k*10+i)."""

    def mapper(key, value):
        return [KeyValue(str(key * 10 + i), str(value)) for i in range(key)]

    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.flat_map(mapper).process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String())) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.String())
        for key in [0, 1, 2, 3]:
            source.pipe_input(key, f"V{key}", timestamp=0)

    assert capture.processed == [
        ("10", "V1", 0),
        ("20", "V2", 0),
        ("21", "V2", 0),
        ("30", "V3", 0),
        ("31", "V3", 0),
        ("32", "V3", 0),
    ]


def test_mapper_returning_none_fails_processing(make_config):
    """Mirrors KStreamFlatMapTest.testKeyValueMapperResultNotNull: a flat_map mapper result of null
    (None) is not allowed (Kafka Streams: "The provided KeyValueMapper returned null ...")."""
    builder = StreamsBuilder()
    builder.stream("topic", Consumed(key_serde=Serdes.String(), value_serde=Serdes.Integer())).flat_map(
        lambda key, value: None
    ).foreach(lambda key, value: None)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.Integer())) as driver:
        source = driver.create_input_topic("topic", Serdes.String(), Serdes.Integer())
        with pytest.raises(StreamsError, match="returned None"):
            source.pipe_input("K", 0, timestamp=0)
