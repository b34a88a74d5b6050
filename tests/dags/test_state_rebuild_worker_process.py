"""The state-rebuild DAG against a worker PROCESS (``python -m streams_runtime.worker_instance
--http-port``), the way workers run in production: the DAG reaches its HTTP API by URL with the
bearer token, rebuilds both of its tasks, and the worker keeps running afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from tests.dags.conftest import REPO
from tests.dags.test_state_rebuild_dag import (  # noqa: F401 - the autouse token connection
    APP,
    DAG_ID,
    STORE,
    TOKEN,
    free_port,
    worker_token_connection,
)

pytestmark = pytest.mark.kafka


@pytest.fixture
def worker_process(bootstrap_servers, unique_name, tmp_path, monkeypatch):
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics
    from tests.conditions import wait_committed
    from tests.integration.streams_support import latest_until, wait_until

    names = {"input": unique_name("rbp-pay"), "output": unique_name("rbp-tot"), "app": unique_name("rbp-app")}
    create_topics(
        create_admin(bootstrap_servers), [TopicSpec(names["input"], 2), TopicSpec(names["output"], 2)]
    )
    producer = create_producer(bootstrap_servers)
    for i in range(40):
        user = f"user-{i % 10}"
        payment = {"payment_id": i, "user": user, "amount": 2.5}
        producer.produce(names["input"], json.dumps(payment).encode(), user.encode(), partition=i % 2)
    assert producer.flush(30) == 0
    port = free_port()
    monkeypatch.setenv("REBUILD_TEST_APP", f"{names['input']},{names['output']},{names['app']}")  # both sides
    env = {**os.environ, "REBUILD_TEST_TOKEN": TOKEN}
    command = [sys.executable, "-m", "streams_runtime.worker_instance", "--app", APP, "--instance", "0"]
    command += [
        "--threads",
        "2",
        "--bootstrap-servers",
        bootstrap_servers,
        "--state-dir",
        str(tmp_path / "state"),
    ]
    command += ["--http-port", str(port)]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    threading.Thread(
        target=lambda: lines.extend(line.rstrip() for line in process.stdout), daemon=True
    ).start()
    try:
        wait_until(
            lambda: any("-> RUNNING" in line for line in lines), 60, lambda: f"RUNNING; output: {lines}"
        )
        totals = latest_until(
            bootstrap_servers,
            names["output"],
            2,
            lambda m: (m.key().decode(), json.loads(m.value())["count"]),
            lambda d: sum(d.values()) == 40 and len(d) == 10,
        )
        assert sum(totals.values()) == 40
        wait_committed(bootstrap_servers, names["app"], names["input"], 2)
        yield f"http://127.0.0.1:{port}", process, lines
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_dag_rebuilds_the_tasks_of_a_worker_process_over_its_http_api(run_dag, worker_process) -> None:
    url, process, lines = worker_process
    run = run_dag(DAG_ID, application=APP, store=STORE, workers=[url], rebuild_timeout=60)
    assert run.state == "success", (run.task_states(), lines[-20:])
    tasks = run.xcom("report")["tasks"]
    assert [t["task_id"] for t in tasks] == ["0_0", "0_1"]
    assert all(t["ok"] and t["store_key_count"] == t["changelog_live_keys"] == 5 for t in tasks)
    assert all(t["records_restored"] >= 5 for t in tasks)
    assert process.poll() is None, lines[-20:]  # the worker runs on
