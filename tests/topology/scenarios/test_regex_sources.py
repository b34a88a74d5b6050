"""Source topics by regular expression through the test driver: replays of Kafka Streams'
RegexSourceIntegrationTest.testShouldReadFromRegexAndNamedTopics and TopologyTest's pattern checks, and
describe() of a pattern source as Kafka prints it (the pattern, not a topic set)."""

import re

import pytest

from streams_runtime import (
    Consumed,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamsError,
    Topology,
    TopologyError,
    TopologyTestDriver,
)

S = Serdes.String()


def test_should_read_from_regex_and_named_topics(make_config):
    """Mirrors RegexSourceIntegrationTest.testShouldReadFromRegexAndNamedTopics: two pattern streams and a
    stream of named topics all write to one output."""
    builder = StreamsBuilder()
    builder.stream(re.compile(r"topic-\d")).to("output", Produced.with_(S, S))
    builder.stream(re.compile("topic-[A-D]")).to("output", Produced.with_(S, S))
    builder.stream(["topic-Y", "topic-Z"]).to("output", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        for topic in ("topic-1", "topic-2", "topic-A", "topic-C", "topic-Y", "topic-Z"):
            driver.create_input_topic(topic, S, S).pipe_input(None, f"{topic} test", 0)
        with pytest.raises(StreamsError, match="unknown topic"):
            driver.create_input_topic("topic-E", S, S).pipe_input(None, "no source reads it", 0)
        values = driver.create_output_topic("output", S, S).read_values_to_list()
    assert sorted(values) == sorted(
        ["topic-A test", "topic-1 test", "topic-2 test", "topic-C test", "topic-Y test", "topic-Z test"]
    )


def test_pattern_source_describes_its_pattern():
    """TopologyTest.singleSourceWithPatternShouldHaveSingleSubtopology's shape: ``(topics: <pattern>)``."""
    builder = StreamsBuilder()
    builder.stream(re.compile("topic[0-9]"), consumed=Consumed.with_(S, S)).to("out")
    assert str(builder.build().describe()) == (
        "Topologies:\n"
        "   Sub-topology: 0\n"
        "    Source: KSTREAM-SOURCE-0000000000 (topics: topic[0-9])\n"
        "      --> KSTREAM-SINK-0000000001\n"
        "    Sink: KSTREAM-SINK-0000000001 (topic: out)\n"
        "      <-- KSTREAM-SOURCE-0000000000\n\n"
    )


def test_pattern_and_topic_sources_may_not_overlap():
    """Mirrors TopologyTest.testPatternMatchesAlreadyProvidedTopicSource and
    testNamedTopicMatchesAlreadyProvidedPattern."""
    topology = Topology()
    topology.add_source("source-1", "foo")
    with pytest.raises(TopologyError, match="will match topic foo"):
        topology.add_source("source-2", re.compile("f.*"))
    other = Topology()
    other.add_source("source-1", re.compile("f.*"))
    with pytest.raises(TopologyError, match="matches pattern f.*"):
        other.add_source("source-2", "foo")
    with pytest.raises(TopologyError, match="compiled regular expression"):
        other.internal_builder.add_source("source-3", [], pattern=42)


def test_a_pattern_stream_aggregates_across_its_topics(make_config):
    """Records of every matching topic feed one aggregation (one task in the driver); a topic a sink of
    the topology writes to flows back in when it matches."""
    builder = StreamsBuilder()
    orders = builder.stream(re.compile("orders-.*"), consumed=Consumed.with_(S, S))
    orders.group_by_key().count().to_stream().to("counts", Produced.with_(S, Serdes.Long()))
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        driver.create_input_topic("orders-eu", S, S).pipe_input("alice", "1", 1)
        driver.create_input_topic("orders-us", S, S).pipe_input("alice", "2", 2)
        driver.create_input_topic("orders-eu", S, S).pipe_input("bob", "3", 3)
        counts = driver.create_output_topic("counts", S, Serdes.Long()).read_key_values_to_list()
    assert [(kv.key, kv.value) for kv in counts] == [("alice", 1), ("alice", 2), ("bob", 1)]


def test_binding_new_topics_adds_only_unbound_matching_user_topics():
    """What a running instance binds when it lists the topics again: new matching topics only (not
    an internal topic of the application, not a non-matching one), the earlier ones kept."""
    from streams_runtime.processor.internals import topology_info
    from streams_runtime.processor.internals.pattern_sources import (
        add_new_pattern_topics,
        bind_pattern_topics,
    )

    builder = StreamsBuilder()
    builder.stream(re.compile(".*orders-.*"))  # matches the changelog too.to("output", Produced.with_(S, S))
    builder.stream("named").to("output", Produced.with_(S, S))
    internal = builder.build().internal_builder
    internal.application_id = "app"
    bind_pattern_topics(internal, ["orders-eu", "named", "output"])
    assert add_new_pattern_topics(internal, ["orders-eu", "named", "output"]) == []
    added = add_new_pattern_topics(
        internal, ["orders-eu", "orders-us", "named", "app-orders-x-changelog", "other"]
    )
    assert added == ["orders-us"]
    sources = [sorted(i.source_topics) for i in topology_info.sub_topologies(internal)]
    assert ["orders-eu", "orders-us"] in sources
    assert ["named"] in sources
