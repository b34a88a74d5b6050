"""streams_ops.state_rebuild without a broker: owners planned, verdicts judged, the report rendered."""

from __future__ import annotations

import json

import pytest
from streams_ops.state_rebuild import (
    StateRebuildError,
    judge,
    plan_owners,
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


def test_should_plan_each_worker_its_own_tasks_and_refuse_tasks_nobody_owns() -> None:
    owned = {"http://a": ["0_0", "0_2"], "http://b": ["0_1"], "http://c": []}
    assert plan_owners(owned, None) == {"http://a": ["0_0", "0_2"], "http://b": ["0_1"]}
    assert plan_owners(owned, ["0_1"]) == {"http://b": ["0_1"]}
    with pytest.raises(StateRebuildError, match=r"\['0_9'\] are active on none"):
        plan_owners(owned, ["0_1", "0_9"])
    with pytest.raises(StateRebuildError, match="none of the workers"):
        plan_owners({"http://c": []}, None)


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
