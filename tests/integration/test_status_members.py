"""``status`` names every member's ``application_server`` endpoint, and says "no endpoint
configured" for a member without one (never a bare null).

Three instances of ``worker_app`` join one group: two from a launcher serving the HTTP API
(``--http-port P``: instances on P and P+1), one from a launcher without it. Apache Kafka returns
each member's subscription, so the endpoints come from the group itself; Tansu returns none, so
they come from the workers' HTTP API (``--http``), matched by process id.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams_runtime.cli import main
from streams_runtime.processor.internals.group_member import describe_application_members
from streams_runtime.tools.status import NO_ENDPOINT, UNKNOWN_ENDPOINT
from streams_runtime.worker import FORWARDING_SECRET_ENV
from tests.integration.streams_support import make_topics, wait_until
from tests.integration.test_worker_http import _status
from tests.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]
SECRET = "status-members-forwarding-secret-of-32-bytes"


class Launcher:
    """One ``streams-runtime worker`` process of ``worker_app``; its output collected."""

    def __init__(self, bootstrap: str, topics: str, state_dir: Path, *options: str) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streams_runtime.cli",
                "worker",
                "--app",
                "tests.integration.worker_app:app",
            ]
            + ["--bootstrap-servers", bootstrap, "--state-dir", str(state_dir), *options],
            cwd=ROOT,
            # the instances read each other's tasks for /ui/api/instances with the forwarding secret
            env={**os.environ, "WORKER_TEST_TOPICS": topics, FORWARDING_SECRET_ENV: SECRET},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        out = self.process.stdout
        threading.Thread(target=lambda: self.lines.extend(line.rstrip() for line in out), daemon=True).start()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


@pytest.fixture
def three_members(kafka_broker: str, unique_name, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """(application id, P): instances on P and P+1 with the HTTP API, a third without; all RUNNING."""
    source, output, app_id = unique_name("members-in"), unique_name("members-out"), unique_name("members-app")
    make_topics(kafka_broker, **{source: 4, output: 4})
    topics = f"{source},{output},{app_id}"
    port = free_ports(2)
    served = Launcher(kafka_broker, topics, tmp_path / "a", "--instances", "2", "--http-port", str(port))
    plain = Launcher(kafka_broker, topics, tmp_path / "b")
    try:
        for p in (port, port + 1):
            wait_until(
                lambda p=p: _status(f"http://127.0.0.1:{p}/health/ready") == 200,
                90,
                lambda: served.lines[-10:],
            )

        def settled() -> bool:
            state, members = describe_application_members(kafka_broker, app_id)
            running = [line for line in served.lines + plain.lines if "-> RUNNING" in line]
            return state == "Stable" and len(members) == 3 and len(running) >= 3

        wait_until(settled, 90, lambda: (served.lines[-5:], plain.lines[-5:]))
        yield app_id, port
    finally:
        plain.stop()
        served.stop()


def test_status_shows_each_members_endpoint_or_says_none_is_configured(
    three_members, kafka_broker, broker_kind, capsys, monkeypatch
):
    app_id, port = three_members
    served = {f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"}
    command = ["status", "--app-id", app_id, "--bootstrap-servers", kafka_broker]

    assert main([*command, "--http", f"127.0.0.1:{port}", "--json"]) == 0
    members = json.loads(capsys.readouterr().out)["members"]
    assert {m["endpoint"] for m in members} == served | {None}
    (plain,) = [m for m in members if m["endpoint"] is None]
    assert plain["endpoint_note"].startswith(NO_ENDPOINT)

    # with no --http: the group alone tells on Apache Kafka; Tansu returns no subscriptions
    assert main([*command, "--json"]) == 0
    members = json.loads(capsys.readouterr().out)["members"]
    if broker_kind == "kafka":
        assert {m["endpoint"] for m in members} == served | {None}
        assert [m["endpoint_note"] for m in members if m["endpoint"] is None] == [NO_ENDPOINT]
    else:
        assert [m["endpoint_note"] for m in members] == [UNKNOWN_ENDPOINT] * 3

    monkeypatch.setenv("COLUMNS", "250")  # the table on one line per member
    assert main([*command, "--http", f"127.0.0.1:{port}"]) == 0
    table = capsys.readouterr().out
    assert all(endpoint in table for endpoint in served) and NO_ENDPOINT in table
