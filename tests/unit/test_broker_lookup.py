"""The one rule every command finds Kafka by: the argument, ``$BOOTSTRAP_SERVERS``, the recorded broker
(more in tests/unit/brokers/test_bootstrap.py: the home, the warning, the commands)."""

from __future__ import annotations

import os

import pytest

from streams_runtime.brokers import BrokerInfo, default_state_file, find_bootstrap


@pytest.fixture
def nothing_configured(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)


def _servers_found(given: str | None = None) -> str | None:
    found = find_bootstrap(given)
    return found.servers if found else None


def _record_broker(pid: int, servers: str) -> None:
    BrokerInfo(pid=pid, bootstrap_servers=servers, log_file="broker.log", started_at=0.0).write(
        default_state_file()
    )


def test_should_find_nothing_when_nothing_is_configured(nothing_configured):
    assert _servers_found() is None
    assert _servers_found("") is None


def test_should_take_the_recorded_broker_while_it_runs(nothing_configured):
    _record_broker(os.getpid(), "127.0.0.1:1111")
    assert _servers_found() == "127.0.0.1:1111"


def test_should_ignore_a_recorded_broker_that_is_gone(nothing_configured):
    _record_broker(2**22 + 12345, "127.0.0.1:1111")  # above the kernel's pid limit: never alive
    assert _servers_found() is None


def test_should_prefer_the_environment_to_the_recorded_broker(nothing_configured, monkeypatch):
    _record_broker(os.getpid(), "127.0.0.1:1111")
    monkeypatch.setenv("BOOTSTRAP_SERVERS", "127.0.0.1:2222")
    assert _servers_found() == "127.0.0.1:2222"


def test_should_prefer_the_argument_to_everything(nothing_configured, monkeypatch):
    _record_broker(os.getpid(), "127.0.0.1:1111")
    monkeypatch.setenv("BOOTSTRAP_SERVERS", "127.0.0.1:2222")
    assert _servers_found("127.0.0.1:3333") == "127.0.0.1:3333"
