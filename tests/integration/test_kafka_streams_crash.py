"""Done-when 3: a stateful application survives ``kill -9`` of one instance mid-stream.

Two worker instances run as separate OS processes (``streams_runtime.worker_instance`` with the
per-key count app of ``tests/integration/worker_app.py``: RocksDB + changelog, 2 s sessions),
6 partitions, one thread each. Input is produced continuously (key ``k<i>`` to partition
``i % 6``); mid-stream one instance gets SIGKILL: no commit, no close, no LeaveGroup. The survivor
takes its tasks once the session expires, restores their counts from the changelog and goes on.

At-least-once: the killed instance's input since its last commit is processed again, so the
final count of a key whose task moved is >= what was produced for it (never less: nothing is
lost, and a task that restarted from an empty store would fall far below); a key whose task
stayed on the survivor is counted exactly.
"""

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

from tests.integration.streams_support import latest_until, make_topics, produce_to, wait_until

PARTITIONS = 6
KEYS = [f"k{i}" for i in range(24)]
APP = "tests.integration.worker_app:app"
ROOT = Path(__file__).resolve().parents[2]


class Instance:
    """One ``worker_instance`` process; its output lines are collected."""

    def __init__(self, index: int, bootstrap: str, topics: str, state_dir: Path) -> None:
        self.index = index
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streams_runtime.worker_instance", "--app", APP, "--instance", str(index),
             "--threads", "1", "--bootstrap-servers", bootstrap, "--state-dir", str(state_dir)],
            cwd=ROOT, env={**os.environ, "WORKER_TEST_TOPICS": topics},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.lines.append(line.rstrip("\n"))

    def tasks(self) -> set[int] | None:
        """Partitions of the tasks the instance reported last (on reaching RUNNING)."""
        reports = [line for line in self.lines if "active task(s)" in line]
        if not reports:
            return None
        listed = reports[-1].split("active task(s)")[1]
        return {int(t.split("_")[1]) for t in re.findall(r"\b0_\d+\b", listed)}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def decode(msg) -> tuple[str, int]:  # noqa: ANN001
    return msg.key().decode(), struct.unpack(">q", msg.value())[0]


def test_should_lose_no_input_when_an_instance_is_killed_mid_stream(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("crash-in"), unique_name("crash-out"), unique_name("crash")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    instances = [Instance(i, bootstrap_servers, f"{source},{sink},{app}", tmp_path / f"instance-{i}")
                 for i in range(2)]
    survivor, victim = instances
    produced: Counter = Counter()
    try:
        def split() -> bool:
            tasks = [i.tasks() for i in instances]
            return all(tasks) and sorted(p for t in tasks for p in t) == list(range(PARTITIONS))

        wait_until(split, 45, lambda: "both instances running 3 tasks:\n" + "\n".join(
            survivor.lines + victim.lines))
        kept = survivor.tasks()
        deadline, killed_at = time.monotonic() + 6.0, time.monotonic() + 2.5
        while time.monotonic() < deadline:  # ~48 records per key over 6 s, the kill after 2.5 s
            batch = KEYS * 2
            produce_to(bootstrap_servers, source, [(k.encode(), b"x", int(k[1:]) % PARTITIONS)
                                                   for k in batch])
            produced.update(batch)
            if victim.process.poll() is None and time.monotonic() >= killed_at:
                victim.process.send_signal(signal.SIGKILL)
                victim.process.wait(timeout=10)
            time.sleep(0.25)
        assert victim.process.returncode == -signal.SIGKILL

        stayed = {k for k in KEYS if int(k[1:]) % PARTITIONS in kept}
        moved = set(KEYS) - stayed

        def done(latest: dict) -> bool:
            return (all(latest.get(k, 0) == produced[k] for k in stayed)
                    and all(latest.get(k, 0) >= produced[k] for k in moved))

        latest = latest_until(bootstrap_servers, sink, PARTITIONS, decode, done, timeout=45)
        wait_until(lambda: survivor.tasks() == set(range(PARTITIONS)), 10, "the survivor running every task")
    finally:
        for instance in instances:
            instance.stop()
    assert len(kept) == 3 and moved and stayed
    assert {k: latest.get(k) for k in stayed} == {k: produced[k] for k in stayed}
    short = {k: (latest.get(k), produced[k]) for k in moved if latest.get(k, 0) < produced[k]}
    assert not short, f"lost input for keys whose task moved: {short}\n" + "\n".join(survivor.lines)
    assert survivor.process.returncode == 0, "\n".join(survivor.lines)
