"""``streams-runtime worker``: N instance processes x M threads of a real KafkaStreams app."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.streams_support import make_topics, produce, read_latest_until, wait_until

APP = "tests.integration.worker_app:app"


class Launcher:
    """The worker command as a child process, its output collected line by line."""

    def __init__(self, bootstrap: str, topics: str, state_dir: Path, instances: int, threads: int) -> None:
        env = {**os.environ, "WORKER_TEST_TOPICS": topics}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streams_runtime.cli",
                "worker",
                "--app",
                APP,
                "--instances",
                str(instances),
                "--threads",
                str(threads),
                "--bootstrap-servers",
                bootstrap,
                "--state-dir",
                str(state_dir),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        wait_until(lambda: text in self.output, timeout, f"{text!r} in:\n{self.output}")

    def instance_pid(self, index: int) -> int:
        match = re.search(rf"\[worker\] instance {index} started \(pid (\d+)", self.output)
        assert match, self.output
        return int(match.group(1))

    def stop(self, timeout: float = 40.0) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        time.sleep(0.1)  # let the reader thread take the last lines
        return code


def _counts(bootstrap: str, topic: str, expected: dict[str, int]) -> dict[str, int]:
    def decode(msg):
        return msg.key().decode(), struct.unpack(">q", msg.value())[0]

    return read_latest_until(bootstrap, topic, 6, decode, expected, timeout=45)


@pytest.fixture
def topics(bootstrap_servers: str, unique_name) -> tuple[str, str, str]:
    source, output, app_id = unique_name("worker-in"), unique_name("worker-out"), unique_name("worker-app")
    make_topics(bootstrap_servers, **{source: 6, output: 6})
    return source, output, app_id


def test_worker_should_print_the_math_run_every_task_and_close_cleanly_on_sigterm(
    bootstrap_servers: str, topics: tuple[str, str, str], tmp_path: Path
) -> None:
    source, output, _ = topics
    keys = [f"k{i % 20}" for i in range(600)]
    produce(bootstrap_servers, source, ((k.encode(), b"x") for k in keys))
    launcher = Launcher(bootstrap_servers, ",".join(topics), tmp_path, instances=2, threads=2)
    try:
        expected = dict(Counter(keys))
        assert _counts(bootstrap_servers, output, expected) == expected, launcher.output
        launcher.wait_for("[instance 1] state REBALANCING -> RUNNING")
    finally:
        code = launcher.stop()
    out = launcher.output
    assert code == 0, out
    assert f"[worker] source topics: {source} (6 partitions)" in out
    assert "[worker] tasks per thread: 1-2 (6 / 4)" in out and "[worker] idle threads: 0" in out
    assert "[worker] instance 0 closed cleanly" in out and "[worker] instance 1 closed cleanly" in out
    assert (tmp_path / "instance-0").is_dir() and (tmp_path / "instance-1").is_dir()


def test_worker_should_report_a_killed_instance_and_let_the_survivor_take_its_tasks(
    bootstrap_servers: str, topics: tuple[str, str, str], tmp_path: Path
) -> None:
    source, output, _ = topics
    launcher = Launcher(bootstrap_servers, ",".join(topics), tmp_path, instances=2, threads=1)
    try:
        launcher.wait_for("[instance 0] state REBALANCING -> RUNNING")
        launcher.wait_for("[instance 1] state REBALANCING -> RUNNING")
        victim = launcher.instance_pid(1)
        os.kill(victim, signal.SIGKILL)
        launcher.wait_for(f"[worker] instance 1 (pid {victim}) died with exit code -9")
        keys = [f"k{i % 12}" for i in range(240)]
        produce(bootstrap_servers, source, ((k.encode(), b"x") for k in keys))
        expected = dict(Counter(keys))
        assert _counts(bootstrap_servers, output, expected) == expected, launcher.output
    finally:
        code = launcher.stop()
    assert code == 1, launcher.output  # one instance died: the launcher says so in its exit code
    assert "[worker] instance 0 closed cleanly" in launcher.output
