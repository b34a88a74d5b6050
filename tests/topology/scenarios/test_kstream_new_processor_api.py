"""Replays Kafka Streams' KStreamNewProcessorApiTest: process_values with a state store, connected
either by the supplier (Kafka's ConnectedStoreProvider) or by StreamsBuilder.add_state_store."""

import pytest

from streams_runtime import Consumed, Processor, Produced, Serdes, Stores, StreamsBuilder, TopologyTestDriver


def store_builder():
    return Stores.key_value_store_builder(
        Stores.in_memory_key_value_store("store"), Serdes.String(), Serdes.String()
    )


class Updater(Processor):
    """put_if_absent(key, value + "Updated") into "store", and forward that new value."""

    def init(self, context):
        self.context = context
        self.store = context.get_state_store("store")
        assert self.store is not None, "State store can't be null"

    def process(self, record):
        self.store.put_if_absent(record.key, record.value + "Updated")
        self.context.forward(record.with_value(record.value + "Updated"))


class UpdaterSupplier:
    """A processor supplier that may also provide the store it needs (``stores()``)."""

    def __init__(self, provided_store_builder=None):
        self.provided_store_builder = provided_store_builder

    def __call__(self):
        return Updater()

    def stores(self):
        return {self.provided_store_builder} if self.provided_store_builder is not None else None


@pytest.mark.parametrize(
    "add_store_directly",
    [
        pytest.param(False, id="shouldGetStateStoreWithConnectedStoreProvider"),
        pytest.param(True, id="shouldGetStateStoreWithStreamBuilder"),
    ],
)
def test_process_values_with_state_store(make_config, add_store_directly):
    """Mirrors KStreamNewProcessorApiTest.shouldGetStateStoreWithConnectedStoreProvider and
    KStreamNewProcessorApiTest.shouldGetStateStoreWithStreamBuilder."""
    builder = StreamsBuilder()
    if add_store_directly:
        builder.add_state_store(store_builder())
    supplier = UpdaterSupplier(None if add_store_directly else store_builder())
    builder.stream("input", Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())).process_values(
        supplier, "store"
    ).to("output", Produced(key_serde=Serdes.String(), value_serde=Serdes.String()))

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        for key, value in [("a", "foo"), ("b", "bar"), ("c", "baz")]:
            source.pipe_input(key, value)

        output = driver.create_output_topic("output", Serdes.String(), Serdes.String()).read_values_to_list()
        store = driver.get_key_value_store("store")
        assert output == ["fooUpdated", "barUpdated", "bazUpdated"]
        assert (store.get("a"), store.get("b"), store.get("c")) == ("fooUpdated", "barUpdated", "bazUpdated")
