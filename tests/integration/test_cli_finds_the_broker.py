"""``status`` and ``reset`` find the broker ``broker start`` recorded in the project's home, run
from an application's own directory elsewhere, with no flag and no ``$BOOTSTRAP_SERVERS``.

The session's broker stands in for a recorded one: its address goes into the state file
``broker start`` writes, in the home of a checkout the package 'runs from'.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from streams_runtime.brokers import BrokerInfo
from streams_runtime.cli import main
from streams_runtime.kafka import local_processes
from tests.integration.streams_support import make_topics, produce


@pytest.fixture
def recorded(kafka_broker: str, broker_kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session broker recorded in a checkout's home; the current directory an unrelated one."""
    checkout = tmp_path / "checkout"
    state_file = checkout / ".streams-runtime" / "broker.json"
    BrokerInfo(os.getpid(), kafka_broker, "", time.time(), kind=broker_kind).write(state_file)
    monkeypatch.setattr(local_processes, "source_checkout", lambda: checkout)
    (tmp_path / "my-app").mkdir()
    monkeypatch.chdir(tmp_path / "my-app")
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("STREAMS_RUNTIME_HOME", raising=False)
    return state_file


def test_status_and_reset_use_the_recorded_broker(recorded, kafka_broker, broker_kind, unique_name, capsys):
    topic, app_id = unique_name("found-in"), unique_name("found-app")
    make_topics(kafka_broker, **{topic: 2})
    produce(kafka_broker, topic, [(b"k", b"v")])

    assert main(["status", "--app-id", app_id, "--topics", topic, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["members"] == [] and {r["topic"] for r in status["lags"]} == {topic}

    assert main(["reset", "--app-id", app_id, "--input-topics", topic, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"Kafka at {kafka_broker} (the {broker_kind} broker recorded in {recorded})\n")
    assert f"Topic: {topic} Partition: 0 Offset: none -> 0" in printed and "Dry run" in printed
