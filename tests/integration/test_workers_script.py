"""scripts/workers.sh: start, scale, check and stop worker instances on one machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from streams_runtime.brokers import pid_alive
from streams_runtime.demo.app import PARTITIONS, PAYMENTS_TOPIC, RESULTS_TOPIC
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "workers.sh"


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)


def _pids(home: Path) -> dict[str, int]:
    return {p.stem: int(p.read_text()) for p in (home / "workers").glob("*.pid")}


def test_workers_script_starts_scales_reports_and_stops_instances(
    tmp_path: Path, bootstrap_servers: str
) -> None:
    create_topics(
        create_admin(bootstrap_servers),
        [TopicSpec(PAYMENTS_TOPIC, PARTITIONS), TopicSpec(RESULTS_TOPIC, PARTITIONS)],
    )
    home = tmp_path / "home"
    env = {
        **os.environ,
        "STREAMS_RUNTIME_HOME": str(home),
        "BOOTSTRAP_SERVERS": bootstrap_servers,
        "CLI": str(Path(sys.executable).with_name("streams-runtime")),
        "STOP_TIMEOUT": "30",
    }
    started = _run(env, "start", "2", "1")
    assert started.returncode == 0, started.stderr
    assert started.stdout.count("started (pid") == 2
    try:
        first = _pids(home)
        assert set(first) == {"1", "2"} and all(pid_alive(p) for p in first.values())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            logs = [(home / "logs" / f"worker-{i}.log").read_text() for i in ("1", "2")]
            if all("tasks per thread" in log for log in logs):
                break
            time.sleep(0.5)
        assert all("tasks per thread" in log for log in logs), logs

        status = _run(env, "status")
        assert status.returncode == 0 and "2 of 2 recorded workers running" in status.stdout

        scaled = _run(env, "scale", "1")
        assert scaled.returncode == 0, scaled.stderr
        assert "worker 2 stopped" in scaled.stdout
        assert not pid_alive(first["2"]) and pid_alive(first["1"])
        assert "1 of 1 recorded workers running" in _run(env, "status").stdout
    finally:
        stopped = _run(env, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not any(pid_alive(p) for p in first.values())
    assert _pids(home) == {}
    assert _run(env, "status").stdout.strip().endswith("0 of 0 recorded workers running")
