"""``streams-runtime broker start --kind kafka --nodes 3`` as docs/how-to/run-on-apache-kafka.md
shows it: three Apache Kafka nodes in one KRaft quorum, printed address, start time and memory,
topics replicated three ways with ``min.insync.replicas=2``, records that survive a node's
``kill -9``, and a stop that leaves no process behind; plus the classpath error a machine without
``make setup-kafka`` gets.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streams_runtime.brokers import BrokerInfo, pid_alive
from streams_runtime.kafka.clients import (
    ConfigResource,
    KafkaException,
    ResourceType,
    TopicSpec,
    create_admin,
    create_topics,
)
from streams_runtime.kafka.local_processes import free_port
from tests.conditions import wait_until
from tests.integration.test_embedded_broker import _cli, _round_trip

pytestmark = pytest.mark.kafka_only


def test_should_start_a_three_node_cluster_report_it_and_stop_it(tmp_path: Path) -> None:
    started = _cli(
        tmp_path,
        "broker",
        "start",
        "--kind",
        "kafka",
        "--nodes",
        "3",
        "--override",
        "message.max.bytes=2097152",
    )
    assert started.returncode == 0, started.stdout + started.stderr
    info = BrokerInfo.read(tmp_path / "broker.json")
    assert info is not None and info.kind == "kafka" and len(info.all_pids) == 3
    try:
        assert f"kafka broker running at {info.bootstrap_servers} (3 nodes, pids" in started.stdout
        assert re.search(r"started in \d+\.\d s; resident memory \d+ MiB", started.stdout)
        assert started.stdout.strip().splitlines()[-1] == info.bootstrap_servers  # for scripts
        status = _cli(tmp_path, "broker", "status")
        assert status.returncode == 0 and "3 broker(s)" in status.stdout, status.stdout

        servers = info.bootstrap_servers
        admin = create_admin(servers)
        metadata = admin.list_topics(timeout=10)
        assert sorted(metadata.brokers) == [1, 2, 3]
        create_topics(admin, [TopicSpec("replicated", 2, replication_factor=-1)])  # the broker default
        topic = admin.list_topics("replicated", timeout=10).topics["replicated"]
        assert all(len(p.replicas) == 3 for p in topic.partitions.values())
        resource = ConfigResource(ResourceType.TOPIC, "replicated")
        configs: dict = {}

        def described() -> bool:  # a node that has not yet applied the new topic answers "unknown"
            try:
                configs.update(admin.describe_configs([resource])[resource].result(10))
            except KafkaException:
                return False
            return True

        wait_until(described, 30, "every node knowing the new topic's configs")
        assert configs["min.insync.replicas"].value == "2"
        for node in (1, 2, 3):  # --override: every node's server.properties
            broker = ConfigResource(ResourceType.BROKER, str(node))
            assert admin.describe_configs([broker])[broker].result(10)["message.max.bytes"].value == "2097152"
        assert len(_round_trip(servers, "round-trip", n=30)) == 30
    finally:
        stopped = _cli(tmp_path, "broker", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    assert not any(pid_alive(pid) for pid in info.all_pids)
    assert not (tmp_path / "broker.json").exists()


def test_should_name_the_missing_classpath_and_how_to_get_it(tmp_path: Path) -> None:
    failed = _cli(
        tmp_path,
        "broker",
        "start",
        "--kind",
        "kafka",
        env={"STREAMS_RUNTIME_KAFKA_LIBS": str(tmp_path / "none")},
    )
    assert failed.returncode == 1
    assert "Apache Kafka 4.3.1 is not set up" in failed.stderr and "make setup-kafka" in failed.stderr


def test_should_format_a_cluster_whose_random_id_begins_with_a_dash(tmp_path: Path, monkeypatch) -> None:
    """One start in 64 draws an id beginning with "-" (URL-safe base64 of 16 random bytes); the
    storage tool must not take it for an option."""
    import uuid

    from streams_runtime.brokers.apache_kafka import ApacheKafkaCluster

    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(bytes=b"\xf8" + bytes(range(15))))
    with ApacheKafkaCluster(data_dir=tmp_path / "kafka") as cluster:
        assert cluster.cluster_id is not None and cluster.cluster_id.startswith("-")
        assert len(_round_trip(cluster.bootstrap_servers, "dash-id")) == 50


def test_should_start_again_on_new_ports_when_a_picked_port_was_taken(tmp_path: Path, monkeypatch) -> None:
    """A port picked free can be taken before the node binds it (another process, or a client's
    outgoing connection); the start goes on with new ports instead of failing."""
    import socket

    from streams_runtime.brokers import apache_kafka

    taken = socket.create_server(("127.0.0.1", 0))
    picks = iter([taken.getsockname()[1]])
    monkeypatch.setattr(apache_kafka, "free_port", lambda *host: next(picks, None) or free_port(*host))
    try:
        with apache_kafka.ApacheKafkaCluster(data_dir=tmp_path / "kafka") as cluster:
            assert taken.getsockname()[1] not in (cluster.nodes[0].port, cluster.nodes[0].controller_port)
            assert len(_round_trip(cluster.bootstrap_servers, "new-ports")) == 50
    finally:
        taken.close()


def test_should_not_run_time_retention_during_a_test_session(bootstrap_servers: str) -> None:
    """Tests stamp records in 1970; the broker's first retention check (30 s after its start by
    default, then every 5 minutes) would delete them mid-test, so the test broker runs it daily."""
    admin = create_admin(bootstrap_servers)
    broker = str(next(iter(admin.list_topics(timeout=10).brokers)))
    resource = ConfigResource(ResourceType.BROKER, broker)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["log.retention.check.interval.ms"].value == str(24 * 3600 * 1000)
    assert configs["log.retention.hours"].value == "168"  # retention itself stays Kafka's default
