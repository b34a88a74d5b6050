"""The README's main-job command, run as a user runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from streams_runtime.kafka.broker import pid_alive


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "STREAMS_RUNTIME_HOME": str(home)}
    env.pop("BOOTSTRAP_SERVERS", None)
    return env


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_demo_should_produce_consume_and_report_every_payment(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "streams_runtime.cli", "demo", "--records", "300"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "produced 300 payments, consumed 300" in result.stdout
    assert "OK: every produced payment was consumed exactly once" in result.stdout
    counts = [int(line.split()[1]) for line in result.stdout.splitlines() if line.strip().startswith("user-")]
    assert sum(counts) == 300


def test_demo_should_keep_running_until_interrupted_then_stop_the_broker(tmp_path: Path) -> None:
    demo = subprocess.Popen(
        [sys.executable, "-m", "streams_runtime.cli", "demo", "--records", "50", "--keep-running"],
        env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    assert demo.stdout is not None
    while time.monotonic() < deadline:
        line = demo.stdout.readline()
        lines.append(line)
        if "payments so far" in line:
            break
    brokers = _children(demo.pid)
    assert brokers, "the demo should have started an embedded broker as its child"
    demo.send_signal(signal.SIGINT)
    rest, _ = demo.communicate(timeout=30)
    output = "".join(lines) + rest
    assert demo.returncode == 0, output
    assert "interrupted; stopping" in output and "stopped cleanly" in output
    assert not any(pid_alive(pid) for pid in brokers)
