"""The four DAGs triggered from Airflow's own UI with their defaults, in headless Chromium.

``airflow standalone`` runs against the session broker (as ``streams-runtime demo --with-airflow``
starts it); Playwright drives Debian's chromium: log in, open each DAG, press Trigger, submit the
form as it comes, and wait (through the REST API) for the run to succeed. Before the forms:
demo payments in yesterday's data interval (what the backfill's manual run covers) and a demo
application worker serving its HTTP API (what the rebuild's ``streams_worker`` Connection points
at). Screenshots of the four forms and the finished backfill with its Data Docs link go to
``docs/airflow/``.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from streams_runtime.demo.airflow_standalone import AirflowStandalone

# a few minutes on an idle 2-core machine (Airflow's start, two Spark sessions); more under load
pytestmark = [pytest.mark.airflow, pytest.mark.kafka, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "docs" / "airflow"
DAGS = [
    "streams_provision_topics",
    "streams_spark_backfill",
    "streams_changelog_compaction_check",
    "streams_state_rebuild",
]


def yesterday_noon_ms() -> int:
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return int((today - timedelta(hours=12)).timestamp() * 1000)


@pytest.fixture
def demo_worker(bootstrap_servers: str, tmp_path: Path):
    """The demo application with its HTTP API (started once the provisioning DAG made its topics)."""
    from streams_runtime import KafkaStreams
    from streams_runtime.demo.app import CONFIG, payments_topology

    started = []

    def start(port: int, token: str) -> str:
        config = {
            **CONFIG,
            "bootstrap_servers": bootstrap_servers,
            "state_dir": str(tmp_path / "state"),
            "application_server": f"127.0.0.1:{port}",
            "application_server_token": token,
        }
        streams = KafkaStreams(payments_topology(config), config)
        streams.start()
        started.append(streams)
        return f"http://127.0.0.1:{port}"

    yield start
    for streams in started:
        streams.close()


@pytest.fixture
def airflow(airflow_standalone: AirflowStandalone) -> AirflowStandalone:
    """The session's ``airflow standalone`` (tests/dags/conftest.py): its ``streams_worker``
    Connection points at ``worker_port`` with the token ``worker_token``."""
    return airflow_standalone


def produce_demo_payments(bootstrap_servers: str, at_ms: int) -> int:
    from streams_runtime.kafka.clients import create_producer

    producer = create_producer(bootstrap_servers)
    rows = [("alice", 12.5), ("bob", 3.0), ("alice", 7.25), ("carol", 20.0), ("bob", 1.0)]
    for i, (user, amount) in enumerate(rows):
        payment = {"payment_id": i, "user": user, "amount": amount}
        producer.produce("demo-payments", json.dumps(payment).encode(), user.encode(), timestamp=at_ms + i)
    assert producer.flush(30) == 0
    return len(rows)


def latest_run(client, dag_id: str, known: set[str], timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = client.request("GET", f"/api/v2/dags/{dag_id}/dagRuns?order_by=-run_after&limit=5")
        fresh = [r["dag_run_id"] for r in runs["dag_runs"] if r["dag_run_id"] not in known]
        if fresh:
            return fresh[0]
        time.sleep(0.5)
    raise AssertionError(f"no new run of {dag_id} after submitting its form")


def submit_form(page, url: str, dag_id: str, shot: Path) -> None:
    page.goto(f"{url}/dags/{dag_id}")
    page.get_by_role("button", name="Trigger").first.click()
    dialog = page.get_by_role("dialog")
    dialog.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)  # the form renders its Params after the DAG details load
    page.screenshot(path=str(shot), full_page=True)
    dialog.get_by_role("button", name="Trigger").last.click()
    page.get_by_text("Dag Run Triggered").first.wait_for(timeout=30_000)


def test_each_dag_runs_from_its_trigger_form_with_defaults(
    airflow: AirflowStandalone, demo_worker, bootstrap_servers: str
) -> None:
    from playwright.sync_api import sync_playwright

    client = airflow.wait_ready(timeout=150)
    for dag_id in DAGS:
        client.wait_for_dag(dag_id)
        client.unpause(dag_id)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 2000})
        page = context.new_page()
        page.goto(airflow.url)
        page.get_by_label("Username").fill(airflow.username)
        page.get_by_label("Password").fill(airflow.password())
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda u: "login" not in u, timeout=30_000)
        for dag_id in DAGS:
            if dag_id == "streams_spark_backfill":
                produce_demo_payments(bootstrap_servers, yesterday_noon_ms())
            if dag_id == "streams_changelog_compaction_check":
                # the streams_worker Connection points at it
                demo_worker(airflow.worker_port, airflow.worker_token)
            known = {
                r["dag_run_id"]
                for r in client.request("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100")["dag_runs"]
            }
            submit_form(page, airflow.url, dag_id, SHOTS / f"trigger_{dag_id}.png")
            run_id = latest_run(client, dag_id, known)
            state = client.wait_for_run(dag_id, run_id, timeout=600)
            assert state == "success", (dag_id, client.task_states(dag_id, run_id), airflow.log_file)
            if dag_id == "streams_spark_backfill":
                tasks = client.task_states(dag_id, run_id)
                assert tasks["backfill[0]"] == "success", tasks
                page.goto(f"{airflow.url}/dags/{dag_id}/runs/{run_id}/tasks/backfill/mapped/0/details")
                link = page.get_by_role("link", name="Data Docs").first
                link.wait_for(timeout=30_000)
                href = link.get_attribute("href")
                assert href.startswith("/data-docs/") and "/data_docs/validations/" in href, href
                page.screenshot(path=str(SHOTS / "backfill_finished_with_data_docs.png"))
                docs = context.new_page()  # the report, served to the logged-in user
                response = docs.goto(airflow.url + href)
                assert response.status == 200 and "payments_windowed_spend" in docs.content()
                docs.close()
                anonymous = browser.new_page()  # no login, no report
                assert anonymous.goto(airflow.url + href).status == 401
                anonymous.close()
                # unpausing started the scheduled run of the last complete day: it must not fail
                scheduled = [
                    r
                    for r in client.request("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=10")["dag_runs"]
                    if r["run_type"] == "scheduled"
                ]
                for run in scheduled:
                    final = client.wait_for_run(dag_id, run["dag_run_id"], timeout=600)
                    assert final == "success", client.task_states(dag_id, run["dag_run_id"])
        browser.close()
