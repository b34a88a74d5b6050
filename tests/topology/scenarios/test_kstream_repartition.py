"""Replays Kafka Streams' KStreamRepartitionTest: records written through a named repartition topic."""

from streams_runtime import Repartitioned, Serdes, StreamsBuilder, TopologyTestDriver

from .support import records


def test_named_repartition_topic_carries_records_and_timestamps(make_config):
    """Mirrors KStreamRepartitionTest.shouldInvokePartitionerWhenSet, the part our API shares: the
    records read back from "<application_id>-test-repartition" keep key, value and timestamp (the
    Kafka Streams test also routes them with a mock StreamPartitioner)."""
    builder = StreamsBuilder()
    builder.stream("input-topic").repartition(Repartitioned(name="test"))

    config = make_config(Serdes.Integer(), Serdes.String(), application_id="repartition-app")
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("input-topic", Serdes.Integer(), Serdes.String())
        repartition = driver.create_output_topic(
            "repartition-app-test-repartition", Serdes.Integer(), Serdes.String()
        )
        for i, key in enumerate([0, 1]):
            source.pipe_input(key, f"X{key}", timestamp=i + 10)

        assert records(repartition) == [(0, "X0", 10), (1, "X1", 11)]
        assert repartition.read_records_to_list() == []
