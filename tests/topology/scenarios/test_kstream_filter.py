"""Replays Kafka Streams' KStreamFilterTest: filter and filter_not on a stream."""

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver

TOPIC = "topic"


def is_multiple_of_three(key, value):
    return key % 3 == 0


def _run(builder, config, keys):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.Integer(), Serdes.String())
        for key in keys:
            source.pipe_input(key, f"V{key}", timestamp=0)


def test_filter_keeps_only_matching_records(make_config, capture):
    """Mirrors KStreamFilterTest.testFilter: of keys 1..7 only the multiples of three pass."""
    builder = StreamsBuilder()
    stream = builder.stream(TOPIC, Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.filter(is_multiple_of_three).process(capture)

    _run(builder, make_config(Serdes.Integer(), Serdes.String()), [1, 2, 3, 4, 5, 6, 7])

    assert len(capture.processed) == 2
    assert [(k, v) for k, v, _ in capture.processed] == [(3, "V3"), (6, "V6")]


def test_filter_not_drops_matching_records(make_config, capture):
    """Mirrors KStreamFilterTest.testFilterNot: of keys 1..7 the five non-multiples of three pass."""
    builder = StreamsBuilder()
    stream = builder.stream(TOPIC, Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.filter_not(is_multiple_of_three).process(capture)

    _run(builder, make_config(Serdes.Integer(), Serdes.String()), [1, 2, 3, 4, 5, 6, 7])

    assert len(capture.processed) == 5
    assert [k for k, _, _ in capture.processed] == [1, 2, 4, 5, 7]
