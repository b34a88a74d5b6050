"""streams_ops.state_rebuild without a broker: owners planned, verdicts judged, the report rendered."""

from __future__ import annotations

import json

import pytest
from streams_ops.state_rebuild import (
    PartitionsNotRebuiltError,
    StateRebuildError,
    judge,
    not_rebuilt,
    plan_rebuild,
    read_rows,
    render,
    resolve_application,
)


def report(task_id: str, store_keys: int, live_keys: int, **extra) -> dict:
    return {
        "task_id": task_id,
        "store": "s",
        "changelog_topic": "app-s-changelog",
        "changelog_partition": int(task_id[-1]),
        "records_restored": 10,
        "store_key_count": store_keys,
        "changelog_live_keys": live_keys,
        "ok": store_keys == live_keys,
        "problem": None,
        "input_offsets": {"in:" + task_id[-1]: 5},
        **extra,
    }


def instances(active: dict[str, list[str]], tasks: int = 4, standby: dict | None = None) -> dict:
    """An answer of ``GET /admin/stores/s/instances``."""
    ids = [f"0_{p}" for p in range(tasks)]
    endpoints = sorted(set(active) | set(standby or {}))
    return {
        "store": "s",
        "tasks": ids,
        "unassigned_tasks": sorted(set(ids) - {t for ts in active.values() for t in ts}),
        "instances": [
            {"endpoint": e, "active_tasks": active.get(e, []), "standby_tasks": (standby or {}).get(e, [])}
            for e in endpoints
        ],
    }


def test_should_plan_every_task_of_the_store_once_on_its_active_instance() -> None:
    view = instances({"a:1": ["0_0", "0_2"], "b:1": ["0_1", "0_3"]}, standby={"c:1": ["0_0", "0_1"]})
    assert plan_rebuild(view, None) == {"a:1": ["0_0", "0_2"], "b:1": ["0_1", "0_3"]}
    assert plan_rebuild(view, ["0_3"]) == {"b:1": ["0_3"]}
    with pytest.raises(StateRebuildError, match=r"\['0_9'\] are not tasks of store 's'"):
        plan_rebuild(view, ["0_1", "0_9"])
    migrating = instances({"a:1": ["0_0", "0_2"], "b:1": ["0_3"]})
    with pytest.raises(
        PartitionsNotRebuiltError, match=r"partitions \[1\] \(tasks 0_1\).*no active instance"
    ):
        plan_rebuild(migrating, None)
    assert plan_rebuild(migrating, ["0_3"]) == {"b:1": ["0_3"]}
    with pytest.raises(PartitionsNotRebuiltError, match=r"partitions \[0, 1, 2, 3\]"):
        plan_rebuild(instances({}), None)  # no instance advertises an endpoint


def test_should_name_the_planned_tasks_no_report_covers() -> None:
    plan = {"a:1": ["0_0", "0_2"], "b:1": ["0_1", "0_3"]}
    assert not_rebuilt(plan, [{"task_id": t} for t in ("0_0", "0_1", "0_2", "0_3")]) == []
    assert not_rebuilt(plan, [{"task_id": "0_0"}, {"task_id": "0_2"}]) == ["0_1", "0_3"]


def test_should_fail_a_task_whose_store_differs_or_whose_input_moved_after_the_recomputation() -> None:
    responses = {"http://a": {"reports": [report("0_0", 4, 4), report("0_1", 3, 4)]}}
    rows = judge(responses)
    assert [r["ok"] for r in rows] == [True, False]
    assert "differs" in rows[1]["problems"][0]
    moved = judge(
        {"http://a": {"reports": [report("0_0", 4, 4)]}}, input_offsets={"in:0": 4}, recomputed_keys={"0": 5}
    )
    [row] = moved
    assert not row["ok"]
    assert any("committed at 5" in p and "read to 4" in p for p in row["problems"])
    assert any("recomputation has 5 keys" in p for p in row["problems"])
    text = render(rows, "title")
    assert text.splitlines()[0] == "title" and "NO" in text and "0_1:" in text


def test_should_resolve_an_app_module_to_its_changelog_and_a_bare_id_by_the_naming_rule() -> None:
    demo = resolve_application("streams_runtime.demo.app:app", "payment-totals")
    assert demo.changelog_topic == "demo-payments-app-payment-totals-changelog"
    assert demo.source_topics == ("demo-payments",)
    assert resolve_application("my-app", "st").changelog_topic == "my-app-st-changelog"
    with pytest.raises(StateRebuildError, match="no store named 'x'.*payment-totals"):
        resolve_application("streams_runtime.demo.app:app", "x")


def test_should_read_recomputed_rows_encoded_for_the_changelog(tmp_path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"partition": 1, "key": "u", "value": {"count": 2}}) + "\n\n")
    assert read_rows(str(path), str.encode, lambda v: json.dumps(v).encode()) == [(1, b"u", b'{"count": 2}')]


