"""What the HTTP server reads of a request before any route runs, and for how long.

uvicorn serves the API with its h11 protocol, whose own limit bounds the request head
(``h11_max_incomplete_event_size``); what uvicorn lacks is added here, smallest first:

* :class:`GuardedH11Protocol` (the connection): a **header read timeout** -- from the connection's
  start, or from the first byte of the next request on a kept-alive connection, the head must be
  complete within ``application_server_header_timeout_ms``, else 408 and the connection closes (a
  slowloris holds nothing); and 431 rather than uvicorn's 400 when the head outgrew
  ``application_server_max_header_bytes``.
* :class:`RequestLimits` (ASGI, the app's outermost middleware): more header fields than
  ``application_server_max_headers``, or a head over the byte limit that arrived whole (h11
  bounds only a head still incomplete): 431; a body without a Content-Length (chunked): 411; a
  Content-Length over ``application_server_max_body_bytes``: 413. Nothing of the body is read
  for these answers, and each closes the connection.

The token is checked next, before any body is read (:class:`~.auth.TokenGate`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from streams_runtime.config import StreamsConfig
from streams_runtime.server.error_handlers import http_error_response


@dataclass(frozen=True)
class HttpLimits:
    """The limits of one HTTP server (the ``application_server_*`` configs, in seconds and bytes)."""

    header_timeout_s: float = 10.0
    max_header_bytes: int = 16_384
    max_headers: int = 100
    max_body_bytes: int = 1_048_576

    @classmethod
    def from_config(cls, config: StreamsConfig) -> HttpLimits:
        """The limits ``config`` sets."""
        return cls(
            header_timeout_s=config.application_server_header_timeout_ms / 1000,
            max_header_bytes=config.application_server_max_header_bytes,
            max_headers=config.application_server_max_headers,
            max_body_bytes=config.application_server_max_body_bytes,
        )


def _raw_answer(status: int, reason: str, error: str, message: str) -> bytes:
    body = json.dumps({"error": error, "message": message}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header read timeout and 431 for a head over the limit.

    :func:`protocol_for` makes the class uvicorn instantiates (``limits`` set); uvicorn gives it
    ``h11_max_incomplete_event_size = limits.max_header_bytes``.
    """

    limits: HttpLimits = HttpLimits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        self._requests_begun = False
        super().connection_made(transport)
        self._watch_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_head()

    def send_400_response(self, msg: str) -> None:
        """h11 refused the request; 431 when its head outgrew the limit, else uvicorn's 400."""
        self._stop_head_timer()
        if len(self.conn.trailing_data[0]) > self.limits.max_header_bytes:
            self.logger.warning("refused a request head over %d bytes", self.limits.max_header_bytes)
            message = f"the request head is limited to {self.limits.max_header_bytes} bytes"
            self.transport.write(
                _raw_answer(431, "Request Header Fields Too Large", "headers_too_large", message)
            )
            self.transport.close()
            return
        super().send_400_response(msg)

    # ----------------------------------------------------------------- the header read timeout
    def _watch_head(self) -> None:
        """Run the timer while a head is awaited: on a new connection, or once bytes of the next
        request are buffered; stop it when h11 has the whole head (or the connection closes)."""
        if self.transport is None or self.transport.is_closing():
            self._stop_head_timer()
            return
        awaiting = self.conn.their_state is h11.IDLE and (
            not self._requests_begun or bool(self.conn.trailing_data[0])
        )
        if self.conn.their_state is not h11.IDLE:
            self._requests_begun = True
        if not awaiting:
            self._stop_head_timer()
        elif self._head_timer is None:
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        message = f"the request head did not arrive within {self.limits.header_timeout_s:g}s"
        self.transport.write(_raw_answer(408, "Request Timeout", "request_timeout", message))
        self.transport.close()


def protocol_for(limits: HttpLimits) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn instantiates per connection, bound to ``limits``."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


class RequestLimits:
    """ASGI middleware: header count and body size refused before the app sees the request."""

    def __init__(self, app: Any, limits: HttpLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                status, message = refusal
                response = http_error_response(status, message, {"connection": "close"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: dict[str, Any]) -> tuple[int, str] | None:
        limits, headers = self.limits, scope["headers"]
        if len(headers) > limits.max_headers:
            return 431, f"a request carries at most {limits.max_headers} header fields"
        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if target + sum(len(n) + len(v) + 4 for n, v in headers) > limits.max_header_bytes:
            return 431, f"the request head is limited to {limits.max_header_bytes} bytes"
        length = None
        for name, value in headers:
            if name.lower() == b"transfer-encoding":
                return 411, "a request body needs a Content-Length header"
            if name.lower() == b"content-length":
                length = int(value) if value.isdigit() else None
        if length is not None and length > limits.max_body_bytes:
            return 413, f"a request body is limited to {limits.max_body_bytes} bytes"
        return None
