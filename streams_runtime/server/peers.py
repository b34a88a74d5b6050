"""Asking the application's other instances for their console views, all at once and briefly.

The endpoints asked are those of the group's assignment metadata (``all_metadata()``), never one
named by the caller. Each request is signed with the inter-instance secret for that receiver
(:mod:`.signing`), like a forwarded key lookup; the caller's bearer token never leaves this
instance. An answer is believed only when it proves the same secret. The instances are asked in
parallel, each for at most ``PEER_TIMEOUT_S``: one that does not answer is reported with the
error and does not hold up the others.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from fastapi import Request

from streams_runtime.errors import StreamsError
from streams_runtime.server.signing import RESPONSE_SIGNATURE, SIGNATURE, SignatureError

#: longest wait for one other instance's answer
PEER_TIMEOUT_S = 3.0
#: most instances asked at once
MAX_PARALLEL = 8


def endpoints(streams: Any) -> tuple[str, list[str]]:
    """This instance's endpoint and every endpoint of the group's assignment (and this one)."""
    me = str(streams.config.application_server or "")
    try:
        hosts = {str(m.host_info) for m in streams.all_metadata()}
    except StreamsError:
        hosts = set()
    return me, sorted(hosts | ({me} if me else set())) or [me]


def signed_get(request: Request, endpoint: str, target: str) -> dict[str, Any]:
    """``GET target`` (path and query) of another instance: its JSON body, or ``{"error": ...}``."""
    signer = request.app.state.signer
    if signer is None:
        return {"error": "not asked: reading other instances needs application_server_forwarding_secret"}
    me = str(request.app.state.streams.config.application_server)
    headers = signer.sign_request("GET", target, b"", me, endpoint)
    try:
        url = httpx.URL(f"http://{endpoint}{target}")
        answer = request.app.state.http.request("GET", url, headers=headers, timeout=PEER_TIMEOUT_S)
        signer.verify_response(
            headers[SIGNATURE],
            answer.status_code,
            answer.headers.get("content-type", ""),
            answer.content,
            answer.headers.get(RESPONSE_SIGNATURE),
        )
        if answer.status_code != 200:
            return {"error": f"answered {answer.status_code}"}
        body = answer.json()
        if not isinstance(body, dict):
            return {"error": "answered something else than a JSON object"}
        return body
    except SignatureError as exc:
        return {"error": f"answer refused (does not prove the forwarding secret: {exc})"}
    except (httpx.HTTPError, ValueError) as exc:
        return {"error": f"unreachable: {exc or type(exc).__name__}"}


def gather(
    request: Request, local: Callable[[], dict[str, Any]], ask: Callable[[str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """``{"endpoint", "self", **view}`` of every instance: ``local()`` here, ``ask(endpoint)`` for
    the others (in parallel)."""
    me, hosts = endpoints(request.app.state.streams)
    others = [h for h in hosts if h != me]
    views: dict[str, dict[str, Any]] = {}
    if others:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(others))) as pool:
            for host, view in zip(others, pool.map(ask, others), strict=True):
                views[host] = view
    out = []
    for host in hosts:
        view = local() if host == me else views[host]
        out.append({"endpoint": host, "self": host == me, **view})
    return out
