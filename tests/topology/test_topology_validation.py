"""Invalid topologies fail with a TopologyError naming the node, store or topics at fault."""

from __future__ import annotations

import pytest

from streams_runtime import (
    Processor,
    Serdes,
    Stores,
    StreamsError,
    Topology,
    TopologyError,
    TopologyTestDriver,
)


class _Noop(Processor):
    def process(self, record):
        pass


def _store(name: str = "store"):
    return Stores.key_value_store_builder(
        Stores.in_memory_key_value_store(name), Serdes.String(), Serdes.Long()
    )


def test_unknown_parent_is_rejected_naming_the_parent_and_the_node():
    topology = Topology().add_source("source", "input")
    with pytest.raises(TopologyError, match=r"parent node missing.*processor|missing.*unknown parent") as err:
        topology.add_processor("processor", _Noop, "missing")
    assert "missing" in str(err.value) and "processor" in str(err.value)


def test_duplicate_node_name_is_rejected_naming_the_node():
    topology = Topology().add_source("source", "input")
    with pytest.raises(TopologyError, match="source .*already added"):
        topology.add_processor("source", _Noop, "source")


def test_sink_cannot_be_a_parent():
    topology = Topology().add_source("source", "input").add_sink("sink", "out", "source")
    with pytest.raises(TopologyError, match="sink sink cannot be used as a parent of p"):
        topology.add_processor("p", _Noop, "sink")


def test_topic_read_by_two_sources_is_rejected():
    topology = Topology().add_source("a", "input")
    with pytest.raises(TopologyError, match="topic input has already been registered by source a"):
        topology.add_source("b", "input")


def test_store_connected_to_unknown_processor_is_rejected_naming_the_processor():
    topology = Topology().add_source("source", "input")
    with pytest.raises(TopologyError, match="processor ghost is not added yet"):
        topology.add_state_store(_store(), "ghost")


def test_connecting_an_unknown_store_is_rejected_naming_the_store():
    topology = Topology().add_source("source", "input").add_processor("p", _Noop, "source")
    with pytest.raises(TopologyError, match="state store nope is not added yet"):
        topology.connect_processor_and_state_stores("p", "nope")


def test_store_connected_to_no_processor_fails_at_build_naming_the_store():
    topology = (
        Topology()
        .add_source("source", "input")
        .add_processor("p", _Noop, "source")
        .add_state_store(_store("lonely"))
    )
    with pytest.raises(TopologyError, match="state store lonely is not connected to any processor"):
        topology.describe()
    with pytest.raises(TopologyError, match="lonely"):
        TopologyTestDriver(topology, {"default_key_serde": "string", "default_value_serde": "string"})


def test_duplicate_store_name_is_rejected():
    topology = Topology().add_source("source", "input").add_processor("p", _Noop, "source")
    topology.add_state_store(_store("s"), "p")
    with pytest.raises(TopologyError, match="state store s is already added"):
        topology.add_state_store(_store("s"), "p")


def test_copartitioned_sources_with_different_partition_counts_cannot_be_copartitioned():
    topology = (
        Topology()
        .add_source("left", "left-topic")
        .add_source("right", "right-topic")
        .add_processor("join", _Noop, "left", "right")
    )
    topology.internal_builder.copartition_sources(["left", "right"])
    assert topology.task_counts({"left-topic": 4, "right-topic": 4}) == {0: 4}
    with pytest.raises(TopologyError, match="not co-partitioned.*left-topic.*right-topic"):
        topology.task_counts({"left-topic": 4, "right-topic": 3})


def test_copartition_group_naming_an_unknown_source_is_rejected():
    topology = Topology().add_source("left", "left-topic").add_processor("p", _Noop, "left")
    topology.internal_builder.copartition_sources(["left", "ghost"])
    with pytest.raises(TopologyError, match="unknown source ghost"):
        topology.describe()


def test_task_counts_need_every_user_topic():
    topology = Topology().add_source("s", "input").add_processor("p", _Noop, "s")
    with pytest.raises(TopologyError, match=r"no partition count given for source topic\(s\) \['input'\]"):
        topology.task_counts({})


def test_processor_reading_an_unconnected_store_fails_naming_processor_and_store():
    class Reader(Processor):
        def init(self, context):
            context.get_state_store("store")

        def process(self, record):
            pass

    topology = (
        Topology()
        .add_source("source", "input")
        .add_processor("owner", _Noop, "source")
        .add_processor("reader", Reader, "source")
        .add_state_store(_store(), "owner")
    )
    with pytest.raises(
        StreamsError,
        match="failed to initialize processor reader: processor reader has no access to state store store",
    ):
        TopologyTestDriver(topology, {"default_key_serde": "string", "default_value_serde": "string"})
