"""Word count: lines of text -> words -> a count per word, the classic Kafka Streams example.

text-input -> flat_map_values(split) -> group_by(word) [repartition]
           -> count on "word-count-store" -> to_stream -> wordcount-output

streams-runtime describe --app streams_runtime.examples.word_count:app --format svg
"""

from __future__ import annotations

from typing import Any

from streams_runtime.kstream import Consumed, Materialized, Produced, StreamsBuilder
from streams_runtime.processor.topology import Topology
from streams_runtime.serdes import Serdes

CONFIG: dict[str, Any] = {
    "application_id": "word-count",
    "default_key_serde": "string",
    "default_value_serde": "string",
}


def word_count_topology(config: dict[str, Any] | None = None) -> Topology:
    builder = StreamsBuilder()
    (
        builder.stream("text-input", Consumed.with_(Serdes.String(), Serdes.String()))
        .flat_map_values(lambda line: line.lower().split())
        .group_by(lambda key, word: word)
        .count(Materialized.as_("word-count-store"))
        .to_stream()
        .to("wordcount-output", Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config or CONFIG)


def app() -> tuple[Topology, dict[str, Any]]:
    return word_count_topology(CONFIG), dict(CONFIG)
