"""The console's history: the ring buffer, the sampler, the figures read and the JSON endpoints."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import httpx
import pytest
from fastapi.testclient import TestClient

from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.processor.internals.thread_metrics import RestoreProgress
from streams_runtime.processor.task_id import TaskId
from streams_runtime.server import console, peers
from streams_runtime.server.app import create_app
from streams_runtime.server.figures import Figures
from streams_runtime.server.history import History, Sampler
from tests.unit.query.fakes import FakeClient, FakeThread
from tests.unit.query.test_http_forwarding import AUTH, SECRET, TOKEN, Recorder


# ---------------------------------------------------------------------------- ring buffer
def test_should_keep_only_the_newest_samples_of_the_span_oldest_first():
    history = History(interval_s=1.0, span_s=5.0)
    assert history.capacity == 5
    for second in range(12):
        assert history.offer(1_000.0 + second, lambda second=second: {"n": second})
    samples = history.since()
    assert [s["n"] for s in samples] == [7, 8, 9, 10, 11]
    assert [s["t"] for s in samples] == [1_007_000, 1_008_000, 1_009_000, 1_010_000, 1_011_000]
    assert [s["n"] for s in history.since(1_009_000)] == [10, 11]
    assert history.since(1_011_000) == []


def test_should_take_no_sample_sooner_than_the_interval_after_the_last():
    history = History(interval_s=5.0, span_s=60.0)
    reads: list[float] = []

    def read_at(now: float) -> bool:
        return history.offer(now, lambda: reads.append(now) or {})

    assert [read_at(t) for t in (100.0, 101.0, 104.9, 105.0, 109.0, 110.5)] == [
        True,
        False,
        False,
        True,
        False,
        True,
    ]
    assert reads == [100.0, 105.0, 110.5]  # a refused offer reads nothing
    with pytest.raises(ValueError):
        History(interval_s=0)
    with pytest.raises(ValueError):
        History(interval_s=10.0, span_s=5.0)


def test_should_sample_on_its_own_thread_until_stopped():
    history = History(interval_s=0.05, span_s=10.0)
    calls = []
    sampler = Sampler(history, lambda: calls.append(1) or {"n": len(calls)})
    sampler.start()
    deadline = time.monotonic() + 10
    while len(history) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    sampler.stop()
    taken = len(history)
    assert taken >= 3
    times = [s["t"] for s in history.since()]
    assert all(b - a >= 50 for a, b in zip(times, times[1:], strict=False))
    time.sleep(0.15)
    assert len(history) == taken  # stopped: no more samples


# ---------------------------------------------------------------------------- figures
class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_should_read_rates_latency_lags_restores_and_dropped_records():
    clock = _Clock()
    thread = FakeThread("t-1")
    thread.metrics.records_offsets = {
        ("input", 0): (120, 150),
        ("input", 1): (40, 40),
        ("input", 2): (None, 7),
        ("input", 3): (None, 35),
    }
    thread.task_manager.tasks[TaskId(0, 0)] = SimpleNamespace(
        stores={}, committed_offsets={("input", 0): 99}, assigned_offsets={("input", 0): 60}
    )
    thread.task_manager.tasks[TaskId(0, 3)] = SimpleNamespace(  # not committed since assigned
        stores={}, committed_offsets={}, assigned_offsets={("input", 3): 30}
    )
    client = FakeClient([thread])
    client.restore_progress = RestoreProgress()
    client.restore_progress.on_restore_start(("app-store-changelog", 0), "store", 0, 500)
    client.restore_progress.on_batch_restored(("app-store-changelog", 0), "store", 199, 200)
    figures = Figures(client, clock)
    first = figures.read()
    assert first["process_rate"] is None and first["commit_latency_ms"] is None
    assert first["offsets"] == {
        "input/0": [100, 120, 150],
        "input/1": [None, 40, 40],
        "input/2": [None, None, 7],
        "input/3": [30, None, 35],
    }
    assert (first["restore_remaining"], first["restored"]) == (300, 200)
    thread.metrics.record_iteration(0.001, 50, 0.01, 50)
    thread.metrics.record_commit(0.010)
    thread.metrics.record_commit(0.030)
    thread.streams_metrics.dropped_records(TaskId(0, 0)).record()
    thread.streams_metrics.dropped_records(TaskId(0, 0)).record()
    thread.streams_metrics.dead_letter_records(TaskId(0, 0)).record()
    clock.now = 10.0
    second = figures.read()
    assert second["process_rate"] == 5.0
    assert second["commit_latency_ms"] == pytest.approx(20.0)
    assert (second["dropped"], second["dead_lettered"]) == (2, 1)
    clock.now = 20.0
    assert figures.read()["commit_latency_ms"] is None  # no commit in this interval


def test_should_skip_committed_offsets_of_a_busy_thread():
    thread = FakeThread("t-1")
    thread.metrics.records_offsets = {("input", 0): (5, 9)}
    thread.task_manager.tasks[TaskId(0, 0)] = SimpleNamespace(stores={}, committed_offsets={("input", 0): 4})
    thread.query_lock = _Busy()
    assert Figures(FakeClient([thread])).read()["offsets"] == {"input/0": [None, 5, 9]}


class _Busy:
    def acquire(self, timeout: float = -1) -> bool:
        return False

    def release(self) -> None:  # never acquired
        raise AssertionError


# ---------------------------------------------------------------------------- endpoints
def _instances(history_b: History | None = None) -> tuple[TestClient, Recorder, FakeClient]:
    hosts = AssignmentInfo(
        partitions_by_host={
            "a:1": frozenset(SourcePartition("input", p) for p in (0, 1)),
            "b:2": frozenset(SourcePartition("input", p) for p in (2, 3)),
        }
    )
    a = FakeClient([FakeThread("a-1", hosts)], endpoint="a:1", token=TOKEN, forwarding_secret=SECRET)
    b = FakeClient([FakeThread("b-1", hosts)], endpoint="b:2", token=TOKEN, forwarding_secret=SECRET)
    app_a, app_b = create_app(a), create_app(b)
    app_a.state.history.offer(1_000.0, lambda: {"process_rate": 1.0})
    app_a.state.history.offer(1_010.0, lambda: {"process_rate": 2.0})
    if history_b is not None:
        app_b.state.history = history_b
    recorder = Recorder(TestClient(app_b))
    app_a.state.http = recorder
    return TestClient(app_a), recorder, a


def test_should_answer_the_history_newer_than_since_and_refuse_malformed_parameters():
    client, _, _ = _instances()
    assert client.get("/ui/api/history").status_code == 401
    body = client.get("/ui/api/history", headers=AUTH).json()
    assert [s["t"] for s in body["samples"]] == [1_000_000, 1_010_000]
    assert (body["interval_s"], body["span_s"]) == (5.0, 900.0)
    newer = client.get("/ui/api/history?since=1000000", headers=AUTH).json()["samples"]
    assert [s["process_rate"] for s in newer] == [2.0]
    for path in ("/ui/api/history", "/ui/api/history/all"):
        for bad in ("abc", "-1", "1.5", "", str(2**64)):
            r = client.get(f"{path}?since={bad}", headers=AUTH)
            assert r.status_code == 422, (path, bad, r.text)


def test_should_gather_every_instance_history_signed_and_without_the_token():
    history_b = History()
    history_b.offer(1_005.0, lambda: {"process_rate": 7.0})
    client, recorder, _ = _instances(history_b)
    body = client.get("/ui/api/history/all?since=1000000", headers=AUTH).json()
    by_host = {i["endpoint"]: i for i in body["instances"]}
    assert set(by_host) == {"a:1", "b:2"} and by_host["a:1"]["self"] and not by_host["b:2"]["self"]
    assert [s["process_rate"] for s in by_host["a:1"]["samples"]] == [2.0]
    assert [s["process_rate"] for s in by_host["b:2"]["samples"]] == [7.0]
    assert [r.url.path for r in recorder.requests] == ["/ui/api/history"]
    assert recorder.requests[0].url.query == b"since=1000000"
    assert "authorization" not in recorder.requests[0].headers
    assert TOKEN not in str(recorder.requests[0].headers)


def test_should_show_an_unreachable_instance_without_waiting_for_it(monkeypatch):
    silent = socket.socket()  # connections accepted by the kernel, never read nor answered
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    client, _, a = _instances()
    hosts = AssignmentInfo(
        partitions_by_host={
            "a:1": frozenset({SourcePartition("input", 0)}),
            f"127.0.0.1:{port}": frozenset({SourcePartition("input", 1)}),
        }
    )
    a.threads[0].assignment = hosts
    client.app.state.http = httpx.Client()
    monkeypatch.setattr(peers, "PEER_TIMEOUT_S", 1.0)
    monkeypatch.setattr(console, "_local", lambda request: {"threads": [], "lags": {}})
    started = time.monotonic()
    views = {i["endpoint"]: i for i in client.get("/ui/api/history/all", headers=AUTH).json()["instances"]}
    instances = {i["endpoint"]: i for i in client.get("/ui/api/instances", headers=AUTH).json()["instances"]}
    assert time.monotonic() - started < 8  # two calls, each waiting PEER_TIMEOUT_S (1 s) at most
    for view in (views, instances):
        assert "unreachable" in view[f"127.0.0.1:{port}"]["error"]
        assert "error" not in view["a:1"]
    assert views[f"127.0.0.1:{port}"]["samples"] == []
    silent.close()
