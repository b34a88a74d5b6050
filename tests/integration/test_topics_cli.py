"""``streams-runtime topics`` against a real broker, through the CLI's ``main``.

Topics are created with the partition count asked for, an existing topic is refused by name and
a missing one named.
"""

from __future__ import annotations

import pytest

from streams_runtime.cli import main
from streams_runtime.kafka.clients import create_admin, partition_counts


def _cli(capsys, bootstrap: str, *command: str) -> tuple[int, str, str]:
    code = main([*command, "--bootstrap-servers", bootstrap])
    out, err = capsys.readouterr()
    return code, out, err


def test_should_create_topics_with_the_partition_count_and_describe_them(kafka_broker, unique_name, capsys):
    orders, users = unique_name("orders"), unique_name("users")
    code, out, err = _cli(
        capsys,
        kafka_broker,
        "topics",
        "create",
        orders,
        users,
        "--partitions",
        "3",
        "--config",
        "cleanup.policy=compact",
        "--config",
        "retention.ms=86400000",
    )
    assert (code, err) == (0, "")
    assert f"created topic {orders} (3 partitions" in out
    assert partition_counts(create_admin(kafka_broker), [orders, users]) == {orders: 3, users: 3}

    code, out, err = _cli(capsys, kafka_broker, "topics", "describe", orders)
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    # the topic's own configs only: not the broker's defaults (Kafka reports every config)
    assert header == (
        f"Topic: {orders}\tPartitionCount: 3\tReplicationFactor: 1\t"
        "Configs: cleanup.policy=compact,retention.ms=86400000"
    )
    assert [row.split("\t")[1:3] for row in rows] == [
        [f"Topic: {orders}", f"Partition: {p}"] for p in range(3)
    ]
    for row in rows:
        _, _, _, leader, replicas, isr = row.split("\t")
        broker = leader.removeprefix("Leader: ")
        assert broker.isdigit()
        assert (replicas, isr) == (f"Replicas: {broker}", f"Isr: {broker}")

    code, out, _ = _cli(capsys, kafka_broker, "topics", "list")
    assert code == 0 and {orders, users} <= set(out.splitlines())


def test_should_refuse_an_existing_topic_by_name_and_create_nothing(kafka_broker, unique_name, capsys):
    existing, new = unique_name("existing"), unique_name("new")
    assert _cli(capsys, kafka_broker, "topics", "create", existing, "--partitions", "2")[0] == 0

    code, out, err = _cli(capsys, kafka_broker, "topics", "create", new, existing, "--partitions", "4")
    assert code == 1 and out == ""
    assert err.startswith(f"error: topic {existing} (2 partitions) already exists on {kafka_broker}; ")
    assert "nothing was created" in err and "--if-not-exists" in err
    assert partition_counts(create_admin(kafka_broker), [new, existing]) == {existing: 2}

    code, out, err = _cli(
        capsys, kafka_broker, "topics", "create", new, existing, "--partitions", "4", "--if-not-exists"
    )
    assert (code, err) == (0, "")
    assert f"topic {existing} exists (2 partitions); left as it is" in out
    assert f"created topic {new} (4 partitions" in out
    assert partition_counts(create_admin(kafka_broker), [new, existing]) == {existing: 2, new: 4}


def test_should_name_a_topic_that_does_not_exist(kafka_broker, unique_name, capsys):
    missing = unique_name("missing")
    code, out, err = _cli(capsys, kafka_broker, "topics", "describe", missing)
    assert (code, out) == (1, "")
    assert err == f"error: topic {missing} does not exist on {kafka_broker}\n"
    # describing asked for nothing to be created
    assert partition_counts(create_admin(kafka_broker), [missing]) == {}


def test_should_find_the_cluster_as_every_command_does(kafka_broker, unique_name, capsys, monkeypatch):
    topic = unique_name("found")
    monkeypatch.setenv("BOOTSTRAP_SERVERS", kafka_broker)
    assert main(["topics", "create", topic, "--partitions", "1"]) == 0
    assert main(["topics", "list"]) == 0
    assert topic in capsys.readouterr().out.splitlines()


@pytest.mark.kafka_only  # Tansu accepts any config name
def test_should_name_a_topic_the_broker_refuses_with_the_brokers_reason(kafka_broker, unique_name, capsys):
    refused = unique_name("refused")
    code, out, err = _cli(
        capsys, kafka_broker, "topics", "create", refused, "--partitions", "1", "--config", "no.such.config=1"
    )
    assert (code, out) == (1, "")
    assert (
        err
        == f"error: could not create {refused} (INVALID_CONFIG: Unknown topic config name: no.such.config)\n"
    )
    assert partition_counts(create_admin(kafka_broker), [refused]) == {}
