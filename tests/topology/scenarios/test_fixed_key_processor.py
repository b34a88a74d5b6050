"""Replays Kafka Streams' KStreamImplTest process_values cases with the FixedKeyProcessor API (Kafka 3.3+):
a ContextualFixedKeyProcessor forwarding ``record.with_value(...)``, stores it reads, the null checks, and
a forward of anything but a FixedKeyRecord refused (Java refuses it at compile time)."""

import pytest

from streams_runtime import (
    Consumed,
    ContextualFixedKeyProcessor,
    FixedKeyProcessor,
    FixedKeyRecord,
    Produced,
    Record,
    Repartitioned,
    Serdes,
    Stores,
    StreamsBuilder,
    StreamsProcessingError,
    TopologyError,
    TopologyTestDriver,
)

from .support import records

S = Serdes.String()
INPUT = [
    ("A", "0", 5),
    ("B", "00", 100),
    ("C", "000", 0),
    ("D", "0000", 0),
    ("A", "00000", 10),
    ("A", "000000", 8),
]


class Length(ContextualFixedKeyProcessor):
    def process(self, record):
        assert isinstance(record, FixedKeyRecord)
        self.context.forward(record.with_value(len(record.value)))


def _run(builder, config):
    with TopologyTestDriver(builder.build(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        for key, value, ts in INPUT:
            topic.pipe_input(key, value, ts)
        return records(driver.create_output_topic("output", S, Serdes.Integer()))


def test_should_process_values_with_a_contextual_fixed_key_processor(make_config):
    """Mirrors KStreamImplTest.shouldProcessValues (ContextualFixedKeyProcessor, Named "fkp")."""
    builder = StreamsBuilder()
    builder.stream("input", Consumed.with_(S, S)).process_values(Length, name="fkp").to(
        "output", Produced(value_serde=Serdes.Integer())
    )
    assert "Processor: fkp (stores: [])\n      --> KSTREAM-SINK-0000000001\n" in str(
        builder.build().describe()
    )
    assert _run(builder, make_config()) == [
        ("A", 1, 5),
        ("B", 2, 100),
        ("C", 3, 0),
        ("D", 4, 0),
        ("A", 5, 10),
        ("A", 6, 8),
    ]


class Rekeying(FixedKeyProcessor):
    def init(self, context):
        self.context = context

    def process(self, record):
        self.context.forward(Record("other", record.value, record.timestamp))


def test_a_fixed_key_processor_cannot_forward_a_new_key(make_config):
    """A FixedKeyProcessorContext takes FixedKeyRecords only; a fresh Record (a new key) is refused."""
    builder = StreamsBuilder()
    builder.stream("input", Consumed.with_(S, S)).process_values(Rekeying).to("output")
    with pytest.raises(StreamsProcessingError, match="FixedKeyRecords only"):
        _run(builder, make_config())


class CountingSupplier:
    """A FixedKeyProcessorSupplier that provides its own store (ConnectedStoreProvider)."""

    def __call__(self):
        return Counting()

    def stores(self):
        return {
            Stores.key_value_store_builder(Stores.in_memory_key_value_store("counts"), S, Serdes.Integer())
        }


class Counting(ContextualFixedKeyProcessor):
    def init(self, context):
        super().init(context)
        self.store = context.get_state_store("counts")

    def process(self, record):
        count = (self.store.get(record.key) or 0) + 1
        self.store.put(record.key, count)
        self.context.forward(record.with_value(count))


def test_process_values_with_a_store_provided_by_the_supplier(make_config):
    """Mirrors KStreamImplTest.shouldProcessValues's store variant (KStreamNewProcessorApiTest's
    ConnectedStoreProvider) with a FixedKeyProcessor: per-key counts; no repartition after it."""
    builder = StreamsBuilder()
    counted = builder.stream("input", Consumed.with_(S, S)).process_values(CountingSupplier())
    assert counted.repartition_required is False
    counted.to("output", Produced(value_serde=Serdes.Integer()))
    assert "(stores: [counts])" in str(builder.build().describe())
    assert _run(builder, make_config()) == [
        ("A", 1, 5),
        ("B", 1, 100),
        ("C", 1, 0),
        ("D", 1, 0),
        ("A", 2, 10),
        ("A", 3, 8),
    ]


def test_process_values_rejects_null_arguments():
    """Mirrors KStreamImplTest.shouldNotAllowNullProcessValuesSupplierOnProcess and
    shouldNotAllowNullStoreNameOnProcessValues."""
    stream = StreamsBuilder().stream("input")
    with pytest.raises(TypeError, match="processor supplier"):
        stream.process_values(None)
    builder = StreamsBuilder()
    builder.stream("input").process_values(Length, None)
    with pytest.raises(TopologyError, match="state store None is not added yet"):
        builder.build()


def test_repartition_with_an_explicit_stream_partitioner(make_config):
    """Repartitioned.with_stream_partitioner: every record written to the repartition topic goes through
    the partitioner (topic, key, value), and to the partition it returns."""
    calls = []

    def partitioner(topic, key, value):
        calls.append((topic, key, value))
        return 0

    builder = StreamsBuilder()
    (
        builder.stream("input", Consumed.with_(S, S))
        .repartition(Repartitioned.as_("by-key").with_stream_partitioner(partitioner))
        .map_values(len)
        .to("output", Produced(value_serde=Serdes.Integer()))
    )
    config = make_config(application_id="app")
    with TopologyTestDriver(builder.build(), config) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("A", "0", 5)
        topic.pipe_input("B", "00", 6)
        assert records(driver.create_output_topic("output", S, Serdes.Integer())) == [
            ("A", 1, 5),
            ("B", 2, 6),
        ]
    assert calls == [("app-by-key-repartition", "A", "0"), ("app-by-key-repartition", "B", "00")]
