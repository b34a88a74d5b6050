"""Forwarding between two fake instances (no broker): signed, never with the client's token,
relayed only when the owner proves the secret; keys with any bytes; error answers are 4xx JSON."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient

from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.server import console
from streams_runtime.server.app import create_app
from streams_runtime.server.signing import RESPONSE_SIGNATURE, SIGNATURE, ForwardingSigner
from tests.unit.query.fakes import FakeClient, FakeThread, partition_of

SECRET = "unit-forwarding-secret-at-least-32-bytes"
TOKEN = "client-token-never-forwarded"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ODD_KEYS = [
    "dir/a",
    "/lead",
    "trail/",
    "a//b",
    "q-1?tail",
    "frag#ment",
    "100%",
    "%2F",
    "two words",
    "plus+sign",
    "ünïcødé",
    "日本語/キー",
    "emoji-🙂",
    ".",
    "..",
    "a/../b",
    "./x",
    "",
    "semi;colon",
    "amp&eq=",
    "back\\slash",
    "tab\tkey",
    "line\nbreak",
    "cr\r\nlf",
]


def encode_key(key: str) -> str:
    """How a client puts a key in the path: one percent-encoded segment (``.``/``..`` as %2E)."""
    if key in (".", ".."):
        return "%2E" * len(key)
    return quote(key.encode(), safe="")


class Recorder:
    """Stands in for an instance's HTTP client: records each forwarded request, then sends it on."""

    def __init__(self, target: TestClient) -> None:
        self.target = target
        self.requests: list[httpx.Request] = []

    def request(self, method: str, url: httpx.URL, headers: dict, **options: Any) -> httpx.Response:
        """(``options`` such as ``timeout`` are left out: a TestClient answers at once)"""
        self.requests.append(httpx.Request(method, url, headers=headers))
        return self.target.request(method, url, headers=headers)


def _pair(secret_a: str | None = SECRET, secret_b: str | None = SECRET, data: dict | None = None):
    """A hosts partitions 0, 1 and B 2, 3 of ``data`` (a key -> value map); each forwards to the
    other through a Recorder (A's is returned)."""
    data = data if data is not None else {k: i for i, k in enumerate(ODD_KEYS)}
    hosts = AssignmentInfo(
        partitions_by_host={
            "a:1": frozenset({SourcePartition("input", p) for p in (0, 1)} | {SourcePartition("other", 0)}),
            "b:2": frozenset(SourcePartition("input", p) for p in (2, 3)),
        }
    )
    ta, tb = FakeThread("a-1", hosts), FakeThread("b-1", hosts)
    for p in (0, 1):
        ta.host(p, {k: v for k, v in data.items() if partition_of(k) == p})
    for p in (2, 3):
        tb.host(p, {k: v for k, v in data.items() if partition_of(k) == p})
    a = FakeClient([ta], endpoint="a:1", token=TOKEN, forwarding_secret=secret_a)
    b = FakeClient([tb], endpoint="b:2", token=TOKEN, forwarding_secret=secret_b)
    app_a = create_app(a)
    client_b = TestClient(create_app(b))
    recorder = Recorder(client_b)
    app_a.state.http = recorder
    client_a = TestClient(app_a)
    client_b.app.state.http = Recorder(client_a)
    return client_a, client_b, recorder


def test_should_answer_every_odd_key_locally_and_forwarded():
    client, client_b, recorder = _pair()
    assert {partition_of(k) < 2 for k in ODD_KEYS} == {True, False}  # both local and forwarded
    for i, key in enumerate(ODD_KEYS):
        for asked in (client, client_b):
            r = asked.get(f"/stores/counts/keys/{encode_key(key)}", headers=AUTH)
            assert r.status_code == 200, (key, r.json())
            assert r.json()["key"] == key and r.json()["value"] == i
            assert r.json()["host"] == ("a:1" if partition_of(key) < 2 else "b:2")
    assert recorder.requests


