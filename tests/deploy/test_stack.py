"""The production-shaped stack without Docker, end to end, driven as a user would (``make test-stack``).

``scripts/stack.sh up`` (a 3-node Kafka, PostgreSQL, Airflow's four components, a Spark master and
two workers, two stream workers, Prometheus; deploy/stack.env's values with free ports), then:

1. the topics through Airflow's REST API: the provisioning DAG triggered, success, every topic
   on the 3 nodes (replication factor 3);
2. demo payments produced; the workers' totals read back over HTTP (interactive queries, each
   user asked of both workers: a key another instance owns is forwarded);
3. the Spark backfill DAG triggered over a range of those payments with ``publish``: it runs on
   the stack's Spark cluster (its application in the master's list), its Great Expectations suite
   passes, and the published rows are on the publish topic (read committed);
4. the asset event the run emitted, through Airflow's API;
5. the workers' metrics in Prometheus, through its query API;
6. ``scripts/stack.sh down``: exit 0, ``status`` says nothing runs, no process of the stack is
   left, and a second ``down`` is fine.

Marker ``stack``: not part of ``make test`` (several minutes and ~3 GB of memory). The stack starts
its own Kafka (the thing under test), not the session broker of tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from streams_runtime.demo.airflow_standalone import (
    BACKFILL_DAG_ID,
    PASSWORD_FILE,
    PROVISION_DAG_ID,
    AirflowClient,
)
from tests.conditions import wait_until
from tests.deploy.compose_files import STACK_ENV
from tests.ports import free_port, free_ports

pytestmark = [pytest.mark.stack, pytest.mark.timeout(2700)]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "stack.sh"
MARKER = "STREAMS_STACK_HOME"
_TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
RANGE_START = _TODAY - timedelta(days=2)  # inside demo-payments' 7-day retention
RANGE_START_MS = int(RANGE_START.timestamp() * 1000)
PAYMENTS = [
    ("user-a", 10.0, 60_000),
    ("user-b", 2.5, 120_000),
    ("user-a", 5.5, 1_800_000),
    ("user-c", 7.0, 3_700_000),
    ("user-a", 1.0, 3_900_000),
]  # (user, amount, ms after RANGE_START): 4 (user, hour) windows


def _marked(home: Path) -> list[int]:
    wanted, found = f"{MARKER}={home}".encode(), []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if wanted in (proc / "environ").read_bytes().split(b"\0"):
                status = (proc / "status").read_text()
                if "\nState:\tZ" not in status:
                    found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return found


class Stack:
    def __init__(self, home: Path) -> None:
        self.home = home
        base = free_ports(3)  # the workers serve base + 1 and base + 2
        self.env = {
            **os.environ,
            "STACK_HOME": str(home),
            "PYTHON": sys.executable,
            # free ports instead of the file's (the machine may run other things on 8080, ...)
            "POSTGRES_PORT": str(free_port()),
            "AIRFLOW_API_PORT": str(free_port()),
            "SPARK_MASTER_PORT": str(free_port()),
            "SPARK_UI_PORT": str(free_port()),
            "PROMETHEUS_PORT": str(free_port()),
            "STREAM_WORKER_HTTP_PORT": str(base),
        }
        self.times: dict[str, float] = {}
        self.up_output = ""
        self.passed = False

    def run(self, command: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        done = subprocess.run(
            ["bash", str(SCRIPT), command], env=self.env, capture_output=True, text=True, timeout=timeout
        )
        self.times.setdefault(command, time.monotonic() - started)
        return done

    @property
    def secrets(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in (self.home / "secrets.env").read_text().split())

    def airflow(self) -> AirflowClient:
        password = json.loads((self.home / "airflow" / PASSWORD_FILE).read_text())["admin"]
        return AirflowClient(f"http://127.0.0.1:{self.env['AIRFLOW_API_PORT']}", "admin", password)

    def worker_urls(self) -> list[str]:
        base = int(self.env["STREAM_WORKER_HTTP_PORT"])
        return [
            f"http://127.0.0.1:{base + i}" for i in range(1, int(STACK_ENV["STREAM_WORKER_REPLICAS"]) + 1)
        ]

    def bootstrap(self) -> str:
        return str(json.loads((self.home / "broker.json").read_text())["bootstrap_servers"])


def _get(url: str, token: str | None = None) -> Any:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    # PostgreSQL runs as the postgres user: its data directory's parents must be reachable by it
    home = Path(tempfile.mkdtemp(prefix="streams-stack-"))
    home.chmod(0o755)
    stack = Stack(home)
    up = stack.run("up", timeout=1200)
    try:
        assert up.returncode == 0, (up.stdout[-3000:], up.stderr[-5000:])
        stack.up_output = up.stdout
        yield stack
    finally:
        if stack.run("down", timeout=600).returncode != 0 or _marked(home):
            subprocess.run(["bash", str(SCRIPT), "down"], env=stack.env, timeout=600, check=False)
        elif stack.passed:  # a failed run keeps its logs and data for a look
            shutil.rmtree(home, ignore_errors=True)


def test_the_stack_end_to_end_as_a_user(stack: Stack) -> None:
    from confluent_kafka import TopicPartition

    from streams_runtime.kafka.clients import create_admin, create_consumer, create_producer

    started = time.monotonic()
    status = stack.run("status", timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    print(status.stdout)
    client = stack.airflow()
    bootstrap = stack.bootstrap()

    # 1. the topics through Airflow's REST API, on the 3 nodes
    spec = str(stack.home / "topics.yaml")
    run_id, state = client.run_dag(PROVISION_DAG_ID, conf={"spec_file": spec}, timeout=300)
    assert state == "success", client.task_states(PROVISION_DAG_ID, run_id)
    wanted = {t["name"] for t in yaml.safe_load(Path(spec).read_text())["topics"]}
    metadata = create_admin(bootstrap).list_topics(timeout=10).topics
    assert wanted <= set(metadata), sorted(metadata)
    for name in wanted:
        assert all(len(p.replicas) == 3 for p in metadata[name].partitions.values()), name

    # 2. demo payments in, the workers' totals out over HTTP (interactive queries)
    token = stack.secrets["STREAMS_RUNTIME_HTTP_TOKEN"]

    def totals(url: str, user: str) -> tuple[int, int] | None:
        try:
            answer = _get(f"{url}/stores/payment-totals/keys/{user}", token)
        except OSError:  # 404 while the key has no value yet, or not answering
            return None
        value = answer.get("value") if isinstance(answer, dict) else None
        if isinstance(value, dict) and "timestamp" in value:  # the aggregate with its timestamp
            value = value.get("value")
        if isinstance(value, dict) and "count" in value:
            return value["count"], value["total_cents"]
        return None

    expected = {user: totals(stack.worker_urls()[0], user) or (0, 0) for user, _, _ in PAYMENTS}
    producer = create_producer(bootstrap)
    for i, (user, amount, offset_ms) in enumerate(PAYMENTS):
        payment = {"payment_id": i, "user": user, "amount": amount}
        producer.produce(
            "demo-payments",
            key=user.encode(),
            value=json.dumps(payment).encode(),
            timestamp=RANGE_START_MS + offset_ms,
        )
        count, cents = expected[user]
        expected[user] = (count + 1, cents + round(amount * 100))
    assert producer.flush(30) == 0

    for url in stack.worker_urls():
        wait_until(
            lambda url=url: all(totals(url, u) == t for u, t in expected.items()),
            120,
            lambda url=url: f"the totals at {url}: {[totals(url, u) for u in expected]} (want {expected})",
        )

    # 3. the backfill on the Spark cluster, validated and published. Unpausing the DAG also starts
    # its daily scheduled run, whose Spark application competes for the cluster's cores: minutes
    # on a loaded machine, hence the long timeout
    end = RANGE_START + timedelta(hours=2)
    conf = {
        "range_start": f"{RANGE_START:%Y-%m-%dT%H:%M:%SZ}",
        "range_end": f"{end:%Y-%m-%dT%H:%M:%SZ}",
        "chunk_hours": 2,
        "publish": "publish",
        "output_dir": str(stack.home / "backfill"),
    }
    run_id, state = client.run_dag(BACKFILL_DAG_ID, conf=conf, timeout=1500)
    tasks = client.task_states(BACKFILL_DAG_ID, run_id)
    assert state == "success" and tasks.get("backfill[0]") == "success", (
        tasks,
        stack.home / "airflow" / "logs",
    )
    master = _get(f"http://127.0.0.1:{stack.env['SPARK_UI_PORT']}/json/")
    apps = master.get("completedapps", []) + master.get("activeapps", [])
    assert apps, f"no application ran on the stack's Spark master: {master}"
    consumer = create_consumer(bootstrap, "stack-test-reader", read_committed=True)
    parts = metadata["demo-payments-spend-backfill"].partitions
    consumer.assign([TopicPartition("demo-payments-spend-backfill", p, 0) for p in parts])
    published: list[Any] = []
    deadline = time.monotonic() + 60
    while len(published) < 4 and time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is not None and not message.error():
            published.append((message.key() or b"").decode() + " " + message.value().decode())
    consumer.close()
    # user-a twice (two hourly windows), user-b, user-c
    users = sorted(next((u for u in expected if u in record), "?") for record in published)
    assert users == ["user-a", "user-a", "user-b", "user-c"], published

    # 4. the asset events of that run, through Airflow's API
    query = urllib.parse.urlencode({"source_dag_id": BACKFILL_DAG_ID, "source_run_id": run_id})
    events = client.request("GET", f"/api/v2/assets/events?{query}")["asset_events"]
    uris = {e.get("uri") for e in events}
    assert any(str(u).endswith("/demo-payments-spend-backfill") for u in uris), events

    # 5. the workers' metrics in Prometheus
    prometheus = f"http://127.0.0.1:{stack.env['PROMETHEUS_PORT']}/api/v1/query?query="

    def scraped(expr: str) -> list[dict[str, Any]]:
        return _get(prometheus + urllib.parse.quote(expr))["data"]["result"]

    instances = {u.removeprefix("http://") for u in stack.worker_urls()}
    wait_until(
        lambda: {r["metric"]["instance"] for r in scraped('up{job="stream-worker"} == 1')} == instances,
        90,
        lambda: f"Prometheus scraping {instances}: {scraped('up')}",
        interval=2.0,
    )
    threads = scraped("sum by (instance) (kafka_streams_alive_stream_threads)")
    assert {r["metric"]["instance"] for r in threads} == instances, threads
    assert all(float(r["value"][1]) == int(STACK_ENV["STREAM_WORKER_THREADS"]) for r in threads), threads
    stack.times["test"] = time.monotonic() - started

    # 6. down: everything gone, and again
    down = stack.run("down", timeout=600)
    assert down.returncode == 0, (down.stdout, down.stderr)
    assert not _marked(stack.home), f"left running: {_marked(stack.home)}"
    stopped = stack.run("status", timeout=60)
    assert stopped.returncode == 3, stopped.stdout
    again = subprocess.run(
        ["bash", str(SCRIPT), "down"], env=stack.env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    memory = next((line for line in stack.up_output.splitlines() if "resident memory" in line), "?")
    print("stack: up {up:.0f}s, test {test:.0f}s, down {down:.0f}s".format(**stack.times), "|", memory)
    stack.passed = True
