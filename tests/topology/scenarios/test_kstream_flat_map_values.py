"""Replays Kafka Streams' KStreamFlatMapValuesTest: flat_map_values keeps the key, emits many values."""

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver


def _pipe(builder, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.Integer())
        for key in [0, 1, 2, 3]:
            source.pipe_input(key, key, timestamp=0)


def test_flat_map_values_emits_every_value_in_order(make_config, capture):
    """Mirrors KStreamFlatMapValuesTest.testFlatMapValues: each value v becomes "v<v>" then "V<v>"."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.Integer()))
    stream.flat_map_values(lambda value: [f"v{value}", f"V{value}"]).process(capture)

    _pipe(builder, make_config(Serdes.Integer(), Serdes.String()))

    assert capture.processed == [
        (0, "v0", 0),
        (0, "V0", 0),
        (1, "v1", 0),
        (1, "V1", 0),
        (2, "v2", 0),
        (2, "V2", 0),
        (3, "v3", 0),
        (3, "V3", 0),
    ]


def test_flat_map_values_with_key_sees_the_read_only_key(make_config, capture):
    """Mirrors KStreamFlatMapValuesTest.testFlatMapValuesWithKeys: "v<value>" then "k<key>"."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.Integer()))
    stream.flat_map_values(lambda read_only_key, value: [f"v{value}", f"k{read_only_key}"]).process(capture)

    _pipe(builder, make_config(Serdes.Integer(), Serdes.String()))

    assert capture.processed == [
        (0, "v0", 0),
        (0, "k0", 0),
        (1, "v1", 0),
        (1, "k1", 0),
        (2, "v2", 0),
        (2, "k2", 0),
        (3, "v3", 0),
        (3, "k3", 0),
    ]
