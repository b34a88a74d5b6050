"""scripts/spark_cluster.sh without starting a JVM: its usage error and its status of a cluster
that does not run (tests/dags/test_spark_backfill_cluster.py starts a real one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "spark_cluster.sh"


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SPARK_CLUSTER_DIR": str(home),
        "PYTHON": sys.executable,
        "SPARK_MASTER_WEBUI_PORT": "1",
    }
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)


def test_an_unknown_command_names_the_allowed_ones(tmp_path: Path) -> None:
    done = run("restart", home=tmp_path)
    assert done.returncode == 1 and "usage:" in done.stderr and "start|stop|status" in done.stderr
    assert "'restart'" in done.stderr


def test_status_of_a_cluster_that_is_not_running_fails_and_stop_is_a_no_op(tmp_path: Path) -> None:
    status = run("status", home=tmp_path)
    assert status.returncode == 3, status.stdout + status.stderr
    assert "0 worker(s) ALIVE" in status.stdout
    assert [line for line in status.stdout.splitlines() if "not running" in line] == [
        "[spark-cluster] master not running",
        "[spark-cluster] worker-1 not running",
        "[spark-cluster] worker-2 not running",
    ]
    assert run("stop", home=tmp_path).returncode == 0
