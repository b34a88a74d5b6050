"""``airflow standalone`` end to end: the REST API (the one the UI uses) drives the repo's DAGs.

Starts ``airflow standalone`` through :mod:`streams_runtime.demo.airflow_standalone` (as
``streams-runtime demo --with-airflow`` does) against the session broker, triggers the topic
provisioning DAG through ``/api/v2`` and checks the topics exist, then produces a few demo payments
at known timestamps of a recent day and triggers the Spark backfill DAG for that range with
``scripts/trigger_backfill.py``, and checks the run succeeded and wrote the known answer; runs the
example range of docs/how-to/airflow-and-spark.md (no data: skipped, the run succeeds); and runs
Airflow's own backfill (``airflow backfill create``, the documented way to run a range) over a day
holding payments and checks its run succeeded and wrote that day's answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from streams_runtime.demo.airflow_standalone import BACKFILL_DAG_ID, PROVISION_DAG_ID, AirflowStandalone
from tests.dags.airflow_runs import wait_scheduled_runs

pytestmark = [pytest.mark.airflow, pytest.mark.kafka, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
SPEC_TOPICS = {
    "demo-payments",
    "demo-user-totals",
    "demo-payments-spend-backfill",
    "demo-payments-dlq",
    "demo-payments-app-payment-totals-changelog",
}
# Days in the recent past, inside demo-payments' 7-day retention (dags/specs/topics.yaml: Apache
# Kafka deletes older records at its next retention check) and away from the UI-forms test's data
# (yesterday): the backfill range 4 days ago, 00:00-02:00 UTC, and Airflow's own backfill 3 days ago.
_TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
RANGE_START = _TODAY - timedelta(days=4)
NATIVE_DAY = _TODAY - timedelta(days=3)
RANGE_START_MS = int(RANGE_START.timestamp() * 1000)
NATIVE_DAY_MS = int(NATIVE_DAY.timestamp() * 1000)
PAYMENTS = [
    ("user-a", 10.0, 60_000),
    ("user-b", 2.5, 120_000),
    ("user-a", 5.5, 1_800_000),
    ("user-c", 7.0, 3_700_000),
    ("user-a", 1.0, 3_900_000),
]  # (user, amount, ms after start)


@pytest.fixture
def airflow(airflow_standalone: AirflowStandalone) -> AirflowStandalone:
    """The session's ``airflow standalone`` (tests/dags/conftest.py), shared with the UI-forms test."""
    return airflow_standalone


