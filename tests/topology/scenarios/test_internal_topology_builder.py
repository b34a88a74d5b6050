"""Replays Kafka Streams' InternalTopologyBuilderTest: how sources and shared stores group nodes
into sub-topologies, and the configs of the internal topics a topology creates."""

from streams_runtime import Repartitioned, Serdes, Stores, StreamsBuilder, Topology
from tests.fakes import NoOpProcessor


def store(name):
    return Stores.key_value_store_builder(
        Stores.in_memory_key_value_store(name), Serdes.String(), Serdes.String()
    )


def test_topic_groups_by_state_store():
    """Mirrors InternalTopologyBuilderTest.testTopicGroupsByStateStore: processors sharing a store
    share a sub-topology, and each sub-topology owns its stores' changelogs (X-<store>-changelog)."""
    topology = Topology({"application_id": "X"})
    topology.add_source("source-1", "topic-1", "topic-1x")
    for i in (2, 3, 4, 5):
        topology.add_source(f"source-{i}", f"topic-{i}")
    topology.add_processor("processor-1", NoOpProcessor, "source-1")
    topology.add_processor("processor-2", NoOpProcessor, "source-2")
    topology.add_state_store(store("store-1"), "processor-1", "processor-2")
    topology.add_processor("processor-3", NoOpProcessor, "source-3")
    topology.add_processor("processor-4", NoOpProcessor, "source-4")
    topology.add_state_store(store("store-2"), "processor-3", "processor-4")
    topology.add_processor("processor-5", NoOpProcessor, "source-5")
    topology.add_state_store(store("store-3"))
    topology.connect_processor_and_state_stores("processor-5", "store-3")

    groups = {
        info.id: (set(info.source_topics), set(info.changelog_topics.values()))
        for info in topology.sub_topologies()
    }
    assert groups == {
        0: ({"topic-1", "topic-1x", "topic-2"}, {"X-store-1-changelog"}),
        1: ({"topic-3", "topic-4"}, {"X-store-2-changelog"}),
        2: ({"topic-5"}, {"X-store-3-changelog"}),
    }


def test_internal_topic_config_for_key_value_store_changelog():
    """Mirrors InternalTopologyBuilderTest.shouldAddInternalTopicConfigForNonWindowNonVersionedStores:
    exactly two properties, a compacted topic with CreateTime timestamps."""
    topology = Topology({"application_id": "appId"})
    topology.add_source("source", "topic")
    topology.add_processor("processor", NoOpProcessor, "source")
    topology.add_state_store(store("testStore"), "processor")

    configs = topology.internal_topic_configs()
    assert configs["appId-testStore-changelog"] == {
        "cleanup.policy": "compact",
        "message.timestamp.type": "CreateTime",
    }


def test_internal_topic_config_for_repartition_topic():
    """Mirrors InternalTopologyBuilderTest.shouldAddInternalTopicConfigForRepartitionTopics: four
    properties -- delete, infinite retention (purged after commit), 50 MB segments, CreateTime.
    (The Kafka Streams test declares the topic with addInternalTopic; here repartition() does.)"""
    builder = StreamsBuilder()
    builder.stream("topic").repartition(Repartitioned(name="foo"))
    topology = builder.build({"application_id": "appId"})

    configs = topology.internal_topic_configs()
    assert configs["appId-foo-repartition"] == {
        "cleanup.policy": "delete",
        "retention.ms": "-1",
        "segment.bytes": "52428800",
        "message.timestamp.type": "CreateTime",
    }
