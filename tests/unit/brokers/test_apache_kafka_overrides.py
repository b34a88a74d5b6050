"""``overrides`` of the Apache Kafka launcher (``broker start --kind kafka --override KEY=VALUE``,
as kafka-server-start.sh takes it): any server.properties setting of every node, except those the
cluster derives from its addresses, roles and directories. No broker runs here: the nodes'
``server.properties`` are read; tests/integration/test_kafka_broker_cli.py starts a cluster so."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_runtime.brokers.apache_kafka import MANAGED_SETTINGS, ApacheKafkaCluster, KafkaNode
from streams_runtime.cli import main
from streams_runtime.errors import BrokerError


def _properties(cluster: ApacheKafkaCluster, tmp_path: Path) -> list[dict[str, str]]:
    cluster.nodes = [
        KafkaNode(n, 9090 + 3 * n, 9091 + 3 * n, 9092 + 3 * n, tmp_path / f"n{n}") for n in (1, 2, 3)
    ]
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in cluster.nodes)
    texts = [cluster._properties(node, voters) for node in cluster.nodes]
    return [dict(line.split("=", 1) for line in text.splitlines()) for text in texts]


def test_an_override_reaches_every_node_and_wins_over_the_default(tmp_path: Path) -> None:
    cluster = ApacheKafkaCluster(
        nodes=3, overrides={"min.insync.replicas": "1", "message.max.bytes": str(2**21)}
    )
    for props in _properties(cluster, tmp_path):
        assert props["min.insync.replicas"] == "1"  # the 3-node default is 2
        assert props["message.max.bytes"] == str(2**21)
        assert props["default.replication.factor"] == "3"  # the rest stays


def test_without_overrides_the_three_node_defaults_hold(tmp_path: Path) -> None:
    for props in _properties(ApacheKafkaCluster(nodes=3), tmp_path):
        assert props["min.insync.replicas"] == "2" and "message.max.bytes" not in props


@pytest.mark.parametrize("key", sorted(MANAGED_SETTINGS))
def test_a_setting_the_cluster_derives_is_refused_by_name(key: str) -> None:
    with pytest.raises(BrokerError, match=f"broker setting\\(s\\) {key}: set by the cluster itself"):
        ApacheKafkaCluster(nodes=3, overrides={key: "x", "min.insync.replicas": "1"})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "tansu", "--override", "a=b"], "--override is for --kind kafka"),
        (["--kind", "kafka", "--override", "min.insync.replicas"], "expected KEY=VALUE"),
        (["--kind", "kafka", "--override", "=2"], "expected KEY=VALUE"),
    ],
)
def test_broker_start_refuses_a_malformed_override_before_starting_anything(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    assert main(["broker", "start", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "broker.json").exists()


def test_broker_start_names_a_managed_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    assert main(["broker", "start", "--kind", "kafka", "--override", "log.dirs=/tmp/x"]) == 1
    assert "log.dirs: set by the cluster itself" in capsys.readouterr().err
    assert not (tmp_path / "broker.json").exists()
