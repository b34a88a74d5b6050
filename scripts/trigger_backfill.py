#!/usr/bin/env python
"""Trigger the Spark backfill DAG for a range through Airflow's REST API, wait, print the state.

Works against any running Airflow 3 with the repo's DAGs (``make demo ARGS="--with-airflow
--keep-running"`` starts one): logs in at ``/auth/token``, unpauses ``streams_spark_backfill``
(``PATCH /api/v2/dags/{dag_id}``), triggers a run with the range as its Params
(``POST /api/v2/dags/{dag_id}/dagRuns``), polls until it is ``success`` or ``failed`` and prints
the state of every task (each backfilled interval is one mapped ``backfill`` task, named by its
interval), for finished intervals their row counts, output paths and Data Docs, for skipped ones
that they held no input, and for failed ones the reason (the failing expectations and the
report, from the task's XCom ``failure``).

Airflow's own backfill is the other way to run a range (one run per daily data interval):
``airflow backfill create --dag-id streams_spark_backfill --from-date ... --to-date ...`` or
"Run Backfill" in the UI.

    .venv/bin/python scripts/trigger_backfill.py --url http://127.0.0.1:PORT --user admin \\
        --password PASSWORD --start 2024-01-01T00:00:00Z --end 2024-01-02T00:00:00Z

Without --password the password ``airflow standalone`` generated under
``$STREAMS_RUNTIME_HOME/airflow`` is used. Exit code: 0 success, 1 the run failed or timed out,
2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.parse
from typing import Any

from streams_runtime.brokers import runtime_home
from streams_runtime.demo.airflow_standalone import (
    BACKFILL_DAG_ID,
    PASSWORD_FILE,
    AirflowClient,
    AirflowError,
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="Airflow API server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--user", default="admin", help="login (default admin)")
    parser.add_argument(
        "--password",
        default=None,
        help=f"password (default: the one in $STREAMS_RUNTIME_HOME/airflow/{PASSWORD_FILE})",
    )
    parser.add_argument("--start", required=True, help="range start, ISO date-time (inclusive)")
    parser.add_argument("--end", required=True, help="range end, ISO date-time (exclusive)")
    parser.add_argument("--chunk-hours", type=int, default=None, help="hours per interval (DAG default 24)")
    parser.add_argument("--topic", default=None, help="input topic (DAG default demo-payments)")
    parser.add_argument("--output-dir", default=None, help="Parquet root (DAG default: runtime home)")
    parser.add_argument("--publish-topic", default=None, help="publish validated rows to this topic")
    parser.add_argument("--window-ms", type=int, default=None, help="window size in ms (DAG default 1 h)")
    parser.add_argument("--dag-id", default=BACKFILL_DAG_ID)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait (default 3600)")
    return parser.parse_args(argv)


def xcom(client: AirflowClient, dag_id: str, run_id: str, task_id: str, map_index: int, key: str) -> Any:
    """A task instance's XCom value, or ``None`` when it has none."""
    path = (
        f"/api/v2/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id, safe='')}"
        f"/taskInstances/{task_id}/xcomEntries/{key}?map_index={map_index}"
    )
    try:
        value = client.request("GET", path).get("value")
    except (AirflowError, AttributeError):
        return None
    if isinstance(value, str):  # the API may hand back the JSON text of the value
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def report(client: AirflowClient, dag_id: str, run_id: str) -> None:
    """One line per task instance: state, interval, and what happened (rows, skip, failure reason)."""
    quoted = urllib.parse.quote(run_id, safe="")
    answer = client.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances?limit=1000")
    for ti in sorted(answer.get("task_instances", []), key=lambda t: (t["task_id"], t.get("map_index", -1))):
        task_id, index, state = ti["task_id"], ti.get("map_index", -1), ti.get("state")
        name = task_id if index < 0 else f"{task_id}[{index}]"
        label = ti.get("rendered_map_index") or ""
        line = f"  task {name}: {state}" + (f"  ({label})" if label else "")
        if state == "success" and task_id == "backfill":
            value = xcom(client, dag_id, run_id, task_id, index, "return_value") or {}
            for one in value.get("intervals", []):
                line += f"\n    {one.get('interval_id')}: {one.get('status')}"
                if one.get("status") == "passed":
                    line += (
                        f", {one.get('source_records')} records -> {one.get('rows')} rows, "
                        f"{one.get('output_path')}; Data Docs {one.get('data_docs_url')}"
                    )
        elif state == "skipped" and task_id == "backfill":
            line += "  no input records in this interval: skipped"
        elif state in ("failed", "upstream_failed"):
            reason = xcom(client, dag_id, run_id, task_id, index, "failure")
            line += f"\n    reason: {reason or 'see the task log: ' + str(ti.get('log_url') or '')}"
        print(line)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    password = args.password
    if password is None:
        path = runtime_home() / "airflow" / PASSWORD_FILE
        try:
            password = json.loads(path.read_text())[args.user]
        except (OSError, ValueError, KeyError):
            print(f"error: no --password and none for {args.user!r} in {path}", file=sys.stderr)
            return 2
    conf: dict[str, object] = {"range_start": args.start, "range_end": args.end}
    for key in ("chunk_hours", "topic", "output_dir", "publish_topic", "window_ms"):
        if getattr(args, key) is not None:
            conf[key] = getattr(args, key)
    conf["publish"] = "publish" if args.publish_topic else "none"

    client = AirflowClient(args.url, args.user, password)
    started = time.monotonic()
    try:
        client.wait_for_dag(args.dag_id, timeout=60)
        client.ensure_pool()
        client.unpause(args.dag_id)
        run_id = client.trigger(args.dag_id, conf)
        print(f"triggered {args.dag_id} run {run_id} with conf {json.dumps(conf)}", flush=True)
        state = client.wait_for_run(
            args.dag_id,
            run_id,
            args.timeout,
            on_change=lambda s: print(f"  {time.monotonic() - started:6.1f}s  run state: {s}", flush=True),
        )
        report(client, args.dag_id, run_id)
    except (AirflowError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.dag_id} run {run_id}: {state} after {time.monotonic() - started:.1f}s")
    return 0 if state == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
