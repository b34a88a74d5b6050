"""The worker's real HTTP server (uvicorn on a loopback port, a fake client behind it, no broker)
as an attacker tests it: oversized heads and bodies, too many headers, unauthenticated bodies,
and a slowloris; each is refused by the server before any route code runs."""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from streams_runtime.server.app import create_app
from streams_runtime.server.http_server import HttpServer
from tests.ports import free_port
from tests.unit.query.fakes import FakeClient, FakeThread

TOKEN = "client-token-of-the-limits-test"
HEADER_TIMEOUT_S = 2.0


@pytest.fixture
def server() -> Iterator[HttpServer]:
    thread = FakeThread("a-1")
    thread.host(0, {"k": 1})
    client = FakeClient([thread], endpoint="127.0.0.1:1", token=TOKEN)
    client.config = client.config.with_overrides(
        application_server_header_timeout_ms=int(HEADER_TIMEOUT_S * 1000),
        application_server_max_header_bytes=16_384,
        application_server_max_headers=100,
        application_server_max_body_bytes=1_048_576,
    )
    http = HttpServer(create_app(client), "127.0.0.1", free_port())
    http.start()
    try:
        yield http
    finally:
        http.stop()


def _connect(server: HttpServer) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=5.0)


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (5 s at most per read)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_should_serve_ordinary_requests_on_kept_alive_connections(server):
    with httpx.Client(base_url=f"http://{server.host}:{server.port}") as http:
        assert http.get("/health/live").status_code == 200
        for _ in range(3):
            r = http.get("/stores/counts/keys/k", headers={"Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 200 and r.json()["value"] == 1
        assert http.get("/stores").status_code == 401


def test_should_refuse_an_unauthenticated_body_before_reading_it(server):
    """The head of a 30 MB POST without the token is answered at once: nothing of it is awaited."""
    for length, status in ((30 * 1024 * 1024, 413), (1000, 401)):
        with _connect(server) as sock:
            sock.sendall(
                b"POST /admin/stores/counts/rebuild HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{" % length
            )
            answer = _answer(sock)
        assert _status(answer) == status, answer


def test_should_refuse_an_oversized_body_even_with_the_token(server):
    with _connect(server) as sock:
        sock.sendall(
            b"POST /admin/stores/counts/rebuild HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
            b"Content-Length: %d\r\n\r\n" % (TOKEN.encode(), 2 * 1024 * 1024)
        )
        answer = _answer(sock)
    assert _status(answer) == 413 and b"body_too_large" in answer


def test_should_refuse_a_chunked_body(server):
    with _connect(server) as sock:
        sock.sendall(
            b"POST /admin/stores/counts/rebuild HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        assert _status(_answer(sock)) == 411


def test_should_refuse_a_head_over_the_size_limit_with_431(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
        answer = _answer(sock)
    assert _status(answer) == 431 and b"headers_too_large" in answer


def test_should_stop_reading_an_8_mb_header(server):
    """The server closes the connection once the head passed the limit: 8 MB never all go in."""
    with _connect(server) as sock, pytest.raises(OSError):
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ")
        for _ in range(8 * 16):
            sock.sendall(b"a" * 65536)
        _answer(sock)  # not reached on Linux: the peer reset the connection


def test_should_refuse_too_many_header_fields_with_431(server):
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(101))
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n")
        assert _status(_answer(sock)) == 431
    fields = b"".join(b"X-F%d: v\r\n" % i for i in range(90))
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + fields + b"\r\n")
        assert _status(_answer(sock)) == 200


def test_should_close_200_slowloris_connections_after_the_header_timeout(server):
    """200 connections each trickle a header line every 0.5 s and never end their head: the
    server answers each 408 and closes it once the header timeout (2 s here) passed."""
    selector = selectors.DefaultSelector()
    opened = time.monotonic()
    for _ in range(200):
        sock = _connect(server)
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n")
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, bytearray())
    closed_after: list[float] = []
    answers: list[bytes] = []
    deadline = opened + HEADER_TIMEOUT_S + 10.0
    next_trickle = opened + 0.5
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.1):
            sock, received = key.fileobj, key.data
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            received += chunk
            if not chunk:
                closed_after.append(time.monotonic() - opened)
                answers.append(bytes(received))
                selector.unregister(sock)
                sock.close()
        if time.monotonic() >= next_trickle:
            next_trickle += 0.5
            for key in list(selector.get_map().values()):
                try:
                    key.fileobj.send(b"X-Slow: 1\r\n")
                except OSError:
                    pass
    still_open = len(selector.get_map())
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    assert still_open == 0, f"{still_open} of 200 slow connections still open after {deadline - opened:.0f}s"
    assert min(closed_after) >= HEADER_TIMEOUT_S - 0.1, "closed before the header timeout"
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers), {a[:40] for a in answers}
    with httpx.Client(base_url=f"http://{server.host}:{server.port}") as http:  # still serving
        assert http.get("/health/live").status_code == 200


def test_should_time_out_the_next_head_on_a_kept_alive_connection(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        assert _status(first) == 200
        started = time.monotonic()
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n")  # the next head, never finished
        answer = _answer(sock)
    assert _status(answer) == 408 and time.monotonic() - started >= HEADER_TIMEOUT_S - 0.1
