"""The worker's HTTP API against fake clients (no broker): answers, forwarding, errors, token, health."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.server.app import HOP_HEADER, create_app
from streams_runtime.server.signing import ForwardingSigner
from tests.unit.query.fakes import PARTITIONS, FakeClient, FakeThread, partition_of

KEYS = [f"k{i}" for i in range(30)]


def _split() -> tuple[dict, dict]:
    mine = {k: i for i, k in enumerate(KEYS) if partition_of(k) < 2}
    theirs = {k: i for i, k in enumerate(KEYS) if partition_of(k) >= 2}
    return mine, theirs


SECRET = "unit-forwarding-secret-at-least-32-bytes"


def _pair(token: str | None = None, secret: str | None = SECRET) -> tuple[TestClient, TestClient, FakeClient]:
    """Instance A (partitions 0, 1) and B (2, 3); A forwards to B through a TestClient."""
    hosts = AssignmentInfo(
        partitions_by_host={
            "a:1": frozenset(SourcePartition("input", p) for p in (0, 1)),
            "b:2": frozenset(SourcePartition("input", p) for p in (2, 3)),
        }
    )
    mine, theirs = _split()
    ta, tb = FakeThread("a-1", hosts), FakeThread("b-1", hosts)
    for p in (0, 1):
        ta.host(p, {k: v for k, v in mine.items() if partition_of(k) == p})
    for p in (2, 3):
        tb.host(p, {k: v for k, v in theirs.items() if partition_of(k) == p})
    a = FakeClient([ta], endpoint="a:1", token=token, forwarding_secret=secret)
    b = FakeClient([tb], endpoint="b:2", token=token, forwarding_secret=secret)
    app_a, app_b = create_app(a), create_app(b)
    client_b = TestClient(app_b)
    app_a.state.http = client_b
    return TestClient(app_a), client_b, a


def test_should_answer_local_keys_and_forward_the_others_to_their_owner():
    client, _, _ = _pair()
    for i, key in enumerate(KEYS):
        r = client.get(f"/stores/counts/keys/{key}")
        assert r.status_code == 200, r.json()
        assert r.json()["value"] == i
        assert r.json()["host"] == ("a:1" if partition_of(key) < 2 else "b:2")


def test_should_never_forward_a_forwarded_request_again():
    _, client_b, _ = _pair()
    key = next(k for k in KEYS if partition_of(k) < 2)
    path = f"/stores/counts/keys/{key}"
    headers = ForwardingSigner(SECRET, "app").sign_request("GET", path, b"", "c:3", "b:2")
    r = client_b.get(path, headers=headers)
    assert r.status_code == 503 and r.json()["error"] == "store_migrating"
    assert "forwarded here by c:3" in r.json()["message"]


def test_should_treat_a_bare_hop_header_as_a_client_request():
    client, _, _ = _pair()
    key = next(k for k in KEYS if partition_of(k) >= 2)
    r = client.get(f"/stores/counts/keys/{key}", headers={HOP_HEADER: "c:3"})
    assert r.status_code == 200 and r.json()["host"] == "b:2"


def test_should_answer_503_with_the_clear_error_for_a_restoring_partition():
    thread = FakeThread("a-1")
    key = next(k for k in KEYS if partition_of(k) == 0)
    thread.host(0, {key: 1}, restoring=True)
    r = TestClient(create_app(FakeClient([thread]))).get(f"/stores/counts/keys/{key}")
    assert r.status_code == 503
    assert r.json() == {"error": "store_migrating", "message": r.json()["message"]}
    assert "partition 0 is migrating (restoring)" in r.json()["message"]


def test_should_reject_unknown_stores_and_missing_keys_with_404():
    client, _, _ = _pair()
    r = client.get("/stores/nope/keys/k1")
    assert r.status_code == 404 and r.json()["error"] == "unknown_store"
    missing = next(f"zz{i}" for i in range(100) if partition_of(f"zz{i}") < 2)
    r = client.get(f"/stores/counts/keys/{missing}")
    assert r.status_code == 404 and r.json()["error"] == "key_not_found"


def test_should_scan_only_local_partitions_and_say_which():
    client, _, _ = _pair()
    body = client.get("/stores/counts/all").json()
    mine, _ = _split()
    assert body["partitions"] == [0, 1] and body["local_only"] is True
    assert {e["key"]: e["value"] for e in body["entries"]} == mine
    body = client.get("/stores/counts/range", params={"from": "k1", "to": "k2"}).json()
    assert all("k1" <= e["key"] <= "k2" for e in body["entries"])
    r = client.get("/stores/counts/all", params={"partition": 3})
    assert r.status_code == 404 and r.json()["error"] == "partition_not_hosted"


def test_should_describe_stores_and_key_metadata():
    client, _, _ = _pair()
    stores = client.get("/stores").json()["stores"]
    assert stores == [
        {
            "name": "counts",
            "type": "key-value",
            "partitions": PARTITIONS,
            "local_partitions": [0, 1],
            "local_standby_partitions": [],
        }
    ]
    key = next(k for k in KEYS if partition_of(k) == 3)
    meta = client.get(f"/metadata/counts/{key}").json()
    assert meta == {"store": "counts", "key": key, "partition": 3, "active_host": "b:2", "standby_hosts": []}


@pytest.mark.parametrize(
    "path",
    [
        "/stores",
        "/stores/counts/keys/k1",
        "/stores/counts/all",
        "/metrics",
        "/metadata/counts/k1",
        "/lags",
        "/openapi.json",
    ],
)
def test_should_require_the_bearer_token_when_one_is_set(path):
    client, _, _ = _pair(token="s3cret")
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer s3cret"}).status_code in (200, 404)
    assert client.get("/health/live").status_code == 200


def test_should_be_ready_only_when_running_with_every_active_task_running():
    thread = FakeThread("a-1")
    thread.host(0, {})
    client = FakeClient([thread])
    http = TestClient(create_app(client))
    assert http.get("/health/ready").json()["status"] == "ready"
    thread.task_manager.restoring.add(next(iter(thread.task_manager.tasks)))
    r = http.get("/health/ready")
    assert r.status_code == 503 and "restoring" in r.json()["reason"] and "0_0" in r.json()["reason"]
    client.state.name = "REBALANCING"
    r = http.get("/health/ready")
    assert r.status_code == 503 and "REBALANCING" in r.json()["reason"]
    client.state.name = "ERROR"
    assert http.get("/health/live").status_code == 503


def test_should_publish_openapi_and_docs():
    client, _, _ = _pair()
    paths = client.get("/openapi.json").json()["paths"]
    assert "/stores/{store}/keys/{key}" in paths and "/metrics" in paths and "/health/ready" in paths
    assert "/openapi.json" not in paths  # the docs routes are not part of the API they describe
    assert "/admin/stores/{store}/rebuild" in paths  # H4's admin router is included
    assert client.get("/docs").status_code == 200
    key_route = paths["/stores/{store}/keys/{key}"]["get"]
    assert "forwarded" in key_route["summary"]
    assert {p["name"] for p in key_route["parameters"]} >= {"store", "key", "allow_stale", "from", "to"}


def test_should_serve_the_docs_and_console_pages_without_data_and_without_the_token():
    client, _, _ = _pair(token="s3cret")
    for path, marker in [("/docs", "swagger-ui-bundle.js"), ("/ui", "console.js")]:
        page = client.get(path)
        assert page.status_code == 200 and marker in page.text and "s3cret" not in page.text
    for asset in ["/docs/assets/swagger-ui-bundle.js", "/docs/assets/docs.js", "/ui/static/console.js"]:
        assert client.get(asset).status_code == 200
    for asset in ["/ui", "/ui/static/console.js", "/ui/static/charts.js", "/ui/static/console.css"]:
        answer = client.get(asset)  # nothing loaded from elsewhere (no CDN): no URL but the SVG namespace
        assert answer.status_code == 200
        assert "http" not in answer.text.replace("http://www.w3.org/2000/svg", "")
    for path in ["/ui/api/history", "/ui/api/history/all", "/ui/api/topology/panels"]:
        assert client.get(path).status_code == 401  # the data behind the token
    for bad in ["/ui/static/console.html", "/ui/static/..%2Fconsole.py", "/docs/assets/..%2F..%2Fapp.py"]:
        assert client.get(bad).status_code == 404
    missing = client.get("/docs/assets/swagger-ui.js.map")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_should_declare_the_bearer_scheme_on_every_route_but_health():
    client, _, _ = _pair(token="s3cret")
    schema = client.get("/openapi.json", headers={"Authorization": "Bearer s3cret"}).json()
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "the worker's application_server_token",
    }
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            expected = [] if path.startswith("/health/") else [{"bearerAuth": []}]
            assert operation["security"] == expected, path


class _VersionedStore:
    """A versioned store stand-in: one key with versions valid from 10 and from 20."""

    versioned = True

    def __init__(self, key: str) -> None:
        self.key = key

    def get(self, key: str, as_of: int | None = None):
        from streams_runtime import VersionedRecord

        if key != self.key:
            return None
        if as_of is None or as_of >= 20:
            return VersionedRecord("new", 20)
        return VersionedRecord("old", 10, 20) if as_of >= 10 else None


def test_should_answer_as_of_queries_on_versioned_stores_and_400_on_others():
    thread = FakeThread("a-1")
    key = next(k for k in KEYS if partition_of(k) == 0)
    thread.host(0, {key: 1})
    plain = TestClient(create_app(FakeClient([thread])))
    r = plain.get(f"/stores/counts/keys/{key}", params={"as_of": 15})
    assert r.status_code == 400 and r.json()["error"] == "not_versioned"
    versioned = _VersionedStore(key)
    thread.task_manager.tasks[next(iter(thread.task_manager.tasks))].stores["counts"] = versioned
    assert plain.get(f"/stores/counts/keys/{key}", params={"as_of": 15}).json()["value"] == {
        "value": "old",
        "timestamp": 10,
    }
    assert plain.get(f"/stores/counts/keys/{key}").json()["value"] == {"value": "new", "timestamp": 20}
    r = plain.get(f"/stores/counts/keys/{key}", params={"as_of": 5})
    assert r.status_code == 404 and r.json()["error"] == "key_not_found"