def test_should_read_a_literal_slash_like_an_encoded_one():
    client, _, _ = _pair()
    assert client.get("/stores/counts/keys/dir/a", headers=AUTH).json()["value"] == ODD_KEYS.index("dir/a")
    assert client.get("/stores/counts/keys/a//b", headers=AUTH).json()["value"] == ODD_KEYS.index("a//b")


def test_should_forward_without_the_client_token_and_with_the_raw_path():
    client, _, recorder = _pair()
    key = next(k for k in ODD_KEYS if partition_of(k) >= 2 and "/" in k)
    path = f"/stores/counts/keys/{encode_key(key)}"
    r = client.get(path, headers=AUTH, params={"allow_stale": "false"})
    assert r.status_code == 200 and r.json()["key"] == key
    assert r.headers["X-Streams-Answered-By"] == "b:2"
    sent = recorder.requests[-1]
    assert "authorization" not in sent.headers
    assert TOKEN not in str(sent.headers) and TOKEN not in str(sent.url)
    assert sent.url.raw_path == f"{path}?allow_stale=false".encode()
    assert sent.headers[SIGNATURE].startswith("v2=")


def test_should_answer_409_naming_the_owner_when_forwarding_is_off():
    client, _, recorder = _pair(secret_a=None)
    key = next(k for k in ODD_KEYS if partition_of(k) >= 2)
    r = client.get(f"/stores/counts/keys/{encode_key(key)}", headers=AUTH)
    assert r.status_code == 409
    body = r.json()
    assert body["error"] == "not_hosted_here" and body["owner"] == "b:2"
    assert body["store"] == "counts" and body["key"] == key and body["partition"] == partition_of(key)
    assert "application_server_forwarding_secret" in body["message"]
    assert not recorder.requests


@pytest.mark.parametrize("secret_b", [None, "another-secret-of-at-least-32-bytes"])
def test_should_not_relay_an_owner_that_cannot_prove_the_secret(secret_b):
    client, _, recorder = _pair(secret_b=secret_b)
    key = next(k for k in ODD_KEYS if partition_of(k) >= 2)
    r = client.get(f"/stores/counts/keys/{encode_key(key)}", headers=AUTH)
    assert r.status_code == 502 and r.json()["error"] == "owner_not_verified"
    assert "b:2" in r.json()["message"] and "value" not in r.json()
    assert len(recorder.requests) == 1


