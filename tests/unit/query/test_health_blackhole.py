"""/health/* stay fast while the owner of some keys black-holes its connections.

The real HTTP server of instance A (a fake client behind it, no broker) forwards lookups of
partitions 2 and 3 to an advertised owner that is a socket accepting connections and never
answering. 60 such lookups at once fill the thread pool FastAPI runs blocking routes in; the
liveness and readiness probes meanwhile answer, each well within a tenth of the forwarding
timeout (30 s): a probe queued behind the pool would wait until a lookup gave up. Then the owner
goes away and every lookup ends in 503.

The probes' speed is not asserted in milliseconds: on a 2-core machine under a load average of 30
the median probe took 172 ms, scheduler noise rather than waiting. An earlier version held the
lookups only for a 3 s forwarding timeout, so under load the wait for the pool to fill and the
probes could outlast the hold and the test failed for the machine's sake, not the server's.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.server.app import create_app
from streams_runtime.server.http_server import HttpServer
from tests.ports import free_port
from tests.unit.query.fakes import FakeClient, FakeThread, partition_of

SECRET = "forwarding-secret-of-the-blackhole-test"
TOKEN = "client-token-of-the-blackhole-test"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LOOKUPS = 60
FORWARD_TIMEOUT_S = 30.0
#: how long the pool may take to fill (a condition waited for, normally milliseconds)
FILL_WAIT_S = 20.0


class BlackHole:
    """Accepts every connection and never reads nor answers, until closed.

    Closing shuts the listener down before closing it: on Linux a listening socket closed while
    another thread is blocked in its ``accept()`` goes on accepting (the blocked call keeps it
    alive), so a lookup forwarded after the close was still taken in and held until its 30 s
    timeout, as long as the lookup's own client waited. A connection accepted as the hole closes
    is closed at once.
    """

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.endpoint = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self.accepted.append(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            held, self.accepted = self.accepted, []
        with contextlib.suppress(OSError):  # not connected: shutdown still ends accept() on Linux
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for conn in held:
            conn.close()


def _timed(http: httpx.Client, path: str) -> tuple[int, float]:
    started = time.perf_counter()
    status = http.get(path).status_code
    return status, time.perf_counter() - started


def test_should_answer_health_probes_fast_while_an_owner_black_holes_lookups():
    hole = BlackHole()
    port = free_port()
    me = f"127.0.0.1:{port}"
    hosts = AssignmentInfo(
        partitions_by_host={
            me: frozenset(SourcePartition("input", p) for p in (0, 1)),
            hole.endpoint: frozenset(SourcePartition("input", p) for p in (2, 3)),
        }
    )
    thread = FakeThread("a-1", hosts)
    for p in (0, 1):
        thread.host(p, {})
    client = FakeClient([thread], endpoint=me, token=TOKEN, forwarding_secret=SECRET)
    app = create_app(client)
    app.state.http = httpx.Client(timeout=FORWARD_TIMEOUT_S, limits=httpx.Limits(max_connections=LOOKUPS))
    server = HttpServer(app, "127.0.0.1", port)
    server.start()
    base = f"http://127.0.0.1:{port}"
    keys = [f"k{i}" for i in range(1000) if partition_of(f"k{i}") >= 2][:LOOKUPS]
    lookups = ThreadPoolExecutor(LOOKUPS)
    try:
        with (
            httpx.Client(base_url=base, timeout=30.0) as http,
            httpx.Client(base_url=base, timeout=30.0) as probe,
        ):
            assert probe.get("/health/ready").status_code == 200
            answers = [lookups.submit(http.get, f"/stores/counts/keys/{k}", headers=AUTH) for k in keys]
            deadline = time.monotonic() + FILL_WAIT_S
            while len(hole.accepted) < 40 and time.monotonic() < deadline:  # the pool is full
                time.sleep(0.01)
            assert len(hole.accepted) >= 40, len(hole.accepted)
            probes = [_timed(probe, path) for _ in range(10) for path in ("/health/live", "/health/ready")]
            ended_early = sum(f.done() for f in answers)
            hole.close()  # the owner goes away: the held lookups end now
            statuses = [f.result().status_code for f in answers]
    finally:
        lookups.shutdown(wait=True)
        server.stop()
        hole.close()
    assert {status for status, _ in probes} == {200}
    slowest = max(seconds for _, seconds in probes)
    assert slowest < FORWARD_TIMEOUT_S / 10, f"slowest health probe took {slowest * 1000:.0f} ms"
    assert ended_early == 0, "lookups ended before the probes were timed: the owner did not hold them"
    assert set(statuses) == {503}, statuses
