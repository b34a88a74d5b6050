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
from tests.ports import free_port

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


def admin_http(streams):
    """The admin router over ``streams``, driven in-process with its token."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from streams_runtime.server.admin import router

    app = FastAPI()
    app.state.streams = streams
    app.include_router(router)
    return TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"})


def test_any_instance_names_the_owner_of_every_task_of_the_store(bootstrap_servers, unique_name, tmp_path):
    """Two instances share 4 tasks (one standby replica each): ``/admin/stores/{store}/instances``
    on either names the same active owner (2 tasks each) and standby of each of the 4: the whole
    group's view, not only the asked instance's tasks."""
    from tests.conditions import wait_until

    app_id, source, output = unique_name("adm2-app"), unique_name("adm2-in"), unique_name("adm2-out")
    make_topics(bootstrap_servers, **{source: 4, output: 4})
    clients, views = [], []
    try:
        for n in range(2):
            config = streams_config(
                bootstrap_servers,
                app_id,
                tmp_path / f"state-{n}",
                application_server=f"127.0.0.1:{free_port()}",  # advertised in the assignment
                application_server_token=TOKEN,
                num_standby_replicas=1,
            )
            clients.append(KafkaStreams(topology(source, output, app_id), config))
            clients[-1].start()
        wait_running(*clients, timeout=45)
        https = [admin_http(streams) for streams in clients]

        def views_agree() -> bool:
            views[:] = [http.get("/admin/stores/counts/instances").json() for http in https]
            owners = [
                sorted((i["endpoint"], tuple(i["active_tasks"])) for i in v["instances"]) for v in views
            ]
            standbys = [
                sorted((i["endpoint"], tuple(i["standby_tasks"])) for i in v["instances"]) for v in views
            ]
            balanced = [len(t) for _, t in owners[0]] == [2, 2]
            return owners[0] == owners[1] and standbys[0] == standbys[1] and balanced

        wait_until(views_agree, 45, lambda: f"both instances name the same owners, 2 tasks each: {views}")
        endpoints = sorted(c.config["application_server"] for c in clients)
        for streams, view in zip(clients, views, strict=True):
            assert view["endpoint"] == streams.config["application_server"]
            assert view["tasks"] == ["0_0", "0_1", "0_2", "0_3"] and view["unassigned_tasks"] == []
            assert [i["endpoint"] for i in view["instances"]] == endpoints
            owned = sorted(t for i in view["instances"] for t in i["active_tasks"])
            assert owned == view["tasks"]  # each task on exactly one instance
            for instance in view["instances"]:  # and stood by for on the other one
                others = [t for i in view["instances"] if i is not instance for t in i["active_tasks"]]
                assert instance["standby_tasks"] == sorted(others)
            local = sorted(
                str(t.task_id) for m in streams.metadata_for_local_threads() for t in m.active_tasks
            )
            [mine] = [i for i in view["instances"] if i["endpoint"] == view["endpoint"]]
            assert mine["active_tasks"] == local
        assert https[0].get("/admin/stores/nope/instances").status_code == 404
    finally:
        for streams in clients:
            streams.close()
