"""Waits on the DAG runs of the session's ``airflow standalone``, shared by its two test modules."""

from __future__ import annotations

from typing import Any

from tests.conditions import wait_until


def wait_scheduled_runs(client: Any, dag_id: str, timeout: float = 300) -> None:
    """Wait until every scheduled run of ``dag_id`` has finished, and check each succeeded.

    Unpausing the backfill DAG starts the scheduled run of the last complete day, and the DAG runs
    one run at a time (``max_active_runs=1``): a manual run triggered meanwhile waits behind it.
    Whichever of the two test modules unpauses it first, the other finds it running or done."""

    def runs() -> list[dict]:
        answer = client.request("GET", f"/api/v2/dags/{dag_id}/dagRuns?run_type=scheduled")
        return list(answer["dag_runs"])

    wait_until(
        lambda: (found := runs()) and all(r["state"] in ("success", "failed") for r in found),
        timeout,
        lambda: f"the scheduled runs of {dag_id} to finish: {runs()}",
        interval=1.0,
    )
    assert all(r["state"] == "success" for r in runs()), runs()
