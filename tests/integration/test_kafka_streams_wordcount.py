"""WordCount with 2 instances x 2 threads produces exact final counts.

The topology repartitions by word (two sub-topologies), counts on RocksDB with a changelog, and
emits on commit (record cache); both instances run with their own state directory.
"""

from __future__ import annotations

import collections
import random
import struct

import pytest

from streams_runtime import (
    Consumed,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from tests.integration.streams_support import (
    active_task_counts,
    make_topics,
    produce,
    read_latest_until,
    streams_config,
    wait_running,
)

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

WORDS = [f"w{i}" for i in range(40)]


def word_count(source: str, sink: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .flat_map_values(lambda line: line.lower().split())
        .group_by(lambda key, word: word)
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build()


def test_should_count_words_exactly_with_two_instances_of_two_threads(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("lines"), unique_name("counts"), unique_name("wc")
    make_topics(bootstrap_servers, **{source: 4, sink: 4})
    rng = random.Random(5)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    expected = collections.Counter(w for line in lines for w in line.split())
    keyed = [(f"line-{i}".encode(), line.encode()) for i, line in enumerate(lines)]
    produce(bootstrap_servers, source, keyed[:1500])
    clients = [
        KafkaStreams(
            word_count(source, sink),
            streams_config(
                bootstrap_servers,
                app,
                tmp_path / f"i{i}",
                num_stream_threads=2,
                default_key_serde="string",
                default_value_serde="string",
            ),
        )
        for i in range(2)
    ]
    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=45)
        produce(bootstrap_servers, source, keyed[1500:])
        counts = read_latest_until(
            bootstrap_servers,
            sink,
            4,
            lambda m: (m.key().decode(), struct.unpack(">q", m.value())[0]),
            dict(expected),
        )
        tasks = [active_task_counts(c) for c in clients]
    finally:
        for client in clients:
            client.close(timeout=30)
    assert counts == dict(expected)
    assert sum(sum(t) for t in tasks) == 8  # 2 sub-topologies x 4 partitions over 4 threads
