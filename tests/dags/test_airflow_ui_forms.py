"""The four DAGs triggered from Airflow's own UI with their defaults, in headless Chromium.

``airflow standalone`` runs against the session broker as ``streams-runtime demo --with-airflow``
starts it (its ``streams_worker`` Connection is a worker's HTTP API); the test adds what the demo
has: the demo's payments timestamped yesterday (UTC, what the backfill's manual run covers, written
by the demo's own function) and the demo application on two instances serving their HTTP API (one
of them at the Connection's address). Playwright drives Debian's chromium: log in, open each DAG,
press Trigger, submit the form as it comes, and wait (through the REST API) for the run to
succeed, then check what each run shows: the backfill's rows and its Data Docs report, opened from
the run page's "Data Docs" tab, rendered with its styles and without one request to another host
(and its address in the task log); the rebuild's report of every partition, across both
instances. Screenshots of the four forms and the finished backfill go to ``docs/airflow/``.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import pytest

from streams_runtime.demo.airflow_standalone import AirflowStandalone
from tests.dags.airflow_runs import wait_scheduled_runs

# a few minutes on an idle 2-core machine (Airflow's start, two Spark sessions); under a load average
# of 30 on 2 cores Airflow alone took 5 minutes to answer
pytestmark = [pytest.mark.airflow, pytest.mark.kafka, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "docs" / "airflow"
DAGS = [
    "streams_provision_topics",
    "streams_spark_backfill",
    "streams_changelog_compaction_check",
    "streams_state_rebuild",
]


@pytest.fixture
def airflow(airflow_standalone: AirflowStandalone) -> AirflowStandalone:
    """The session's ``airflow standalone`` (tests/dags/conftest.py): its ``streams_worker``
    Connection points at ``worker_port`` with the token ``worker_token``."""
    return airflow_standalone


@pytest.fixture
def demo_workers(bootstrap_servers: str, tmp_path: Path):
    """The demo application on two instances with their HTTP API (started once the provisioning
    DAG made its topics): instance 0 at the given port, instance 1 on a free one."""
    from streams_runtime import KafkaStreams
    from streams_runtime.demo.app import CONFIG, payments_topology
    from tests.ports import free_port

    started = []

    def start(port: int, token: str) -> list[str]:
        for index, http_port in enumerate((port, free_port())):
            config = {
                **CONFIG,
                "bootstrap_servers": bootstrap_servers,
                "state_dir": str(tmp_path / f"state-{index}"),
                "application_server": f"127.0.0.1:{http_port}",
                "application_server_token": token,
            }
            streams = KafkaStreams(payments_topology(config), config)
            streams.start()
            started.append(streams)
        return [str(s.config["application_server"]) for s in started]

    yield start
    for streams in started:
        streams.close()


def produce_demo_payments(bootstrap_servers: str) -> int:
    """What the demo writes for the backfill: payments timestamped over yesterday (UTC)."""
    import random

    from streams_runtime.demo.results import Ledger
    from streams_runtime.demo.run import produce_yesterday
    from streams_runtime.kafka.clients import create_producer

    producer = create_producer(bootstrap_servers, {"partitioner": "murmur2_random"})
    ledger = Ledger()
    produce_yesterday(producer, random.Random(7), ledger, n=24)
    return ledger.payments


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


def xcom(client, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> object:
    quoted = urllib.parse.quote(run_id, safe="")
    path = f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances/{task_id}/xcomEntries/return_value"
    return client.request("GET", f"{path}?map_index={map_index}&deserialize=true")["value"]


def task_log(client, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> str:
    """The log of the task instance's last try (on a loaded machine a first try can be lost)."""
    base = f"/api/v2/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id, safe='')}/taskInstances/{task_id}"
    tries = client.request("GET", base if map_index < 0 else f"{base}/{map_index}")["try_number"]
    return json.dumps(client.request("GET", f"{base}/logs/{tries}?map_index={map_index}"))