def test_should_never_relay_a_forged_answer_nor_send_it_the_token():
    client, _, _ = _pair()
    seen: list[httpx.Request] = []

    def forger(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.dumps({"store": "counts", "value": 999999, "stale": False, "host": "b:2"})
        return httpx.Response(
            200,
            content=body,
            headers={"content-type": "application/json", "X-Streams-Response-Signature": "v2=" + "0" * 64},
        )

    client.app.state.http = httpx.Client(transport=httpx.MockTransport(forger))
    forwarded = [k for k in ODD_KEYS if partition_of(k) >= 2]
    for key in forwarded:
        r = client.get(f"/stores/counts/keys/{encode_key(key)}", headers=AUTH)
        assert r.status_code == 502 and r.json()["error"] == "owner_not_verified"
        assert "999999" not in r.text
    assert len(seen) == len(forwarded)
    assert all("authorization" not in s.headers and TOKEN not in str(s.headers) for s in seen)


def test_should_refuse_a_forwarded_request_whose_signature_does_not_check():
    _, client_b, _ = _pair()
    key = next(k for k in ODD_KEYS if partition_of(k) >= 2)
    headers = {"X-Streams-Timestamp": "1", "X-Streams-Nonce": "ab" * 16, SIGNATURE: "v2=00"}
    r = client_b.get(f"/stores/counts/keys/{encode_key(key)}", headers=headers)
    assert r.status_code == 401 and r.json()["error"] == "forwarding_unauthorized"
    assert "value" not in r.json()
    _, client_b, _ = _pair(secret_b=None)
    r = client_b.get(f"/stores/counts/keys/{encode_key(key)}", headers=headers)
    assert r.status_code == 401 and "not set" in r.json()["message"]


def test_should_reject_malformed_requests_with_a_4xx_json_body():
    client, _, _ = _pair()
    cases = {
        "/metadata/no-such-store/k1": (404, "unknown_store"),
        "/metadata/no-such-store": (404, "unknown_store"),
        f"/stores/counts/windows/k1?from={-(2**63) - 1}": (422, "invalid_request"),
        f"/stores/counts/windows/k1?to={2**63}": (422, "invalid_request"),
        f"/stores/counts/keys/k1?from={-(2**64)}": (422, "invalid_request"),
        "/stores/counts/keys/k1?from=soon": (422, "invalid_request"),
        "/stores/counts/all?partition=abc": (422, "invalid_request"),
        "/stores/counts/keys/%FF%FE": (400, "malformed_key"),
        "/no/such/route": (404, "not_found"),
    }
    for path, (status, error) in cases.items():
        r = client.get(path, headers=AUTH)
        assert (r.status_code, r.json()["error"]) == (status, error), (path, r.text)
        assert r.json()["message"]
    r = client.post("/stores", headers=AUTH)
    assert r.status_code == 405 and r.json()["error"] == "method_not_allowed"
    r = client.get("/stores")
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"


def test_should_list_a_store_partitions_with_topics_and_without_duplicates():
    client, _, _ = _pair()
    body = client.get("/metadata/counts", headers=AUTH).json()
    assert body["source_topics"] == ["input"]
    by_host = {i["host"]: i for i in body["instances"]}
    assert by_host["a:1"]["partitions"] == [0, 1]
    assert by_host["a:1"]["topic_partitions"] == [
        {"topic": "input", "partition": 0},
        {"topic": "input", "partition": 1},
    ]
    assert by_host["b:2"]["partitions"] == [2, 3]


def test_should_accept_a_signed_request_without_the_token_on_forwarding_routes_only():
    _, client_b, _ = _pair()
    signer = ForwardingSigner(SECRET, "app")
    key = next(k for k in ODD_KEYS if partition_of(k) >= 2)
    path = f"/stores/counts/keys/{encode_key(key)}"
    r = client_b.get(path, headers=signer.sign_request("GET", path, b"", "a:1", "b:2"))
    assert r.status_code == 200 and r.json()["key"] == key
    assert r.headers[RESPONSE_SIGNATURE].startswith("v2=")
    for other in ("/admin/tasks", "/stores/counts/all", "/metrics", f"/metadata/counts/{encode_key(key)}"):
        r = client_b.get(other, headers=signer.sign_request("GET", other, b"", "a:1", "b:2"))
        assert r.status_code == 401 and r.json()["error"] == "unauthorized", (other, r.text)


def _console_view_of_b(client: TestClient) -> dict:
    """What A's console reads of instance B (``/ui/api/local`` there), as ``/ui/api/instances`` does."""
    return console._remote(SimpleNamespace(app=client.app), "b:2")


def test_should_read_other_instances_for_the_console_signed_and_never_with_the_token(monkeypatch):
    view_of_b = {
        "process_id": "b-process",
        "state": "RUNNING",
        "threads": [{"name": "b-1", "tasks": []}],
        "lags": {},
        "stores": {"counts": 3},
    }
    monkeypatch.setattr(console, "_local", lambda request: view_of_b)  # B's own view, as B computes it
    client, _, recorder = _pair()
    assert _console_view_of_b(client) == view_of_b
    asked = [s for s in recorder.requests if s.url.path == "/ui/api/local"]
    assert asked and all("authorization" not in s.headers and TOKEN not in str(s.headers) for s in asked)
    assert all(s.headers[SIGNATURE].startswith("v2=") for s in asked)


def test_should_not_believe_an_instance_view_that_does_not_prove_the_secret():
    client, _, _ = _pair(secret_b="another-forwarding-secret-of-32-bytes")
    view = _console_view_of_b(client)
    assert view["threads"] == [] and "error" in view
    off, _, recorder = _pair(secret_a=None)
    view = _console_view_of_b(off)
    assert "forwarding_secret" in view["error"] and not recorder.requests
