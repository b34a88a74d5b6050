"""Replays Kafka Streams' KStreamSelectKeyTest: select_key derives a new key from the record."""

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver


def test_select_key_replaces_the_key(make_config, capture):
    """Mirrors KStreamSelectKeyTest.testSelectKey: null-keyed values 1, 2, 3 get keys ONE, TWO, THREE."""
    key_map = {1: "ONE", 2: "TWO", 3: "THREE"}
    builder = StreamsBuilder()
    stream = builder.stream(
        "topic_key_select", Consumed(key_serde=Serdes.String(), value_serde=Serdes.Integer())
    )
    stream.select_key(lambda key, value: key_map[value]).process(capture)

    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.Integer())) as driver:
        source = driver.create_input_topic("topic_key_select", Serdes.String(), Serdes.Integer())
        for value in [1, 2, 3]:
            source.pipe_input(None, value, timestamp=0)

    assert capture.processed == [("ONE", 1, 0), ("TWO", 2, 0), ("THREE", 3, 0)]
