"""Exactly-once on a cluster of several brokers warns once at start about a user topic with a
single replica (its abort markers can be lost with its broker), and starts anyway; at-least-once,
a one-broker cluster and replicated topics are not warned about."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from streams_runtime import KafkaStreams, Serdes, StreamsBuilder
from streams_runtime.kafka_streams import State
from streams_runtime.kstream import Consumed, Produced
from streams_runtime.testing import InMemoryClientSupplier
from streams_runtime.testing.in_memory_clients import InMemoryAdmin
from streams_runtime.testing.in_memory_cluster import InMemoryCluster

APP = "single-replica-app"
STRING = Serdes.String()
EXACTLY_ONCE, AT_LEAST_ONCE = "exactly_once_v2", "at_least_once"


class ReplicatedAdmin(InMemoryAdmin):
    """The in-memory cluster's admin answering as a cluster of ``brokers`` nodes on which each
    topic has ``replicas[topic]`` replicas (as many as there are brokers, up to 3, when not named)."""

    def __init__(self, cluster: InMemoryCluster, brokers: int, replicas: Mapping[str, int]) -> None:
        super().__init__(cluster)
        self.brokers, self.replicas = brokers, replicas

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        metadata = super().list_topics(topic, timeout)
        nodes = list(range(1, self.brokers + 1))
        metadata.brokers = {node: SimpleNamespace(id=node) for node in nodes}
        for name, described in metadata.topics.items():
            held = nodes[: self.replicas.get(name, 3)]
            for partition in described.partitions.values():
                partition.replicas = partition.isrs = held
        return metadata


class ReplicatedSupplier(InMemoryClientSupplier):
    def __init__(self, brokers: int, replicas: Mapping[str, int]) -> None:
        super().__init__()
        self.brokers, self.replicas = brokers, replicas

    def get_admin(self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> InMemoryAdmin:
        return ReplicatedAdmin(self.cluster, self.brokers, self.replicas)


def start_and_warnings(
    tmp_path: Any, caplog: pytest.LogCaptureFixture, supplier: InMemoryClientSupplier, guarantee: str
) -> list[str]:
    """Start ``words -> upper -> shouts`` under ``guarantee``; the warnings the start logged."""
    supplier.cluster.create_topic("words", 2)
    supplier.cluster.create_topic("shouts", 2)
    builder = StreamsBuilder()
    builder.stream("words", Consumed.with_(STRING, STRING)).map_values(str.upper).to(
        "shouts", Produced.with_(STRING, STRING)
    )
    config = {"application_id": APP, "state_dir": str(tmp_path), "processing_guarantee": guarantee}
    streams = KafkaStreams(builder.build(config), config, client_supplier=supplier)
    with caplog.at_level(logging.WARNING, logger="streams_runtime.processor"):
        streams.start()
    try:
        assert streams.state is not State.CREATED  # warned or not, it started
    finally:
        streams.close(timeout=10)
    return [r.getMessage() for r in caplog.records if "single replica" in r.getMessage()]


def test_should_warn_once_naming_a_single_replica_sink_under_exactly_once(tmp_path, caplog) -> None:
    supplier = ReplicatedSupplier(brokers=3, replicas={"shouts": 1})
    [warning] = start_and_warnings(tmp_path, caplog, supplier, EXACTLY_ONCE)
    assert f"application '{APP}' runs exactly_once_v2 on 3 brokers" in warning
    assert "sink topic 'shouts' (replication factor 1) has a single replica" in warning
    assert "'words'" not in warning
    assert "no abort marker" in warning
    assert "recreate it with replication factor 3" in warning


def test_should_not_warn_at_least_once(tmp_path, caplog) -> None:
    supplier = ReplicatedSupplier(brokers=3, replicas={"shouts": 1})
    assert start_and_warnings(tmp_path, caplog, supplier, AT_LEAST_ONCE) == []


def test_should_not_warn_on_a_one_broker_cluster(tmp_path, caplog) -> None:
    supplier = InMemoryClientSupplier()  # one broker, every partition on it
    assert start_and_warnings(tmp_path, caplog, supplier, EXACTLY_ONCE) == []


def test_should_not_warn_when_every_user_topic_has_two_replicas(tmp_path, caplog) -> None:
    supplier = ReplicatedSupplier(brokers=3, replicas={"words": 2, "shouts": 2})
    assert start_and_warnings(tmp_path, caplog, supplier, EXACTLY_ONCE) == []
