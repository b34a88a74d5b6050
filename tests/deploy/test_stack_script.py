"""scripts/stack.sh without starting the stack: usage, ``status`` of a stopped stack, a taken
port refused before anything starts, and the Prometheus config it derives from deploy/.

The whole stack, up to down, is tests/deploy/test_stack.py (``make test-stack``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.compose_files import STACK_ENV, load_stack_module

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "stack.sh"
SERVICES = [
    "kafka",
    "postgres",
    "airflow-api-server",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "spark-master",
    *(f"spark-worker-{i}" for i in range(1, int(STACK_ENV["SPARK_WORKERS"]) + 1)),
    *(f"stream-worker-{i}" for i in range(1, int(STACK_ENV["STREAM_WORKER_REPLICAS"]) + 1)),
    "prometheus",
]


def _stack(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "STACK_HOME": str(tmp_path / "stack"), "PYTHON": sys.executable, **env}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=environ, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("args", [[], ["start"], ["up", "now"]])
def test_bad_usage_exits_2_naming_the_commands(tmp_path: Path, args: list[str]) -> None:
    run = _stack(tmp_path, *args)
    assert run.returncode == 2 and "usage:" in run.stderr and "up|down|status" in run.stderr, run


def test_status_of_a_stopped_stack_lists_every_service_stopped_and_exits_3(tmp_path: Path) -> None:
    run = _stack(tmp_path, "status")
    assert run.returncode == 3, run
    lines = run.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == SERVICES
    assert all(line.rstrip().endswith("stopped") for line in lines[:-1]), run.stdout
    # the addresses come from deploy/stack.env
    assert f"127.0.0.1:{STACK_ENV['POSTGRES_PORT']}" in lines[1]
    assert f"http://127.0.0.1:{STACK_ENV['AIRFLOW_API_PORT']}" in lines[2]
    assert lines[-1].startswith("0 processes")


def test_status_names_a_bad_setting(tmp_path: Path) -> None:
    run = _stack(tmp_path, "status", STREAM_WORKER_REPLICAS="two")
    assert run.returncode == 1 and "STREAM_WORKER_REPLICAS='two'" in run.stderr, run


def test_up_refuses_a_taken_port_before_starting_anything(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = _stack(tmp_path, "up", AIRFLOW_API_PORT=str(port))
    assert run.returncode == 1, run
    assert f"port {port} (AIRFLOW_API_PORT) is taken" in run.stderr
    assert not (tmp_path / "stack" / "broker.json").exists()
    down = _stack(tmp_path, "down")  # nothing to stop: still fine
    assert down.returncode == 0 and "down" in down.stdout, down


def test_the_native_prometheus_config_is_deploys_with_the_workers_addresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACK_HOME", str(tmp_path / "stack"))
    stack = load_stack_module().Stack()
    path = stack.prometheus_config()
    config = yaml.safe_load(path.read_text())
    deployed = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    assert config["global"] == deployed["global"]
    (job,) = config["scrape_configs"]
    base = int(STACK_ENV["STREAM_WORKER_HTTP_PORT"])
    replicas = int(STACK_ENV["STREAM_WORKER_REPLICAS"])
    assert job["static_configs"] == [{"targets": [f"127.0.0.1:{base + i}" for i in range(1, replicas + 1)]}]
    assert (
        Path(job["authorization"]["credentials_file"]).read_text()
        == stack.secrets()["STREAMS_RUNTIME_HTTP_TOKEN"]
    )
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run scripts/setup_system.sh"
    check = subprocess.run([promtool, "check", "config", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr  # the rule files load too


def test_up_refuses_while_a_service_of_the_stack_runs(tmp_path: Path) -> None:
    """A live process in a pid file of the stack (here a stand-in for Prometheus) stops ``up``
    before it starts anything, naming the service."""
    pids = tmp_path / "stack" / "pids"
    pids.mkdir(parents=True)
    standin = subprocess.Popen(["sleep", "60"])
    try:
        (pids / "prometheus.pid").write_text(str(standin.pid))
        run = _stack(tmp_path, "up")
        assert run.returncode == 1, run
        assert "already running: prometheus" in run.stderr and "scripts/stack.sh down" in run.stderr
        assert not (tmp_path / "stack" / "broker.json").exists()
        status = _stack(tmp_path, "status")
        assert status.returncode == 1 and f"prometheus               pid {standin.pid}" in status.stdout
    finally:
        standin.kill()
        standin.wait()
