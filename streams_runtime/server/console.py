"""The live console of a worker: ``GET /ui`` (a page with plain JS shipped in the package).

The page (``/ui``) and its assets (``/ui/static/*``) hold no data and need no token; every data
call of the page carries the bearer token (asked once, kept in the tab's session storage) like any
API client. The page shows the topology picture, every instance of the application with its
threads and tasks, per-partition lag and restore progress, store sizes, the process rate of the
last minutes as a small chart, and a key lookup through the routed query API
(``/stores/{store}/keys/{key}``). It refreshes every few seconds from:

* ``GET /ui/api/topology.svg``: the topology as SVG (:mod:`streams_runtime.processor.topology_graph`);
* ``GET /ui/api/local``: this instance's process id, its threads with their tasks (kind: active,
  standby or warm-up from the thread's assignment; state: RUNNING or RESTORING for an active task,
  REPLAYING for the others), and its store partitions' positions and ends;
* ``GET /ui/api/instances``: ``/ui/api/local`` of every instance in the assignment metadata (and
  this one), read here or from the instance's endpoint through a request signed with the
  inter-instance secret, never the caller's token (an instance that does not answer, or whose
  answer does not prove the secret, is listed with the error);
* ``GET /stores``, ``GET /metrics`` of this instance.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from streams_runtime.errors import StreamsError
from streams_runtime.processor.topology_graph import render
from streams_runtime.server.auth import require_token
from streams_runtime.server.signing import RESPONSE_SIGNATURE, SIGNATURE, SignatureError

#: the per-instance view other instances are asked for (signed, see :func:`_remote`)
LOCAL_PATH = "/ui/api/local"
#: longest wait for a stream thread's lock when reading its tasks' states (never stall the page)
LOCK_TIMEOUT_S = 0.25
_STATIC = Path(__file__).parent / "static"
_ASSETS = {"console.js": "text/javascript", "console.css": "text/css"}

page = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/ui/api", tags=["console"], dependencies=[Depends(require_token)])
_svg_lock = threading.Lock()


@page.get("/ui")
def console_page() -> HTMLResponse:
    return HTMLResponse((_STATIC / "console.html").read_text(encoding="utf-8"))


@page.get("/ui/static/{name}")
def console_asset(name: str) -> Response:
    if name not in _ASSETS:
        return JSONResponse({"error": "not_found", "message": f"no asset {name!r}"}, status_code=404)
    return FileResponse(_STATIC / name, media_type=_ASSETS[name])


@api.get("/topology.svg", summary="The topology picture (SVG)", response_class=Response)
def topology_svg(request: Request) -> Response:
    state = request.app.state
    with _svg_lock:
        svg = getattr(state, "topology_svg", None)
        if svg is None:
            try:
                svg = render(state.streams.topology, "svg")
            except StreamsError as exc:  # Graphviz missing: say so in the picture's place
                raise HTTPException(503, {"error": "no_picture", "message": str(exc)}) from exc
            state.topology_svg = svg
    return Response(svg, media_type="image/svg+xml")


@api.get("/instances", summary="Every instance: threads, tasks, store lags")
def instances(request: Request) -> dict[str, Any]:
    streams = request.app.state.streams
    me = streams.config["application_server"] or ""
    endpoints = sorted({str(m.host_info) for m in _all_metadata(streams)} | ({me} if me else set()))
    out = []
    for endpoint in endpoints or [me]:
        if endpoint == me:
            out.append({"endpoint": me, "self": True, **_local(request)})
        else:
            out.append({"endpoint": endpoint, "self": False, **_remote(request, endpoint)})
    return {"application_id": streams.config["application_id"], "instances": out}


def _all_metadata(streams: Any) -> list[Any]:
    try:
        return list(streams.all_metadata())
    except StreamsError:
        return []


@api.get("/local", summary="This instance: threads, tasks with their kind and state, store lags")
def local(request: Request) -> dict[str, Any]:
    return _local(request)


def _local(request: Request) -> dict[str, Any]:
    from streams_runtime.server.admin import list_tasks

    streams = request.app.state.streams
    tasks = list_tasks(request)
    threads = {t.name: t for t in streams.local_threads()}
    for entry in tasks["threads"]:
        warmups, restoring = _warmups_and_restoring(threads.get(entry["name"]))
        for task in entry["tasks"]:
            if task["kind"] == "standby" and task["task_id"] in warmups:
                task["kind"] = "warm-up"
            if task["kind"] == "active":
                task["state"] = "RESTORING" if task["task_id"] in restoring else "RUNNING"
            else:
                task["state"] = "REPLAYING"
    lags = streams.all_local_store_partition_lags()
    return {
        "process_id": tasks["process_id"],
        "state": tasks["state"],
        "threads": tasks["threads"],
        "lags": {
            store: {
                str(p): {"current": i.current_offset_position, "end": i.end_offset_position}
                for p, i in sorted(by_p.items())
            }
            for store, by_p in sorted(lags.items())
        },
    }


def _warmups_and_restoring(thread: Any) -> tuple[set[str], set[str]]:
    """A thread's warm-up task ids (from its assignment) and its active tasks still restoring."""
    if thread is None:
        return set(), set()
    info = thread.assignment
    warmups = {str(t) for t in getattr(info, "warmup_tasks", ())} if info is not None else set()
    restoring: set[str] = set()
    if thread.query_lock.acquire(timeout=LOCK_TIMEOUT_S):
        try:
            manager = thread.task_manager
            if manager is not None:
                restoring = {str(t) for t in manager.tasks if manager.is_restoring(t)}
        finally:
            thread.query_lock.release()
    return warmups, restoring


def _remote(request: Request, endpoint: str) -> dict[str, Any]:
    """Another instance's ``/ui/api/local``, asked like a forwarded key lookup: signed with the
    inter-instance secret, never with the caller's token, and believed only when the answer proves
    the same secret (an endpoint advertised in the group may belong to anyone who can join it)."""
    signer = request.app.state.signer
    if signer is None:
        return {
            "error": "not asked: reading other instances needs application_server_forwarding_secret",
            "threads": [],
            "lags": {},
        }
    me = str(request.app.state.streams.config["application_server"])
    headers = signer.sign_request("GET", LOCAL_PATH, b"", me, endpoint)
    try:
        url = httpx.URL(f"http://{endpoint}{LOCAL_PATH}")
        answer = request.app.state.http.request("GET", url, headers=headers)
        signer.verify_response(
            headers[SIGNATURE],
            answer.status_code,
            answer.headers.get("content-type", ""),
            answer.content,
            answer.headers.get(RESPONSE_SIGNATURE),
        )
        if answer.status_code != 200:
            return {"error": f"answered {answer.status_code}", "threads": [], "lags": {}}
        body = answer.json()
        return {
            "process_id": body.get("process_id"),
            "state": body["state"],
            "threads": body["threads"],
            "lags": body["lags"],
        }
    except SignatureError as exc:
        return {
            "error": f"answer refused (does not prove the forwarding secret: {exc})",
            "threads": [],
            "lags": {},
        }
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        return {"error": f"did not answer: {exc}", "threads": [], "lags": {}}
