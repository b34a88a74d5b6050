"""One rule finds Kafka for every command: flag, $BOOTSTRAP_SERVERS, the broker recorded in the
project's home, else a warning and a throwaway broker (worker, demo) or an error (status, reset).

No broker runs here: a recorded state file pointing at a closed port is enough to show which
address a command took (it ends with "cannot reach Kafka at <that address>").
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streams_runtime.brokers import BrokerInfo, bootstrap_or_embedded, find_bootstrap, runtime_home
from streams_runtime.brokers import bootstrap as bootstrap_module
from streams_runtime.cli import main
from streams_runtime.errors import BrokerError
from streams_runtime.kafka import local_processes


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A source checkout the package 'runs from', and the current directory elsewhere (an app's own
    directory, holding no ``.streams-runtime/``); nothing configured in the environment."""
    root = tmp_path / "checkout"
    root.mkdir()
    monkeypatch.setattr(local_processes, "source_checkout", lambda: root)
    app_dir = tmp_path / "my-app"
    app_dir.mkdir()
    monkeypatch.chdir(app_dir)
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.delenv("STREAMS_RUNTIME_HOME", raising=False)
    return root


@pytest.fixture
def record_broker() -> Callable[..., str]:
    """Factory: write ``<home>/broker.json`` as ``broker start`` does; returns the address."""

    def record(home: Path, servers: str | None = None, pid: int | None = None) -> str:
        servers = servers or f"127.0.0.1:{_closed_port()}"
        info = BrokerInfo(
            pid=pid or os.getpid(), bootstrap_servers=servers, log_file="", started_at=time.time()
        )
        info.write(home / "broker.json")
        return servers

    return record


def test_the_flag_wins_over_the_environment_and_the_recorded_broker(checkout, record_broker, monkeypatch):
    record_broker(checkout / ".streams-runtime")
    monkeypatch.setenv("BOOTSTRAP_SERVERS", "env-host:9092")
    found = find_bootstrap("flag-host:9092")
    assert (found.servers, found.source) == ("flag-host:9092", "--bootstrap-servers")


def test_the_environment_wins_over_the_recorded_broker(checkout, record_broker, monkeypatch):
    record_broker(checkout / ".streams-runtime")
    monkeypatch.setenv("BOOTSTRAP_SERVERS", "env-host:9092")
    found = find_bootstrap(None)
    assert (found.servers, found.source) == ("env-host:9092", "$BOOTSTRAP_SERVERS")


def test_the_broker_recorded_in_the_checkout_is_found_from_an_unrelated_directory(checkout, record_broker):
    servers = record_broker(checkout / ".streams-runtime")
    assert Path.cwd().name == "my-app"
    assert runtime_home() == checkout / ".streams-runtime"
    found = find_bootstrap(None)
    state_file = checkout / ".streams-runtime" / "broker.json"
    assert (found.servers, found.source) == (servers, f"the tansu broker recorded in {state_file}")


def test_the_nearest_home_above_the_current_directory_comes_before_the_checkout(
    checkout, record_broker, tmp_path, monkeypatch
):
    record_broker(checkout / ".streams-runtime")
    project = tmp_path / "project"
    servers = record_broker(project / ".streams-runtime")
    (project / "src" / "jobs").mkdir(parents=True)
    monkeypatch.chdir(project / "src" / "jobs")
    assert runtime_home() == project / ".streams-runtime"
    assert find_bootstrap(None).servers == servers


def test_streams_runtime_home_names_the_home_outright(checkout, record_broker, tmp_path, monkeypatch):
    record_broker(checkout / ".streams-runtime")
    servers = record_broker(tmp_path / "elsewhere")
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path / "elsewhere"))
    assert find_bootstrap(None).servers == servers


def test_a_recorded_broker_whose_process_is_gone_is_passed_over(checkout, record_broker):
    record_broker(checkout / ".streams-runtime", pid=_dead_pid())
    assert find_bootstrap(None) is None


