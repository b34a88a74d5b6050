"""Input produced with confluent-kafka's default partitioner (``consistent_random``, CRC32 of the
key) is not where Kafka Streams looks for a key: the stream thread counts every misplaced record
of the partitions it reads on ``mispartitioned-records`` and warns once per partition, naming the
fix; records produced with ``murmur2_random`` (the Java clients' default) pass unremarked."""

from __future__ import annotations

import logging
import zlib
from typing import Any

import pytest

from streams_runtime import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder
from streams_runtime.kafka.clients import create_producer
from streams_runtime.kafka.partitioner import partition_for
from streams_runtime.processor.internals.partitioning_check import SENSOR
from tests.integration.streams_support import make_topics, read_all, streams_config, wait_running

PARTITIONS = 4
KEYS = [f"user-{i}".encode() for i in range(40)]


def _produce(bootstrap: str, topic: str, partitioner: str) -> None:
    producer = create_producer(bootstrap, {"partitioner": partitioner})
    for key in KEYS:
        producer.produce(topic, b"v", key)
    assert producer.flush(30) == 0


def _run(bootstrap: str, source: str, sink: str, app: str, tmp_path: Any) -> float:
    """Copy ``source`` to ``sink`` until every record went through; the misplaced records counted."""
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).to(
        sink, Produced.with_(Serdes.String(), Serdes.String())
    )
    streams = KafkaStreams(builder.build(), streams_config(bootstrap, app, tmp_path))
    streams.start()
    try:
        wait_running(streams)
        assert len(read_all(bootstrap, sink, PARTITIONS, len(KEYS))) == len(KEYS)
        return sum(t.streams_metrics.total(SENSOR) for t in streams.local_threads())
    finally:
        streams.close(timeout=20)


def test_records_of_librdkafkas_default_partitioner_are_counted_and_warned_about(
    bootstrap_servers: str, unique_name: Any, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("crc-app")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    _produce(bootstrap_servers, source, "consistent_random")
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    counted = _run(bootstrap_servers, source, sink, app, tmp_path)
    crc = {key: zlib.crc32(key) % PARTITIONS for key in KEYS}  # librdkafka's consistent hash
    misplaced = [key for key in KEYS if crc[key] != partition_for(key, PARTITIONS)]
    assert misplaced, "the keys should tell the two partitioners apart"
    assert counted == len(misplaced)
    warned = {r.getMessage().split(" has key")[0] for r in caplog.records if SENSOR in r.getMessage()}
    assert len(warned) == len({crc[key] for key in misplaced})  # once per partition
    assert all(
        "partitioner=murmur2_random" in r.getMessage() for r in caplog.records if SENSOR in r.getMessage()
    )


def test_records_of_kafkas_default_partitioner_pass(
    bootstrap_servers: str, unique_name: Any, tmp_path: Any
) -> None:
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("murmur-app")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    _produce(bootstrap_servers, source, "murmur2_random")
    assert _run(bootstrap_servers, source, sink, app, tmp_path) == 0