def test_standalone_runs_provisioning_and_a_backfill_through_the_rest_api(
    airflow: AirflowStandalone, bootstrap_servers: str, tmp_path: Path
) -> None:
    from streams_runtime.kafka.clients import create_admin, create_producer, partition_counts

    started = time.monotonic()
    client = airflow.wait_ready(timeout=120)
    ready_s = time.monotonic() - started

    # provisioning through /api/v2: unpause, trigger, wait
    run_id, state = client.run_dag(PROVISION_DAG_ID, timeout=90)
    assert state == "success", (client.task_states(PROVISION_DAG_ID, run_id), airflow.log_file)
    assert set(partition_counts(create_admin(bootstrap_servers), SPEC_TOPICS)) == SPEC_TOPICS

    # what the UI's connection form is built from: the provider's type, and the Kafka provider's
    forms = {m["connection_type"]: m for m in client.request("GET", "/ui/connections/hook_meta")}
    assert forms["streams_worker"]["hook_class_name"] == "streams_ops.hooks.streams_worker.StreamsWorkerHook"
    assert forms["streams_worker"]["standard_fields"]["password"]["title"] == "Token"
    assert forms["streams_worker"]["standard_fields"]["login"]["hidden"] is True
    assert "kafka" in forms, sorted(forms)

    # unpaused, the backfill DAG runs the last complete day first (scheduled); one run at a time,
    # so the runs below would wait behind it: let it finish (the UI-forms test may have done this)
    client.wait_for_dag(BACKFILL_DAG_ID)
    client.unpause(BACKFILL_DAG_ID)
    wait_scheduled_runs(client, BACKFILL_DAG_ID)

    # a few demo payments in a known range, then the backfill DAG through the script
    producer = create_producer(bootstrap_servers)
    for i, (user, amount, offset_ms) in enumerate(PAYMENTS):
        payment = {"payment_id": i, "user": user, "amount": amount}
        producer.produce(
            "demo-payments",
            key=user.encode(),
            value=json.dumps(payment).encode(),
            timestamp=RANGE_START_MS + offset_ms,
        )
    assert producer.flush(30) == 0
    output = tmp_path / "backfill"
    script = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "trigger_backfill.py"),
            "--url",
            airflow.url,
            "--user",
            airflow.username,
            "--password",
            airflow.password(),
            "--start",
            f"{RANGE_START:%Y-%m-%dT%H:%M:%SZ}",
            "--end",
            f"{RANGE_START + timedelta(hours=2):%Y-%m-%dT%H:%M:%SZ}",
            "--chunk-hours",
            "2",
            "--output-dir",
            str(output),
            "--timeout",
            "400",
        ],
        capture_output=True,
        text=True,
        timeout=450,
    )
    assert script.returncode == 0, (script.stdout, script.stderr, airflow.log_file)
    assert "streams_spark_backfill run" in script.stdout and ": success after" in script.stdout
    assert "task backfill[0]: success" in script.stdout

    parquet = list(
        output.glob(f"interval_id={RANGE_START:%Y%m%d}T000000Z_{RANGE_START:%Y%m%d}T020000Z/*.parquet")
    )
    assert parquet, list(output.rglob("*"))
    import pandas as pd

    rows = pd.concat(pd.read_parquet(p) for p in parquet)
    assert len(rows) == 4  # user-a twice (two hourly windows), user-b, user-c
    # the example of docs/how-to/airflow-and-spark.md, as written: a day without demo data is
    # skipped, and the run succeeds
    documented = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "trigger_backfill.py"),
            "--url",
            airflow.url,
            "--user",
            airflow.username,
            "--password",
            airflow.password(),
            "--start",
            "2026-01-01T00:00:00Z",
            "--end",
            "2026-01-02T00:00:00Z",
        ],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert documented.returncode == 0, (documented.stdout, documented.stderr, airflow.log_file)
    assert "task backfill[0]: skipped" in documented.stdout and "no input records" in documented.stdout, (
        documented.stdout
    )

    # Airflow's own backfill over a day that holds payments: one run of the daily schedule
    for i, (user, amount, offset_ms) in enumerate(PAYMENTS):
        payment = {"payment_id": 100 + i, "user": user, "amount": amount}
        producer.produce(
            "demo-payments", json.dumps(payment).encode(), user.encode(), timestamp=NATIVE_DAY_MS + offset_ms
        )
    assert producer.flush(30) == 0
    native_out = tmp_path / "native"
    create = [
        str(Path(sys.executable).parent / "airflow"),
        "backfill",
        "create",
        "--dag-id",
        BACKFILL_DAG_ID,
        "--from-date",
        f"{NATIVE_DAY:%Y-%m-%d}",
        "--to-date",
        f"{NATIVE_DAY:%Y-%m-%d}",
        "--dag-run-conf",
        json.dumps({"output_dir": str(native_out)}),
    ]
    # The demo's Airflow runs on SQLite, one writer at a time: the CLI's transaction, begun as a
    # reader, can be refused at once ("database is locked", SQLite's busy answer to a lock upgrade
    # it cannot wait for) while the scheduler writes; SQLite's answer to that is to run the
    # transaction again (it was rolled back). Once: a second refusal fails the test.
    for attempt in (1, 2):
        created = subprocess.run(create, env=airflow.environ(), capture_output=True, text=True, timeout=180)
        if created.returncode == 0 or "database is locked" not in created.stderr or attempt == 2:
            break
        print("airflow backfill create: database is locked (SQLite), running it again")
    # the exception lines in full (SQLAlchemy's message comes before a long SQL dump)
    errors = [line for line in created.stderr.splitlines() if "Error" in line and not line.startswith(" ")]
    assert created.returncode == 0, (errors, created.stdout[-2000:], created.stderr[-2000:])
    from tests.conditions import wait_until

    def backfill_runs() -> list[dict]:
        answer = client.request("GET", f"/api/v2/dags/{BACKFILL_DAG_ID}/dagRuns?run_type=backfill")
        return answer["dag_runs"]

    wait_until(
        lambda: (runs := backfill_runs()) and all(r["state"] in ("success", "failed") for r in runs),
        300,
        lambda: f"the backfill's runs to finish: {backfill_runs()}",
        interval=2.0,
    )
    [native] = backfill_runs()
    states = client.task_states(BACKFILL_DAG_ID, native["dag_run_id"])
    assert native["state"] == "success" and states["backfill[0]"] == "success", (native, states)
    assert native["logical_date"].startswith(f"{NATIVE_DAY:%Y-%m-%d}")
    next_day = NATIVE_DAY + timedelta(days=1)
    day = list(
        native_out.glob(f"interval_id={NATIVE_DAY:%Y%m%d}T000000Z_{next_day:%Y%m%d}T000000Z/*.parquet")
    )
    assert len(pd.concat(pd.read_parquet(p) for p in day)) == 4
    print(f"airflow ready in {ready_s:.1f}s; whole test {time.monotonic() - started:.1f}s")
    print(script.stdout)
    assert BACKFILL_DAG_ID in script.stdout