class _NoBrokerHere:
    """Stands in for the throwaway broker: records that a start was asked for, and refuses."""

    def __init__(self, seen: list[str], said: Callable[[], str]) -> None:
        self.seen, self.said = seen, said

    def __call__(self, kind: str, **kwargs: object) -> _NoBrokerHere:
        self.seen.append(f"start {kind}")
        return self

    def __enter__(self) -> Iterator[str]:
        self.seen.append(f"said before the start: {self.said()}")
        raise BrokerError("no broker starts in this test")

    def __exit__(self, *exc: object) -> None:
        return None


WARNING = (
    "no Kafka configured: starting a throwaway embedded Tansu broker that lives only as long "
    "as this process (its topics, records and committed offsets go with it). To use a real cluster "
    "give --bootstrap-servers HOST:PORT or set BOOTSTRAP_SERVERS=HOST:PORT; to share one local broker "
    "between commands, start it with 'streams-runtime broker start' (no broker is recorded in {state}; "
    "$STREAMS_RUNTIME_HOME chooses another home)"
)


@pytest.mark.parametrize(
    "command, prefix",
    [(["worker", "--app", "streams_runtime.demo.app:app"], "[worker] WARNING:"), (["demo"], "[demo]")],
)
def test_worker_warns_and_demo_says_before_starting_a_throwaway_broker(
    checkout, capsys, monkeypatch, command, prefix
):
    seen: list[str] = []
    monkeypatch.setattr(
        bootstrap_module, "local_broker", _NoBrokerHere(seen, lambda: capsys.readouterr().err)
    )
    assert main(command) == 1
    state = checkout / ".streams-runtime" / "broker.json"
    assert seen == ["start tansu", f"said before the start: {prefix} {WARNING.format(state=state)}\n"]
    assert capsys.readouterr().err == "error: no broker starts in this test\n"


def test_kafka_streams_and_the_benchmarks_log_the_warning(checkout, caplog, monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(bootstrap_module, "local_broker", _NoBrokerHere(seen, lambda: caplog.text))
    with pytest.raises(BrokerError), caplog.at_level(logging.WARNING), bootstrap_or_embedded(None):
        pass
    assert "starting a throwaway embedded Tansu broker" in seen[1]
    assert "To use a real cluster give bootstrap_servers in the config or set BOOTSTRAP_SERVERS" in seen[1]


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--app-id", "a"],
        ["reset", "--app-id", "a", "--input-topics", "t", "--dry-run"],
        ["topics", "list"],
        ["produce", "orders", "--file", "-"],
    ],
)
def test_the_operator_tools_without_a_broker_stop_saying_how_to_name_one(checkout, capsys, command):
    assert main(command) == 1
    state = checkout / ".streams-runtime" / "broker.json"
    assert capsys.readouterr().err == (
        "error: no Kafka cluster to talk to: pass --bootstrap-servers HOST:PORT, set "
        "BOOTSTRAP_SERVERS=HOST:PORT, or start a local broker with 'streams-runtime broker start' "
        f"(no broker is recorded in {state}; $STREAMS_RUNTIME_HOME chooses another home)\n"
    )


@pytest.mark.parametrize(
    "command", [["status", "--app-id", "a"], ["reset", "--app-id", "a", "--input-topics", "t", "--dry-run"]]
)
def test_status_and_reset_take_the_recorded_broker(checkout, record_broker, capsys, command):
    servers = record_broker(checkout / ".streams-runtime")
    assert main(["--connect-timeout", "5", *command]) == 1
    state = checkout / ".streams-runtime" / "broker.json"
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: cannot reach Kafka at {servers} after 1"), line
    assert line.endswith(f"(the address came from the tansu broker recorded in {state})"), line


def test_the_error_names_a_recorded_broker_that_is_not_running(checkout, record_broker, capsys):
    pid = _dead_pid()
    record_broker(checkout / ".streams-runtime", pid=pid)
    assert main(["status", "--app-id", "a"]) == 1
    state = checkout / ".streams-runtime" / "broker.json"
    assert f"(the broker recorded in {state} (pid {pid}) is not running;" in capsys.readouterr().err
