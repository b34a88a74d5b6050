"""Replays Kafka Streams' KStreamMapValuesTest: map_values with and without access to the key."""

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver

KEYS = [1, 10, 100, 1000]


def _pipe(builder, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.String())
        for key in KEYS:
            source.pipe_input(key, str(key), timestamp=key // 2)


def test_map_values_maps_each_value(make_config, capture):
    """Mirrors KStreamMapValuesTest.testFlatMapValues (which, despite its name, tests mapValues)."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.map_values(len).process(capture)

    _pipe(builder, make_config(Serdes.Integer(), Serdes.String()))

    assert capture.processed == [(1, 1, 0), (10, 2, 5), (100, 3, 50), (1000, 4, 500)]


def test_map_values_with_key_sees_the_read_only_key(make_config, capture):
    """Mirrors KStreamMapValuesTest.testMapValuesWithKeys: the new value is len(value) + key."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.map_values(lambda read_only_key, value: len(value) + read_only_key).process(capture)

    _pipe(builder, make_config(Serdes.Integer(), Serdes.String()))

    assert capture.processed == [(1, 2, 0), (10, 12, 5), (100, 103, 50), (1000, 1004, 500)]
