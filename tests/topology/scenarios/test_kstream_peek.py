"""Replays Kafka Streams' KStreamPeekTest: peek observes every record and passes it on unchanged."""

from streams_runtime import Consumed, KeyValue, Serdes, StreamsBuilder, TopologyTestDriver


def test_peek_observes_stream_elements(make_config):
    """Mirrors KStreamPeekTest.shouldObserveStreamElements: 32 records seen by peek and by foreach."""
    peek_observed, stream_observed = [], []
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.peek(lambda k, v: peek_observed.append(KeyValue(k, v))).foreach(
        lambda k, v: stream_observed.append(KeyValue(k, v))
    )

    with TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String())) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.String())
        expected = []
        for key in range(32):
            source.pipe_input(key, f"V{key}")
            expected.append(KeyValue(key, f"V{key}"))

        assert peek_observed == expected
        assert stream_observed == expected
