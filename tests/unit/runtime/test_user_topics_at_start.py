"""Every user topic exists before anything is read or written: ``KafkaStreams.start()`` on the
in-memory clients refuses a missing source, global source, sink or dead-letter topic with one
message naming each and how to create it, and reads, writes, commits and creates nothing."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from streams_runtime import KafkaStreams, Serdes, StreamsBuilder
from streams_runtime.errors import MissingSinkTopicError, MissingSourceTopicError
from streams_runtime.kafka_streams import State
from streams_runtime.kstream import Consumed, Grouped, Materialized, Produced
from streams_runtime.processor.internals.user_topics import user_topics
from streams_runtime.testing import InMemoryClientSupplier
from tests.conditions import wait_until

APP = "user-topics-app"
STRING, LONG = Serdes.String(), Serdes.Long()


def count_words(sink: Any = "counts", *, global_topic: str | None = None) -> Any:
    """words (key, word) -> group_by(word) -> count -> ``sink`` (a topic, or a topic chooser)."""
    builder = StreamsBuilder()
    if global_topic is not None:
        builder.global_table(global_topic, Consumed.with_(STRING, STRING))
    (
        builder.stream("words", Consumed.with_(STRING, STRING))
        .group_by(lambda key, word: word, Grouped.with_(STRING, STRING, name="by-word"))
        .count(Materialized.as_("word-counts"))
        .to_stream()
        .to(sink, Produced.with_(STRING, LONG))
    )
    return builder.build({"application_id": APP})


def config(tmp_path: Any, **extra: Any) -> dict[str, Any]:
    return {
        "application_id": APP,
        "state_dir": str(tmp_path),
        "poll_ms": 10,
        "commit_interval_ms": 50,
        **extra,
    }


def test_should_refuse_to_start_naming_a_missing_sink_and_touch_nothing(tmp_path: Any) -> None:
    supplier = InMemoryClientSupplier()
    supplier.cluster.create_topic("words", 4)
    supplier.cluster.append("words", 0, b"k", b"apple", 1_000)
    streams = KafkaStreams(count_words(), config(tmp_path), client_supplier=supplier)
    began = time.monotonic()
    with pytest.raises(MissingSinkTopicError) as raised:
        streams.start()
    assert time.monotonic() - began < 5
    assert str(raised.value) == (
        f"cannot start application '{APP}': sink topic 'counts' does not exist; create it first "
        "(streams-runtime topics create counts --partitions 4), or with your cluster's tools "
        "(kafka-topics.sh --create); nothing was read or written"
    )
    assert streams.state is State.CREATED
    # nothing committed, no topic created (the sink, the repartition topic or the changelog)
    assert supplier.cluster.committed(APP) == {}
    assert supplier.cluster.topics() == {"words": 4}


def test_should_start_once_the_missing_sink_exists(tmp_path: Any) -> None:
    supplier = InMemoryClientSupplier()
    supplier.cluster.create_topic("words", 2)
    supplier.cluster.append("words", 0, b"k", b"apple", 1_000)
    streams = KafkaStreams(count_words(), config(tmp_path), client_supplier=supplier)
    with pytest.raises(MissingSinkTopicError):
        streams.start()
    supplier.cluster.create_topic("counts", 2)
    streams.start()
    try:
        wait_until(lambda: len(supplier.cluster.records("counts")) == 1, 10, lambda: "the count of apple")
    finally:
        streams.close(timeout=10)


def test_should_name_every_missing_topic_in_one_message(tmp_path: Any) -> None:
    supplier = InMemoryClientSupplier()
    extra = {"default_deserialization_exception_handler": "dead_letter", "dead_letter_topic": "bad-words"}
    streams = KafkaStreams(
        count_words(global_topic="stop-words"), config(tmp_path, **extra), client_supplier=supplier
    )
    with pytest.raises(MissingSourceTopicError) as raised:
        streams.start()
    message = str(raised.value)
    assert (
        "source topic 'words', global source topic 'stop-words', sink topic 'counts', "
        "dead-letter topic 'bad-words' do not exist; create them first" in message
    )
    for topic in ("words", "stop-words", "counts", "bad-words"):
        assert f"streams-runtime topics create {topic} --partitions N" in message
    assert supplier.cluster.topics() == {}


def test_should_not_check_a_sink_whose_topic_a_chooser_picks(tmp_path: Any) -> None:
    supplier = InMemoryClientSupplier()
    supplier.cluster.create_topic("words", 1)
    supplier.cluster.create_topic("counts-a", 1)
    chooser = count_words(lambda key, value, context: "counts-a")
    streams = KafkaStreams(chooser, config(tmp_path), client_supplier=supplier)
    streams.start()
    streams.close(timeout=10)


def test_user_topics_leave_internal_and_pattern_topics_out() -> None:
    builder = StreamsBuilder()
    orders = builder.stream("orders", Consumed.with_(STRING, STRING))
    orders.group_by_key().count(Materialized.as_("per-key")).to_stream().to(
        "order-counts", Produced.with_(STRING, LONG)
    )
    builder.stream(re.compile("clicks-.*"), Consumed.with_(STRING, STRING)).to("orders")  # read and written
    topology = builder.build({"application_id": APP})
    assert user_topics(topology.internal_builder, "dlq") == {
        "orders": "source",
        "order-counts": "sink",
        "dlq": "dead-letter",
    }
