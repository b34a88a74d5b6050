"""The admin routes (streams_runtime/server/admin.py) over a running KafkaStreams, on the embedded broker.

The router is mounted on a bare FastAPI app with ``app.state.streams`` (what the worker's app does)
and driven with Starlette's TestClient: task listing, a rebuild with its report, and the refusals
(no token, unknown store, a task owned elsewhere, a task id that does not parse).
"""

from __future__ import annotations

import pytest

from streams_runtime import KafkaStreams
from tests.integration.streams_support import (
    latest_until,
    make_topics,
    produce_to,
    streams_config,
    wait_running,
)
from tests.integration.test_rebuild_state import decode, topology

TOKEN = "s3cret"


@pytest.fixture
def client_and_http(bootstrap_servers, unique_name, tmp_path):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from streams_runtime.server.admin import router

    app_id, source, output = unique_name("adm-app"), unique_name("adm-in"), unique_name("adm-out")
    make_topics(bootstrap_servers, **{source: 2, output: 2})
    produce_to(bootstrap_servers, source, [(f"k{i}".encode(), b"x", i % 2) for i in range(20)])
    # no application_server: the worker's own HTTP server stays off, the router is mounted here
    config = streams_config(bootstrap_servers, app_id, tmp_path / "state", application_server_token=TOKEN)
    streams = KafkaStreams(topology(source, output, app_id), config)
    app = FastAPI()
    app.state.streams = streams
    app.include_router(router)
    streams.start()
    try:
        wait_running(streams)
        done = {f"k{i}": 1 for i in range(20)}
        assert latest_until(bootstrap_servers, output, 2, decode, lambda d: d == done) == done
        yield streams, TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"})
    finally:
        streams.close()


def test_admin_routes_list_tasks_rebuild_and_refuse(client_and_http) -> None:
    streams, http = client_and_http
    listing = http.get("/admin/tasks").json()
    assert listing["state"] == "RUNNING" and listing["application_id"] == streams.config["application_id"]
    tasks = [t for th in listing["threads"] for t in th["tasks"]]
    assert sorted(t["task_id"] for t in tasks) == ["0_0", "0_1"]
    assert all(t["kind"] == "active" and t["stores"] == ["counts"] for t in tasks)

    answer = http.post("/admin/stores/counts/rebuild", json={"tasks": ["0_1"], "timeout_s": 60})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["ok"] is True and [r["task_id"] for r in body["reports"]] == ["0_1"]
    [report] = body["reports"]
    assert report["store_key_count"] == report["changelog_live_keys"] == 10

    whole = http.post("/admin/stores/counts/rebuild")  # no body: every owning task
    assert whole.status_code == 200 and len(whole.json()["reports"]) == 2

    assert http.post("/admin/stores/nope/rebuild", json={}).status_code == 404
    foreign = http.post("/admin/stores/counts/rebuild", json={"tasks": ["0_5"]})
    assert foreign.status_code == 409 and "0_5" in foreign.text
    assert http.post("/admin/stores/counts/rebuild", json={"tasks": ["zero"]}).status_code == 422
    anonymous = http.get("/admin/tasks", headers={"Authorization": ""})
    assert anonymous.status_code == 401
