"""How failures reach people: the trigger script's per-task reasons and the failure notifier."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location(
        "trigger_backfill", REPO / "scripts" / "trigger_backfill.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeClient:
    """The two REST answers ``report`` reads: task instances, and XCom entries by task/index/key."""

    def __init__(self, tis: list[dict], xcoms: dict[tuple[str, int, str], object]) -> None:
        self.tis, self.xcoms = tis, xcoms

    def request(self, method: str, path: str):
        if "/xcomEntries/" in path:
            task = path.split("/taskInstances/")[1].split("/")[0]
            key = path.split("/xcomEntries/")[1].split("?")[0]
            index = int(path.split("map_index=")[1])
            if (task, index, key) not in self.xcoms:
                from streams_runtime.demo.airflow_standalone import AirflowError

                raise AirflowError("HTTP 404")
            return {"value": json.dumps(self.xcoms[(task, index, key)])}
        return {"task_instances": self.tis}


def test_the_script_prints_each_failing_tasks_reason_and_each_skip(capsys) -> None:
    script = load_script()
    tis = [
        {"task_id": "backfill", "map_index": 0, "state": "success", "rendered_map_index": "day 1"},
        {"task_id": "backfill", "map_index": 1, "state": "failed", "rendered_map_index": "day 2"},
        {"task_id": "backfill", "map_index": 2, "state": "skipped", "rendered_map_index": "day 3"},
        {"task_id": "plan_intervals", "map_index": -1, "state": "success"},
    ]
    passed = {"interval_id": "d1", "status": "passed", "source_records": 5, "rows": 2, "output_path": "/o"}
    xcoms = {
        ("backfill", 0, "return_value"): {"intervals": [passed]},
        (
            "backfill",
            1,
            "failure",
        ): "[day 2) validation failed: expect_x(column=total_amount); report /r.json",
    }
    script.report(FakeClient(tis, xcoms), "streams_spark_backfill", "run-1")
    out = capsys.readouterr().out
    assert "task backfill[0]: success  (day 1)" in out and "d1: passed, 5 records -> 2 rows, /o" in out
    assert "task backfill[1]: failed  (day 2)" in out
    assert "reason: [day 2) validation failed: expect_x(column=total_amount); report /r.json" in out
    assert "task backfill[2]: skipped  (day 3)  no input records in this interval: skipped" in out


def test_the_failure_notifier_appends_one_json_line(tmp_path: Path) -> None:
    from streams_ops.notifications.failure import FailureNotifier

    target = tmp_path / "alerts.jsonl"
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=3, try_number=2, log_url="http://x")
    FailureNotifier(path=str(target)).notify({"ti": ti, "exception": ValueError("boom")})
    [line] = target.read_text().splitlines()
    record = json.loads(line)
    assert (record["dag_id"], record["task_id"], record["map_index"]) == ("d", "t", 3)
    assert record["error"] == "ValueError: boom"


def test_another_notifier_is_plugged_in_by_name_and_a_bad_name_is_refused(monkeypatch) -> None:
    from streams_ops.notifications.failure import ENV_FACTORY, FailureNotifier, failure_callbacks

    assert isinstance(failure_callbacks()[0], FailureNotifier)
    monkeypatch.setenv(ENV_FACTORY, "collections:OrderedDict")
    assert type(failure_callbacks()[0]).__name__ == "OrderedDict"
    monkeypatch.setenv(ENV_FACTORY, "no-colon-here")
    with pytest.raises(ValueError, match=ENV_FACTORY):
        failure_callbacks()
