"""The README's main-job command, run as a user runs it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streams_runtime.brokers import pid_alive

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "STREAMS_RUNTIME_HOME": str(home)}
    env.pop("BOOTSTRAP_SERVERS", None)
    return env


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_demo_should_count_every_payment_per_user_with_two_worker_instances(
    broker_kind: str, tmp_path: Path
) -> None:
    """The main job on each broker it can start (``--broker tansu``, the default, or ``kafka``)."""
    result = subprocess.run(
        [sys.executable, "-m", "streams_runtime.cli", "demo", "--records", "300", "--broker", broker_kind],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    started = {"kafka": "(Apache Kafka; logs", "tansu": "(embedded Tansu broker; logs"}
    assert "[demo] Kafka at 127.0.0.1:" in out and started[broker_kind] in out
    assert "tasks per thread: 1 (4 / 4)" in out and "idle threads: 0" in out
    assert "produced 300 payments for 5 users" in out
    # The final table is read from the results topic the workers wrote; the demo checks it
    # against its ledger of produced payments (count and total, per user) before saying OK.
    assert "OK: final per-user counts equal the produced payments (300 payments, 5 users)" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("user-")]
    assert len(rows) == 5 and sum(int(row[1]) for row in rows) == 300
    # Both instances ran tasks and closed their KafkaStreams cleanly.
    # The demo produces once both instances are RUNNING and own all four tasks between them.
    owners = re.search(r"workers running: instance 0: (.+); instance 1: (.+)", out)
    assert owners, out
    assert sorted(owners.group(1).split() + owners.group(2).split()) == ["0_0", "0_1", "0_2", "0_3"]
    # Interactive queries through instance 0's HTTP API: every user's total, each answered by the
    # instance that owns the key's partition (instance 0 forwards the others' keys).
    base = int(re.search(r"through instance 0: GET http://127\.0\.0\.1:(\d+)/", out).group(1))
    owner_of = {int(t.split("_")[1]): i for i in (0, 1) for t in owners.group(i + 1).split()}
    answers = re.findall(
        r"\[demo\]   (user-\d): count (\d+), .*\(partition (\d), answered by "
        r"127\.0\.0\.1:(\d+)\) ok",
        out,
    )
    assert sorted(a[0] for a in answers) == [f"user-{i}" for i in range(5)], out
    assert sum(int(a[1]) for a in answers) == 300
    assert all(int(port) == base + owner_of[int(p)] for _, _, p, port in answers), answers
    assert "WRONG" not in out
    assert "[worker] instance 0 closed cleanly" in out and "[worker] instance 1 closed cleanly" in out
    assert "stopped cleanly" in out


def test_demo_should_keep_running_until_interrupted_then_stop_the_broker(tmp_path: Path) -> None:
    demo = subprocess.Popen(
        [sys.executable, "-m", "streams_runtime.cli", "demo", "--records", "50", "--keep-running"],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    assert demo.stdout is not None
    while time.monotonic() < deadline:
        line = demo.stdout.readline()
        if not line and demo.poll() is not None:
            break  # the demo ended on its own: the assertions below show its output
        lines.append(line)
        if "payments so far" in line:
            break
    children = _children(demo.pid)
    assert len(children) == 3, (
        "the demo should run an embedded broker and two worker instances; its output:\n" + "".join(lines)
    )
    demo.send_signal(signal.SIGINT)
    rest, _ = demo.communicate(timeout=45)
    output = "".join(lines) + rest
    assert demo.returncode == 0, output
    assert "interrupted; stopping" in output and "stopped cleanly" in output
    assert "[worker] instance 0 closed cleanly" in output and "[worker] instance 1 closed cleanly" in output
    assert not any(pid_alive(pid) for pid in children)
