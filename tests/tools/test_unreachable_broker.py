"""A --bootstrap-servers that does not answer ends a command with one clear line, quickly."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from streams_runtime.kafka.clients import (
    LIBRDKAFKA_LOGGER,
    KafkaUnreachableError,
    create_admin,
    ensure_reachable,
)

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streams_runtime.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "command", [["worker", "--app", "streams_runtime.demo.app:app"], ["status", "--app-id", "a"]]
)
def test_should_print_one_line_when_nothing_listens(command):
    port = _closed_port()
    result = _cli("--connect-timeout", "30", *command, "--bootstrap-servers", f"127.0.0.1:{port}")
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    # a refusal is answered after about a second, not after the whole 30 s connect timeout
    assert line.startswith(f"error: cannot reach Kafka at 127.0.0.1:{port} after 1"), line
    assert line.endswith(" s: Connection refused (nothing listens there)"), line


def test_a_refused_connection_is_answered_in_under_two_seconds():
    started = time.monotonic()
    with pytest.raises(KafkaUnreachableError, match=r"after 1(\.\d)? s: Connection refused \(nothing"):
        ensure_reachable(f"127.0.0.1:{_closed_port()},127.0.0.1:{_closed_port()}", 30)
    assert time.monotonic() - started < 2.0


def test_should_print_one_line_when_the_port_is_not_kafka():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(50)
    stop = threading.Event()

    def accept_and_close() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    threading.Thread(target=accept_and_close, daemon=True).start()
    port = server.getsockname()[1]
    try:
        result = _cli(
            "--connect-timeout",
            "2",
            "reset",
            "--app-id",
            "a",
            "--input-topics",
            "t",
            "--bootstrap-servers",
            f"127.0.0.1:{port}",
        )
    finally:
        stop.set()
        server.close()
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: cannot reach Kafka at 127.0.0.1:{port} after 2 s: ")
    assert "Traceback" not in result.stderr and "%3|" not in result.stderr


def test_should_name_a_malformed_bootstrap_list():
    with pytest.raises(KafkaUnreachableError, match="must be host:port"):
        ensure_reachable("localhost", 1)


def test_should_route_librdkafka_logs_through_python_logging(caplog):
    port = _closed_port()
    admin = create_admin(f"127.0.0.1:{port}")
    with caplog.at_level(logging.DEBUG, logger=LIBRDKAFKA_LOGGER.name):
        deadline = time.monotonic() + 10
        while (
            not any(r.name == LIBRDKAFKA_LOGGER.name for r in caplog.records) and time.monotonic() < deadline
        ):
            admin.poll(0.2)
    records = [r for r in caplog.records if r.name == LIBRDKAFKA_LOGGER.name]
    assert records and any("Connection refused" in r.getMessage() for r in records)
