"""``host`` of the Apache Kafka launcher (``broker start --kind kafka --host``): every listener of
every node on that address, and that address advertised, so that clients on other hosts can use
the cluster; loopback when not given. No broker runs here: the nodes' ``server.properties`` and
the addresses the launcher gives out are read. ``tests/integration/test_multi_host.py`` runs a
broker started this way in a network namespace of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_runtime.brokers.apache_kafka import ApacheKafkaCluster, KafkaNode
from streams_runtime.cli import main
from streams_runtime.errors import BrokerError


def _properties(cluster: ApacheKafkaCluster, tmp_path: Path) -> dict[str, str]:
    node = KafkaNode(1, 9092, 9093, 9094, tmp_path / "node-1", host=cluster.host)
    cluster.nodes = [node]
    text = cluster._properties(node, f"1@{cluster.host}:9093")
    return dict(line.split("=", 1) for line in text.splitlines())


def test_every_listener_binds_and_advertises_the_given_host(tmp_path: Path) -> None:
    cluster = ApacheKafkaCluster(host="10.20.30.1")
    props = _properties(cluster, tmp_path)
    assert props["listeners"] == (
        "PLAINTEXT://10.20.30.1:9092,INTERNAL://10.20.30.1:9094,CONTROLLER://10.20.30.1:9093"
    )
    assert props["advertised.listeners"] == "PLAINTEXT://10.20.30.1:9092,INTERNAL://10.20.30.1:9094"
    assert props["controller.quorum.voters"] == "1@10.20.30.1:9093"
    assert "127.0.0.1" not in "".join(props.values())
    assert cluster.bootstrap_servers == "10.20.30.1:9092"


def test_loopback_by_default(tmp_path: Path) -> None:
    cluster = ApacheKafkaCluster()
    props = _properties(cluster, tmp_path)
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9094"
    assert cluster.bootstrap_servers == "127.0.0.1:9092"


def test_an_advertised_port_goes_with_the_host(tmp_path: Path) -> None:
    cluster = ApacheKafkaCluster(host="10.20.30.1", advertised_port=19092)
    props = _properties(cluster, tmp_path)
    assert props["advertised.listeners"].startswith("PLAINTEXT://10.20.30.1:19092,")
    assert cluster.bootstrap_servers == "10.20.30.1:19092"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_a_wildcard_is_no_address_to_advertise(host: str) -> None:
    with pytest.raises(BrokerError, match="not a wildcard"):
        ApacheKafkaCluster(host=host)


def test_broker_start_takes_host_for_kafka_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    assert main(["broker", "start", "--kind", "tansu", "--host", "10.20.30.1"]) == 2
    assert "--host is for --kind kafka" in capsys.readouterr().err
    assert not (tmp_path / "broker.json").exists()
