"""The worker launcher's ``--http-port``: instance i serves the HTTP API on port+i.

``streams-runtime worker --instances 2 --http-port P`` (as processes, the per-key count of
``worker_app``): both instances become ready on P and P+1, each answers every key (its own, and
the other's through forwarding, signed with the secret the launcher passes on), both expose
/metrics, and SIGTERM closes everything cleanly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from streams_runtime.worker import FORWARDING_SECRET_ENV
from tests.integration.streams_support import make_topics, produce, wait_until
from tests.ports import free_ports

PARTITIONS = 4
KEYS = [f"k{i}" for i in range(20)]
ROOT = Path(__file__).resolve().parents[2]


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0


def test_should_serve_each_instance_api_on_its_own_port(kafka_broker, unique_name, tmp_path):
    source, output, app_id = unique_name("http-in"), unique_name("http-out"), unique_name("http-app")
    make_topics(kafka_broker, **{source: PARTITIONS, output: PARTITIONS})
    produce(kafka_broker, source, ((k.encode(), b"v") for i, k in enumerate(KEYS) for _ in range(i % 3 + 1)))
    port = free_ports(2)
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streams_runtime.cli",
            "worker",
            "--app",
            "tests.integration.worker_app:app",
            "--instances",
            "2",
            "--bootstrap-servers",
            kafka_broker,
            "--state-dir",
            str(tmp_path / "state"),
            "--http-port",
            str(port),
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "WORKER_TEST_TOPICS": f"{source},{output},{app_id}",
            FORWARDING_SECRET_ENV: "worker-http-forwarding-secret-of-32-bytes",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    out = launcher.stdout
    threading.Thread(target=lambda: lines.extend(line.rstrip() for line in out), daemon=True).start()
    expected = {k: i % 3 + 1 for i, k in enumerate(KEYS)}

    def counts_right(p: int) -> bool:
        for key, count in expected.items():
            r = httpx.get(f"http://127.0.0.1:{p}/stores/counts/keys/{key}", timeout=10)
            if r.status_code != 200 or r.json()["value"]["value"] != count:
                return False
        return True

    try:
        for p in (port, port + 1):
            wait_until(
                lambda p=p: _status(f"http://127.0.0.1:{p}/health/ready") == 200,
                60,
                lambda p=p: f"instance on port {p} ready; output: {lines[-10:]}",
            )
        for p in (port, port + 1):
            wait_until(lambda p=p: counts_right(p), 45, f"every key answered through port {p}")
            metrics = httpx.get(f"http://127.0.0.1:{p}/metrics", timeout=10).text
            assert "kafka_streams_stream_thread_process_total" in metrics
        assert any(f"HTTP API on http://127.0.0.1:{port}" in line for line in lines), lines
        assert any(f"HTTP API on http://127.0.0.1:{port + 1}" in line for line in lines), lines
    finally:
        launcher.send_signal(signal.SIGTERM)
        code = launcher.wait(timeout=60)
    assert code == 0, lines
    assert _status(f"http://127.0.0.1:{port}/health/live") == 0  # the servers stopped with the instances