def check_backfill(client, page, airflow: AirflowStandalone, run_id: str, payments: int) -> None:
    """Rows written; the run page's "Data Docs" tab shows the report styled, with no request to
    another host; the task log prints the report's address."""
    dag_id = "streams_spark_backfill"
    result = xcom(client, dag_id, run_id, "backfill", 0)
    assert result["rows"] > 0 and result["source_records"] == payments, result
    assert f"{airflow.url}/data-docs/" in task_log(client, dag_id, run_id, "backfill", 0)
    remote: list[str] = []

    def record(url: str) -> None:  # blob: and data: URLs are the page's own
        parsed = urlparse(url)
        if parsed.scheme not in ("blob", "data") and parsed.hostname != "127.0.0.1":
            remote.append(url)

    page.on("request", lambda r: record(r.url))
    page.goto(f"{airflow.url}/dags/{dag_id}/runs/{run_id}")
    page.get_by_role("tab", name="Data Docs").or_(page.get_by_role("link", name="Data Docs")).first.click()
    report = page.frame_locator("iframe").first
    report.get_by_text("payments_windowed_spend").first.wait_for(timeout=60_000)
    # the tab's page redirects to the run's one report; its styles, scripts and images are loaded
    # by its load event (the UI around it keeps polling the API: no network idle to wait for)
    frame = next(f for f in page.frames if "/data-docs/" in f.url)
    frame.wait_for_load_state("load")
    assert "/data_docs/validations/" in frame.url, frame.url
    # Bootstrap's styles, served locally: the navbar is a flex box, the body in its font stack
    assert frame.evaluate("getComputedStyle(document.querySelector('nav.navbar')).display") == "flex"
    assert "Segoe UI" in frame.evaluate("getComputedStyle(document.body).fontFamily")
    assert frame.evaluate("getComputedStyle(document.querySelector('.fa-check-circle'), '::before').content")
    page.screenshot(path=str(SHOTS / "backfill_finished_with_data_docs.png"))
    assert remote == [], remote
    anonymous = page.context.browser.new_page()  # no login, no report
    assert anonymous.goto(frame.url).status == 401
    anonymous.close()


def check_rebuild(client, run_id: str, endpoints: list[str]) -> None:
    """Every partition of the store rebuilt once, each by the instance owning it."""
    report = xcom(client, "streams_state_rebuild", run_id, "report")
    tasks = report["tasks"]
    assert sorted(t["task_id"] for t in tasks) == [f"0_{p}" for p in range(4)], tasks
    assert all(t["ok"] for t in tasks), tasks
    assert {t["endpoint"].split("://")[-1] for t in tasks} == set(endpoints), (tasks, endpoints)


def test_each_dag_runs_from_its_trigger_form_with_defaults(
    airflow: AirflowStandalone, demo_workers, bootstrap_servers: str
) -> None:
    from playwright.sync_api import sync_playwright

    client = airflow.wait_ready(timeout=600)
    for dag_id in DAGS:
        client.wait_for_dag(dag_id)
        client.unpause(dag_id)
    SHOTS.mkdir(parents=True, exist_ok=True)
    payments, endpoints = 0, []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 2000})
        # the UI's first load (its bundle) takes long on a loaded 2-core machine
        context.set_default_navigation_timeout(120_000)
        context.set_default_timeout(60_000)
        page = context.new_page()
        page.goto(airflow.url)
        page.get_by_label("Username").fill(airflow.username)
        page.get_by_label("Password").fill(airflow.password())
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda u: "login" not in u, timeout=30_000)
        for dag_id in DAGS:
            if dag_id == "streams_spark_backfill":
                # unpausing started the scheduled run of the last complete day (yesterday): it
                # finishes (no data yet: skipped) before the payments go in, so that only the
                # manual run of the form reads them
                wait_scheduled_runs(client, dag_id)
                payments = produce_demo_payments(bootstrap_servers)
            if dag_id == "streams_changelog_compaction_check":
                # instance 0 at the streams_worker Connection's address
                endpoints = demo_workers(airflow.worker_port, airflow.worker_token)
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
                check_backfill(client, context.new_page(), airflow, run_id, payments)
            if dag_id == "streams_state_rebuild":
                check_rebuild(client, run_id, endpoints)
        # "Run Backfill" over yesterday creates its run (a day is backfilled once it is over);
        # over today, still running, it creates none (Airflow backfills complete intervals only)
        today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        for day, expected in ((today - timedelta(days=1), 1), (today, 0)):
            body = {
                "dag_id": "streams_spark_backfill",
                "from_date": day.isoformat(),
                "to_date": day.isoformat(),
                "reprocess_behavior": "completed",
            }
            dry = client.request("POST", "/api/v2/backfills/dry_run", body)
            assert dry["total_entries"] == expected, (day, dry)
        browser.close()