def test_worker_hook_sends_the_connection_password_as_bearer_token_on_admin_calls(monkeypatch) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from streams_ops.hooks.streams_worker import StreamsWorkerHook

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _answer(self, body: dict) -> None:
            seen.append((self.command, self.path, self.headers.get("Authorization")))
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            task = {"task_id": "0_1", "kind": "active", "stores": ["s"]}
            other = {"task_id": "1_0", "kind": "active", "stores": ["t"]}
            standby = {"task_id": "0_0", "kind": "standby", "stores": ["s"]}
            self._answer({"threads": [{"name": "t1", "tasks": [task, other, standby]}]})

        def do_POST(self) -> None:
            self._answer({"echo": json.loads(self.rfile.read(int(self.headers["Content-Length"])))})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conn = {"conn_type": "http", "host": "127.0.0.1", "port": server.server_port, "password": "pw"}
        monkeypatch.setenv("AIRFLOW_CONN_W_TOKEN", json.dumps(conn))
        hook = StreamsWorkerHook("w_token", timeout=5)
        assert hook.tasks_owning("s") == ["0_1"]
        answer = hook.rebuild_store("a store", ["0_1"], timeout_s=7)
        assert answer == {"echo": {"tasks": ["0_1"], "timeout_s": 7}}
        assert seen == [
            ("GET", "/admin/tasks", "Bearer pw"),
            ("POST", "/admin/stores/a%20store/rebuild", "Bearer pw"),
        ]
        url_hook = StreamsWorkerHook(base_url=f"127.0.0.1:{server.server_port}", token="t0k")
        url_hook.list_tasks()
        assert seen[-1][2] == "Bearer t0k"
    finally:
        server.shutdown()
        server.server_close()


def test_should_name_the_application_that_cannot_be_loaded() -> None:
    with pytest.raises(
        StateRebuildError,
        match="cannot load application no_such_module:app: .*No module named .no_such_module.",
    ):
        resolve_application("no_such_module:app", "s")


class FakeWorker:
    """A worker endpoint on a loopback port answering the admin routes from ``answers``:
    ``(method, path) -> (status, body)``; records every request."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.answers: dict[tuple[str, str], tuple[int, dict]] = {}
        self.requests: list[tuple[str, str, dict | None]] = []
        worker = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                worker.requests.append((self.command, self.path, body))
                status, answer = worker.answers.get((self.command, self.path), (404, {"error": "nope"}))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_workers():
    workers = [FakeWorker(), FakeWorker()]
    yield workers
    for worker in workers:
        worker.close()


def test_operator_fails_naming_the_partitions_an_instance_did_not_rebuild(fake_workers) -> None:
    """Worker a is the only one given; the group's view sends 0_1 and 0_3 to worker b, whose tasks
    moved meanwhile (409): a's two partitions are rebuilt, and the run fails naming b's two."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException
    from streams_ops.operators.state_rebuild import RebuildStateStoreOperator

    a, b = fake_workers
    view = instances({a.endpoint: ["0_0", "0_2"], b.endpoint: ["0_1", "0_3"]})
    a.answers[("GET", "/admin/stores/s/instances")] = (200, {**view, "endpoint": a.endpoint})
    a.answers[("POST", "/admin/stores/s/rebuild")] = (
        200,
        {"reports": [report("0_0", 4, 4), report("0_2", 4, 4)]},
    )
    b.answers[("POST", "/admin/stores/s/rebuild")] = (409, {"error": "tasks_not_owned", "message": "moved"})
    pushed = {}

    class TaskInstance:
        def xcom_push(self, key, value) -> None:
            pushed[key] = value

    operator = RebuildStateStoreOperator(
        task_id="rebuild", store="s", workers=[f"http://{a.endpoint}"], token_conn_id=None
    )
    with pytest.raises(AirflowException) as failed:
        operator.execute({"ti": TaskInstance()})
    assert not isinstance(failed.value, AirflowFailException)  # retried: the group may be stable then
    assert "partitions [1, 3] (tasks 0_1, 0_3) of store 's' were NOT rebuilt" in str(failed.value)
    assert f"http://{b.endpoint}: POST" in str(failed.value) and "HTTP 409" in str(failed.value)
    assert pushed["report"]["ok"] is False and pushed["report"]["not_rebuilt"] == ["0_1", "0_3"]
    assert [r["task_id"] for r in pushed["report"]["tasks"]] == ["0_0", "0_2"]
    assert [body["tasks"] for m, _, body in a.requests if m == "POST"] == [["0_0", "0_2"]]
    assert [body["tasks"] for m, _, body in b.requests if m == "POST"] == [["0_1", "0_3"]]

    b.answers[("POST", "/admin/stores/s/rebuild")] = (
        200,
        {"reports": [report("0_1", 4, 4), report("0_3", 4, 4)]},
    )
    result = operator.execute({"ti": TaskInstance()})
    assert result["ok"] and sorted(r["task_id"] for r in result["tasks"]) == ["0_0", "0_1", "0_2", "0_3"]
    assert {r["task_id"]: r["endpoint"] for r in result["tasks"]} == {
        "0_0": f"http://{a.endpoint}",
        "0_1": f"http://{b.endpoint}",
        "0_2": f"http://{a.endpoint}",
        "0_3": f"http://{b.endpoint}",
    }
