"""The embedded broker helper against the real Tansu binary: lifecycle, clients, clear errors."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streams_runtime.brokers import EmbeddedBroker, bootstrap_or_embedded, pid_alive
from streams_runtime.errors import BrokerError
from streams_runtime.kafka.clients import (
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
    partition_counts,
)

CLI = [sys.executable, "-m", "streams_runtime.cli"]


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "STREAMS_RUNTIME_HOME": str(home), **(env or {})}
    full_env.pop("BOOTSTRAP_SERVERS", None)
    return subprocess.run([*CLI, *args], env=full_env, capture_output=True, text=True, timeout=120)


def _round_trip(servers: str, topic: str, n: int = 50) -> list[bytes]:
    create_topics(create_admin(servers), [TopicSpec(topic, 2)])
    producer = create_producer(servers)
    for i in range(n):
        producer.produce(topic, key=f"k{i % 5}".encode(), value=f"v{i}".encode())
    assert producer.flush(10) == 0
    consumer = create_consumer(servers, f"{topic}-reader")
    consumer.assign([TopicPartition(topic, p, 0) for p in range(2)])
    values: list[bytes] = []
    deadline = time.monotonic() + 15
    while len(values) < n and time.monotonic() < deadline:
        values += [m.value() for m in consumer.consume(100, timeout=0.2) if not m.error()]
    consumer.close()
    return values


def test_should_start_round_trip_records_and_stop_leaving_no_process(tmp_path: Path) -> None:
    broker = EmbeddedBroker(log_file=tmp_path / "broker.log", state_file=tmp_path / "broker.json")
    info = broker.start()
    try:
        assert pid_alive(info.pid)
        assert info.bootstrap_servers.startswith("127.0.0.1:")
        assert (tmp_path / "broker.json").exists()
        values = _round_trip(info.bootstrap_servers, "round-trip")
        assert sorted(values) == sorted(f"v{i}".encode() for i in range(50))
    finally:
        broker.stop()
    assert not pid_alive(info.pid)
    assert not (tmp_path / "broker.json").exists()
    assert "tansu" in (tmp_path / "broker.log").read_text().lower()


def test_should_refuse_to_start_the_same_broker_twice(tmp_path: Path) -> None:
    with EmbeddedBroker(log_file=tmp_path / "broker.log") as broker:
        with pytest.raises(BrokerError, match="already running"):
            broker.start()


def test_should_name_the_port_when_it_is_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BrokerError, match=f"port in use: 127.0.0.1:{port}"):
            EmbeddedBroker(port=port, log_file=tmp_path / "broker.log").start()


def test_should_say_the_binary_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALF_TANSU_BIN", str(tmp_path / "no-such-tansu"))
    with pytest.raises(BrokerError, match="broker binary missing: CALF_TANSU_BIN="):
        EmbeddedBroker(log_file=tmp_path / "broker.log").start()


def test_should_show_the_log_tail_when_the_broker_dies_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "dying-broker"
    fake.write_text("#!/bin/sh\necho 'fatal: cannot open storage engine'\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CALF_TANSU_BIN", str(fake))
    with pytest.raises(BrokerError) as info:
        EmbeddedBroker(log_file=tmp_path / "broker.log", startup_timeout=10).start()
    message = str(info.value)
    assert "broker died at start (exit code 3)" in message
    assert "fatal: cannot open storage engine" in message


def test_should_start_nothing_when_bootstrap_servers_are_configured(tmp_path: Path) -> None:
    log = tmp_path / "never-written.log"
    with bootstrap_or_embedded("kafka-1.example:9092", log_file=log) as servers:
        assert servers == "kafka-1.example:9092"
    assert not log.exists()


def test_should_start_an_embedded_broker_only_when_none_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path / "home"))
    with bootstrap_or_embedded(log_file=tmp_path / "broker.log") as servers:
        assert _round_trip(servers, "embedded-only", n=5)
    assert (tmp_path / "broker.log").exists()


def test_should_not_auto_create_topics_from_a_producer(bootstrap_servers: str, unique_name) -> None:
    topic = unique_name("never-created")
    producer = create_producer(bootstrap_servers, {"message.timeout.ms": 2000})
    producer.produce(topic, value=b"x")
    producer.flush(5)
    assert topic not in partition_counts(create_admin(bootstrap_servers), [topic])


def test_should_create_topics_idempotently_and_reject_a_partition_mismatch(
    bootstrap_servers: str, unique_name
) -> None:
    admin = create_admin(bootstrap_servers)
    topic = unique_name("orders")
    assert create_topics(admin, [TopicSpec(topic, 3)]) == [topic]
    assert create_topics(admin, [TopicSpec(topic, 3)]) == []
    with pytest.raises(ValueError, match=f"{topic}: expected 5 partitions, found 3"):
        create_topics(admin, [TopicSpec(topic, 5)])


class TestCli:
    def test_should_start_report_status_and_stop_by_pid(self, tmp_path: Path) -> None:
        started = _cli(tmp_path, "broker", "start")
        assert started.returncode == 0, started.stderr
        assert "broker running at 127.0.0.1:" in started.stdout
        try:
            status = _cli(tmp_path, "broker", "status")
            assert status.returncode == 0 and "running at" in status.stdout
            again = _cli(tmp_path, "broker", "start")
            assert again.returncode == 1
            assert "already running" in again.stderr
        finally:
            stopped = _cli(tmp_path, "broker", "stop")
        assert stopped.returncode == 0 and "stopped" in stopped.stdout
        pid = int(started.stdout.split("(pid ")[1].split(")")[0])
        assert not pid_alive(pid)
        assert _cli(tmp_path, "broker", "status").returncode == 1

    def test_should_exit_non_zero_with_a_clear_message_for_a_missing_binary(self, tmp_path: Path) -> None:
        result = _cli(tmp_path, "broker", "start", env={"CALF_TANSU_BIN": "/nonexistent/tansu"})
        assert result.returncode == 1
        assert "error: broker binary missing: CALF_TANSU_BIN='/nonexistent/tansu'" in result.stderr

    def test_should_exit_non_zero_for_a_busy_port(self, tmp_path: Path) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = _cli(tmp_path, "broker", "start", "--port", str(port))
        assert result.returncode == 1
        assert f"port in use: 127.0.0.1:{port}" in result.stderr
