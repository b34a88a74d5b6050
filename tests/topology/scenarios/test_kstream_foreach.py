"""Replays Kafka Streams' KStreamForeachTest: foreach runs an action per record, in order."""

from streams_runtime import Consumed, KeyValue, Serdes, StreamsBuilder, TopologyTestDriver


def test_foreach_runs_the_action_on_every_record(make_config):
    """Mirrors KStreamForeachTest.testForeach: the action records (key * 2, value upper-cased)."""
    actual = []
    builder = StreamsBuilder()
    stream = builder.stream("topic", Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))
    stream.foreach(lambda key, value: actual.append(KeyValue(key * 2, value.upper())))

    with TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String())) as driver:
        source = driver.create_input_topic("topic", Serdes.Integer(), Serdes.String())
        for key, value in [(0, "zero"), (1, "one"), (2, "two"), (3, "three")]:
            source.pipe_input(key, value)

    assert actual == [KeyValue(0, "ZERO"), KeyValue(2, "ONE"), KeyValue(4, "TWO"), KeyValue(6, "THREE")]
