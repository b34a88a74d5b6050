"""Forwarding a key lookup to the instance that owns the key, signed, never with the client's token.

:func:`forward` is what a key route calls for a key whose partition this instance does not host:

* with ``application_server_forwarding_secret`` unset, nothing is forwarded: 409
  ``not_hosted_here`` naming the owner's advertised endpoint (``owner``), the store, the key and
  the partition, for the client to ask there itself;
* with it set, the request goes once to the owner with the raw path and query exactly as they came
  (only a ``.``/``..`` path segment and bytes outside printable ASCII are percent-escaped, which a
  key route decodes back to the same key), signed by :mod:`.signing`, without the
  ``Authorization`` header; the owner's answer is relayed only when its response signature proves
  the secret, else 502 ``owner_not_verified`` (logged at WARN: an endpoint advertised in the group
  does not hold the secret).

:class:`VerifyForwarded` (an ASGI middleware of the app) is the receiving side: a request
carrying the signature headers is answered only when its signature checks (else 401
``forwarding_unauthorized``; so is one with a body: nothing is read before the signature checks);
then it needs no bearer token, is never forwarded again, and its
answer -- whatever the status -- carries the response signature.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx
from fastapi import Request
from fastapi.responses import Response

from streams_runtime.config import StreamsConfig
from streams_runtime.server.signing import (
    RESPONSE_SIGNATURE,
    SIGNATURE,
    SIGNED_HEADERS,
    ForwardingSigner,
    SignatureError,
)

log = logging.getLogger("streams_runtime.server")

#: scope key of a verified forwarded request: ``{"by": sender endpoint, "signature": ...}``
FORWARDED_SCOPE = "streams.forwarded"
#: header naming the instance that relayed an answer
HOP_HEADER = "X-Streams-Forwarded-By"
ANSWERED_BY = "X-Streams-Answered-By"


class ApiError(Exception):
    """An error answer of the API: ``{"error": <code>, "message": <text>, **extra}``."""

    def __init__(self, status: int, error: str, message: str, **extra: object) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.extra = status, error, message, extra

    def body(self) -> dict[str, Any]:
        return {"error": self.error, "message": self.message, **self.extra}


def signer_for(config: StreamsConfig) -> ForwardingSigner | None:
    """The signer of an instance whose config sets the forwarding secret; None otherwise."""
    secret = config.application_server_forwarding_secret
    if not secret:
        return None
    window_ms = config.application_server_forwarding_window_ms
    return ForwardingSigner(secret, config.required_application_id(), window_s=window_ms / 1000)


def forwarded_by(request: Request) -> str | None:
    """The sending instance's endpoint when ``request`` is a verified forwarded request."""
    forwarded = request.scope.get(FORWARDED_SCOPE)
    return forwarded["by"] if forwarded else None


def raw_target(scope: Mapping[str, Any]) -> bytes:
    """The request target as it came: raw path, and ``?query`` when there is one."""
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query: bytes = scope.get("query_string") or b""
    return path + (b"?" + query if query else b"")


def _forwardable(target: bytes) -> bytes:
    """``target`` with ``.``/``..`` path segments and bytes outside printable ASCII percent-escaped
    (an HTTP client would drop the first and cannot send the second); all else unchanged."""
    path, sep, query = target.partition(b"?")
    segments = [b"%2E" * len(s) if s in (b".", b"..") else s for s in path.split(b"/")]

    def escape(raw: bytes) -> bytes:
        return b"".join(bytes([c]) if 0x21 <= c <= 0x7E else b"%%%02X" % c for c in raw)

    return escape(b"/".join(segments)) + sep + escape(query)


def forward(request: Request, store: str, key: Any, partition: int, owner: str, me: str) -> Response:
    """Ask ``owner`` (module docstring); ``key`` as JSON goes in the 409 body."""
    signer: ForwardingSigner | None = request.app.state.signer
    if signer is None:
        raise ApiError(
            409,
            "not_hosted_here",
            f"store {store} partition {partition} is hosted on {owner}, not on {me}; ask {owner} "
            "(forwarding between instances is off: application_server_forwarding_secret is not set)",
            store=store,
            key=key,
            partition=partition,
            owner=owner,
        )
    url = httpx.URL(f"http://{owner}").copy_with(raw_path=_forwardable(raw_target(request.scope)))
    headers = signer.sign_request("GET", url.raw_path.decode("ascii"), b"", me, owner)
    try:
        answer = request.app.state.http.request("GET", url, headers=headers)
    except httpx.HTTPError as exc:
        raise ApiError(
            503,
            "owner_unreachable",
            f"store {store} partition {partition} is hosted on {owner}, which did not answer: {exc}",
        ) from exc
    content_type = answer.headers.get("content-type", "")
    try:
        signer.verify_response(
            headers[SIGNATURE],
            answer.status_code,
            content_type,
            answer.content,
            answer.headers.get(RESPONSE_SIGNATURE),
        )
    except SignatureError as exc:
        log.warning(
            "refused the answer of %s (the advertised owner of store %s partition %s): %s",
            owner,
            store,
            partition,
            exc,
        )
        raise ApiError(
            502,
            "owner_not_verified",
            f"store {store} partition {partition} is advertised by {owner}, whose answer does not "
            f"prove the forwarding secret ({exc}); nothing of it is relayed",
        ) from exc
    return Response(
        answer.content,
        status_code=answer.status_code,
        media_type=content_type or "application/json",
        headers={HOP_HEADER: me, ANSWERED_BY: owner},
    )


async def _reject(send: Any, status: int, error: str, message: str) -> None:
    body = json.dumps({"error": error, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class VerifyForwarded:
    """ASGI middleware: verifies forwarded requests and signs their answers (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not any(h.lower() in headers for h in SIGNED_HEADERS):
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        signer: ForwardingSigner | None = state.signer
        if signer is None:
            await _reject(
                send,
                401,
                "forwarding_unauthorized",
                "this instance accepts no forwarded requests "
                "(application_server_forwarding_secret is not set)",
            )
            return
        if headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
            await _reject(send, 401, "forwarding_unauthorized", "a forwarded request carries no body")
            return
        try:
            sender = signer.verify_request(
                scope["method"],
                raw_target(scope).decode("latin-1"),
                b"",
                headers,
                str(state.streams.config.application_server),
            )
        except SignatureError as exc:
            log.warning("refused a forwarded request for %r: %s", scope.get("path"), exc)
            await _reject(send, 401, "forwarding_unauthorized", str(exc))
            return
        request_signature = headers[SIGNATURE.lower()]
        scope[FORWARDED_SCOPE] = {"by": sender, "signature": request_signature}
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def signing_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            answer = b"".join(chunks)
            response_headers = list(start.get("headers", []))
            content_type = next(
                (v.decode("latin-1") for k, v in response_headers if k.lower() == b"content-type"), ""
            )
            signature = signer.sign_response(request_signature, start["status"], content_type, answer)
            response_headers.append((RESPONSE_SIGNATURE.lower().encode(), signature.encode()))
            await send({**start, "headers": response_headers})
            await send({"type": "http.response.body", "body": answer})

        await self.app(scope, receive, signing_send)
