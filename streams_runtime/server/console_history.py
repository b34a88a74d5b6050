"""The console's charts: the history of this instance and of every instance of the application.

* ``GET /ui/api/history?since=<ms>``: ``{"interval_s", "span_s", "samples"}`` of this instance,
  the samples newer than ``since`` (all without it), oldest first (:mod:`.history`, each sample as
  :mod:`.figures` reads it). Also answered to a request signed by another instance.
* ``GET /ui/api/history/all?since=<ms>``: ``{"application_id", "instances": [{"endpoint",
  "self", "interval_s", "span_s", "samples"} or {"endpoint", "self", "error", "samples": []}]}``:
  the same of every instance of the group's assignment, asked in parallel through
  :mod:`.peers` (signed, never with the caller's token, each for a few seconds at most).

``since`` must be a whole number of milliseconds, 0 or more: anything else is answered 422.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from streams_runtime.server.auth import require_token
from streams_runtime.server.peers import gather, signed_get

HISTORY_PATH = "/ui/api/history"
MAX_MS = 2**63 - 1

Since = Annotated[
    int | None, Query(ge=0, le=MAX_MS, description="only the samples newer than this (ms since the epoch)")
]

api = APIRouter(prefix="/ui/api", tags=["console"], dependencies=[Depends(require_token)])


@api.get("/history", summary="This instance's figures of the last minutes, oldest first")
def history(request: Request, since: Since = None) -> dict[str, Any]:
    return _local(request, since)


@api.get("/history/all", summary="Every instance's figures of the last minutes")
def history_all(request: Request, since: Since = None) -> dict[str, Any]:
    target = HISTORY_PATH if since is None else f"{HISTORY_PATH}?since={since}"
    views = gather(request, lambda: _local(request, since), lambda host: _remote(request, host, target))
    return {"application_id": request.app.state.streams.config.application_id, "instances": views}


def _local(request: Request, since: int | None) -> dict[str, Any]:
    history = request.app.state.history
    return {"interval_s": history.interval_s, "span_s": history.span_s, "samples": history.since(since)}


def _remote(request: Request, endpoint: str, target: str) -> dict[str, Any]:
    body = signed_get(request, endpoint, target)
    samples = body.get("samples")
    if "error" in body or not isinstance(samples, list):
        return {"error": body.get("error", "answer without samples"), "samples": []}
    return {"interval_s": body.get("interval_s"), "span_s": body.get("span_s"), "samples": samples}
