"""AirflowStandalone.stop: SIGTERM to its process group, and to the groups of the task processes
Airflow starts in groups of their own (a Spark task's JVM would otherwise outlive the stop).

Stand-ins: a shell as ``airflow standalone`` (the group leader) with a child in its group, and a
"task" in a session of its own carrying the same ``AIRFLOW_HOME`` (as Airflow's supervisor runs a
task) with a child of its own; one "task" of another home must be left alone."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from streams_runtime.demo.airflow_standalone import AirflowStandalone


def spawn(home: Path) -> subprocess.Popen:
    env = {**os.environ, "AIRFLOW_HOME": str(home)}
    # a shell leading a group of its own, with a child: SIGTERM ends both
    return subprocess.Popen(
        ["sh", "-c", "sleep 60 & wait"], env=env, start_new_session=True, stdin=subprocess.DEVNULL
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


def test_stop_ends_the_group_and_every_task_group_of_its_home(tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    standalone = AirflowStandalone("127.0.0.1:9", home=home, log_file=tmp_path / "log")
    standalone.process = spawn(home)
    task, stranger = spawn(home), spawn(other)
    try:
        time.sleep(0.3)  # the shells' environments are readable
        started = time.monotonic()
        assert standalone.stop(timeout=5) is True
        assert time.monotonic() - started < 5
        task.wait(5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.killpg(task.pid, 0)  # the task's child (its "JVM") too
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the task's group outlived stop()")
        assert alive(stranger.pid), "a task of another AIRFLOW_HOME was stopped"
    finally:
        for process in (task, stranger):
            if process.poll() is None:
                os.killpg(process.pid, 9)
                process.wait()
