"""What a forwarding signature is bound to, end to end between fake instances' apps (no broker):
its application (a member of another application sharing the secret gets no answer) and the
receiving process (a request captured before the receiver restarted is refused after it)."""

from __future__ import annotations

import time

import httpx
from fastapi.testclient import TestClient

from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.server.app import create_app
from streams_runtime.server.signing import TIMESTAMP
from tests.unit.query.fakes import FakeClient, FakeThread, partition_of

#: one secret for every application of the deployment
SECRET = "one-secret-for-every-service-of-the-deployment"
TOKEN = "client-token-of-application-a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
KEYS = [f"k{i}" for i in range(30)]


class Recorder:
    """An instance's HTTP client: records each forwarded request, then sends it to ``target``."""

    def __init__(self, target: TestClient) -> None:
        self.target = target
        self.requests: list[tuple[str, dict]] = []

    def request(self, method: str, url: httpx.URL, headers: dict) -> httpx.Response:
        target = url.raw_path.decode()
        self.requests.append((target, dict(headers)))
        return self.target.request(method, target, headers=headers)


def _thread(name: str, endpoint: str, partitions: tuple[int, ...], others: dict, values: dict) -> FakeThread:
    hosts = AssignmentInfo(
        partitions_by_host={
            endpoint: frozenset(SourcePartition("input", p) for p in partitions),
            **{e: frozenset(SourcePartition("input", p) for p in ps) for e, ps in others.items()},
        }
    )
    thread = FakeThread(name, hosts)
    for p in partitions:
        thread.host(p, {k: v for k, v in values.items() if partition_of(k) == p})
    return thread


def test_should_refuse_to_answer_a_member_of_another_application_under_the_same_secret():
    """A rogue member of A's group (Kafka access only) advertises C's instance as the owner of
    partitions 2 and 3: A forwards those lookups to C, signed with the secret C shares."""
    a_values = {k: i for i, k in enumerate(KEYS)}
    c_values = {k: 1000 + i for i, k in enumerate(KEYS)}
    ta = _thread("a-1", "a:1", (0, 1), {"c:3": (2, 3)}, a_values)  # "c:3" is the rogue's claim
    tc = _thread("c-1", "c:3", (0, 1, 2, 3), {}, c_values)
    a = FakeClient([ta], endpoint="a:1", token=TOKEN, forwarding_secret=SECRET, application_id="app-a")
    c = FakeClient([tc], endpoint="c:3", token="c-token", forwarding_secret=SECRET, application_id="app-c")
    app_a = create_app(a)
    client_c = TestClient(create_app(c))
    recorder = Recorder(client_c)
    app_a.state.http = recorder
    client_a = TestClient(app_a)
    theirs = [k for k in KEYS if partition_of(k) >= 2]
    assert theirs
    for key in theirs:
        r = client_a.get(f"/stores/counts/keys/{key}", headers=AUTH)
        assert r.status_code == 502 and r.json()["error"] == "owner_not_verified", r.json()
        assert "1000" not in r.text
    assert len(recorder.requests) == len(theirs)  # the attack was tried: A did ask C
    for target, headers in recorder.requests:  # and C refused each request itself
        assert client_c.get(target, headers=headers).status_code == 401


def _pair() -> tuple[TestClient, FakeClient, Recorder]:
    values = {k: i for i, k in enumerate(KEYS)}
    ta = _thread("a-1", "a:1", (0, 1), {"b:2": (2, 3)}, values)
    tb = _thread("b-1", "b:2", (2, 3), {"a:1": (0, 1)}, values)
    a = FakeClient([ta], endpoint="a:1", token=TOKEN, forwarding_secret=SECRET)
    b = FakeClient([tb], endpoint="b:2", token=TOKEN, forwarding_secret=SECRET)
    app_a = create_app(a)
    recorder = Recorder(TestClient(create_app(b)))
    app_a.state.http = recorder
    return TestClient(app_a), b, recorder


def test_should_refuse_a_request_replayed_after_the_receiver_restarted():
    client_a, b, recorder = _pair()
    key = next(k for k in KEYS if partition_of(k) >= 2)
    assert client_a.get(f"/stores/counts/keys/{key}", headers=AUTH).status_code == 200
    target, captured = recorder.requests[-1]
    assert recorder.target.get(target, headers=captured).status_code == 401  # the nonce guard
    signed_ms = int(captured[TIMESTAMP])
    while time.time() * 1000 <= signed_ms:  # the restart happens at least a millisecond later
        time.sleep(0.001)
    restarted = TestClient(create_app(b))  # B's process restarted: a new app, no nonce memory
    r = restarted.get(target, headers=captured)
    assert r.status_code == 401 and r.json()["error"] == "forwarding_unauthorized", r.json()
    assert "before this instance started" in r.json()["message"]
    # and the restarted B still answers what A forwards to it now
    recorder.target = restarted
    assert client_a.get(f"/stores/counts/keys/{key}", headers=AUTH).status_code == 200
