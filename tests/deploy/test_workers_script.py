"""scripts/workers.sh hands the HTTP settings to each worker as the CLI expects them.

No broker: ``CLI`` points at a stand-in that records its arguments and environment, publishes a
RUNNING status where a worker would, and exits; the recorded arguments are parsed by the real
``streams-runtime`` parser. Stand-ins that die at once or never report RUNNING show that ``start``
fails with the worker's log instead of saying "started". (Starting, scaling and
stopping real workers is tests/integration/test_workers_script.py.)
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from streams_runtime.cli import build_parser
from streams_runtime.worker import HTTP_TOKEN_ENV

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "workers.sh"

FAKE_CLI = """#!/usr/bin/env bash
out="$STREAMS_RUNTIME_HOME/recorded"
mkdir -p "$out"
printf '%s\\n' "$@" >"$out/args-$$.tmp"
printf '%s' "${{{token}:-}}" >"$out/token-$$"
mv "$out/args-$$.tmp" "$out/args-$$"
while [ $# -gt 0 ]; do [ "$1" = --state-dir ] && state="$2"; shift; done
mkdir -p "$state/instance-0"
echo '{{"pid": '$$', "state": "RUNNING", "threads": {{}}}}' >"$state/instance-0/status.tmp"
mv "$state/instance-0/status.tmp" "$state/instance-0/status.json"  # atomic, as the worker's
"""

#: a worker that fails at start (a bad --app, a missing topic): it logs why and exits
DYING_CLI = """#!/usr/bin/env bash
echo "error: topic 'payments' does not exist; create it with streams-runtime topics create"
exit 1
"""

#: a worker that stays up without ever reaching RUNNING (say, a broker it cannot reach)
STUCK_CLI = """#!/usr/bin/env bash
echo "waiting for the broker at 127.0.0.1:1"
exec sleep 30
"""


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)


def _start_and_record(tmp_path: Path, count: int, **extra: str) -> list[tuple[list[str], str]]:
    """Run ``workers.sh start <count>`` with the stand-in CLI; each worker's (argv, token)."""
    home = tmp_path / "home"
    cli = tmp_path / "fake-cli"
    cli.write_text(FAKE_CLI.format(token=HTTP_TOKEN_ENV))
    cli.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"HTTP_PORT", "HTTP_HOST", "HTTP_BIND", HTTP_TOKEN_ENV}
    }
    env.update(
        {
            "STREAMS_RUNTIME_HOME": str(home),
            "BOOTSTRAP_SERVERS": "127.0.0.1:1",
            "CLI": str(cli),
            "APP": "streams_runtime.demo.app:app",
            **extra,
        }
    )
    started = _run(env, "start", str(count))
    assert started.returncode == 0, started.stderr
    recorded = home / "recorded"
    deadline = time.monotonic() + 20
    while len(list(recorded.glob("args-*[0-9]"))) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    runs = []
    for args_file in sorted(recorded.glob("args-*[0-9]")):
        token = (recorded / args_file.name.replace("args-", "token-")).read_text()
        runs.append((args_file.read_text().splitlines(), token))
    assert len(runs) == count, runs
    assert _run(env, "stop").returncode == 0
    return runs


def _home_with_cli(tmp_path: Path, script: str, **extra: str) -> dict[str, str]:
    cli = tmp_path / "fake-cli"
    cli.write_text(script)
    cli.chmod(0o755)
    return {
        **os.environ,
        "STREAMS_RUNTIME_HOME": str(tmp_path / "home"),
        "BOOTSTRAP_SERVERS": "127.0.0.1:1",
        "CLI": str(cli),
        "STOP_TIMEOUT": "5",
        **extra,
    }


def test_start_fails_with_the_log_of_a_worker_that_exits_before_running(tmp_path: Path) -> None:
    env = _home_with_cli(tmp_path, DYING_CLI)
    started = _run(env, "start", "2")
    assert started.returncode == 1, started.stdout + started.stderr
    assert "worker 1 exited before it was running" in started.stderr
    assert "topic 'payments' does not exist" in started.stderr  # the log's tail, where the cause is
    assert "worker 1 running" not in started.stdout


def test_start_fails_when_a_worker_is_not_running_within_the_start_timeout(tmp_path: Path) -> None:
    env = _home_with_cli(tmp_path, STUCK_CLI, START_TIMEOUT="2")
    try:
        begun = time.monotonic()
        started = _run(env, "start", "1")
        assert started.returncode == 1, started.stdout + started.stderr
        assert "worker 1 is not running after 2s" in started.stderr
        assert "waiting for the broker at 127.0.0.1:1" in started.stderr
        assert time.monotonic() - begun < 20
    finally:
        assert _run(env, "stop").returncode == 0


def test_start_waits_for_a_fresh_running_status_not_the_previous_runs(tmp_path: Path) -> None:
    env = _home_with_cli(tmp_path, DYING_CLI)
    stale = Path(env["STREAMS_RUNTIME_HOME"]) / "state" / "worker-1" / "instance-0" / "status.json"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"pid": 1, "state": "RUNNING", "threads": {}}')
    started = _run(env, "start", "1")
    assert started.returncode == 1 and "exited before it was running" in started.stderr


def _parsed(runs: list[tuple[list[str], str]]) -> list:
    return sorted((build_parser().parse_args(argv) for argv, _ in runs), key=lambda a: a.state_dir)


def test_should_pass_http_host_and_bind_through_to_every_worker(tmp_path: Path) -> None:
    runs = _start_and_record(
        tmp_path,
        2,
        HTTP_PORT="8100",
        HTTP_HOST="worker.example",
        HTTP_BIND="0.0.0.0",
        **{HTTP_TOKEN_ENV: "s3cret"},
    )
    parsed = _parsed(runs)
    assert [a.command for a in parsed] == ["worker", "worker"]
    assert [a.http_port for a in parsed] == [8101, 8102]
    assert [a.http_host for a in parsed] == ["worker.example"] * 2
    assert [a.http_bind for a in parsed] == ["0.0.0.0"] * 2
    assert [token for _, token in runs] == ["s3cret", "s3cret"]  # inherited, never on the command line
    assert all("s3cret" not in argv for argv, _ in runs)


def test_should_leave_host_and_bind_to_the_worker_defaults_when_unset(tmp_path: Path) -> None:
    runs = _start_and_record(tmp_path, 1, HTTP_PORT="8100")
    [args] = _parsed(runs)
    assert (args.http_port, args.http_host, args.http_bind) == (8101, None, None)
    [(argv, token)] = runs
    assert "--http-host" not in argv and "--http-bind" not in argv and token == ""


@pytest.mark.parametrize("name", ["HTTP_HOST", "HTTP_BIND", HTTP_TOKEN_ENV])
def test_should_document_the_http_settings_in_the_usage_text(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "STREAMS_RUNTIME_HOME": str(tmp_path / "home")}
    usage = _run(env)
    assert usage.returncode == 2
    assert f"${name}" in usage.stdout
    assert "set -euo" not in usage.stdout and usage.stdout.startswith("Start, scale, stop")
