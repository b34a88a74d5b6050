#!/usr/bin/env python
"""Trigger the Spark backfill DAG for a range through Airflow's REST API, wait, print the state.

Works against any running Airflow 3 with the repo's DAGs (``make demo ARGS="--with-airflow
--keep-running"`` starts one): logs in at ``/auth/token``, unpauses ``streams_spark_backfill``
(``PATCH /api/v2/dags/{dag_id}``), triggers a run with the range as its Params
(``POST /api/v2/dags/{dag_id}/dagRuns``), polls until it is ``success`` or ``failed`` and prints
the state of every task (each backfilled interval is one mapped ``backfill`` task) and, for
finished intervals, their row counts and output paths.

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

from streams_runtime.demo.airflow_standalone import (
    BACKFILL_DAG_ID,
    PASSWORD_FILE,
    AirflowClient,
    AirflowError,
)
from streams_runtime.kafka.broker import runtime_home


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
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait (default 600)")
    return parser.parse_args(argv)


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

    client = AirflowClient(args.url, args.user, password)
    started = time.monotonic()
    try:
        client.wait_for_dag(args.dag_id, timeout=60)
        client.unpause(args.dag_id)
        run_id = client.trigger(args.dag_id, conf)
        print(f"triggered {args.dag_id} run {run_id} with conf {json.dumps(conf)}", flush=True)
        state = client.wait_for_run(
            args.dag_id,
            run_id,
            args.timeout,
            on_change=lambda s: print(f"  {time.monotonic() - started:6.1f}s  run state: {s}", flush=True),
        )
        tasks = client.task_states(args.dag_id, run_id)
        for task, task_state in sorted(tasks.items()):
            print(f"  task {task}: {task_state}")
        for task, task_state in sorted(tasks.items()):
            if task.startswith("backfill[") and task_state == "success":
                index = task[len("backfill[") : -1]
                path = (
                    f"/api/v2/dags/{args.dag_id}/dagRuns/{urllib.parse.quote(run_id, safe='')}"
                    f"/taskInstances/backfill/xcomEntries/return_value?map_index={index}"
                )
                try:
                    value = client.request("GET", path).get("value")
                    value = json.loads(value) if isinstance(value, str) else value
                    print(
                        f"  {task}: {value.get('interval_id')} {value.get('source_records')} records -> "
                        f"{value.get('result_rows')} rows, {value.get('output_path')}"
                    )
                except (AirflowError, AttributeError, ValueError):
                    pass
    except (AirflowError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.dag_id} run {run_id}: {state} after {time.monotonic() - started:.1f}s")
    return 0 if state == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
