"""The live console of a worker: ``GET /ui`` (a page with plain JS shipped in the package).

The page (``/ui``) and its assets (``/ui/static/*``) hold no data and need no token; every data
call of the page carries the bearer token (asked once, kept in the tab's session storage) like any
API client. The page shows the topology (one panel per sub-topology), every instance of the
application with its threads and tasks, per-partition store lag and restore progress, store sizes
per instance, charts of the last 15 minutes of every instance (:mod:`.console_history`) and a key
lookup through the routed query API (``/stores/{store}/keys/{key}``). It refreshes every few
seconds from the routes below (all but the first):

* ``GET /ui/api/topology.svg``: the whole topology as one SVG
  (:mod:`streams_runtime.processor.topology_graph`);
* ``GET /ui/api/topology/panels``: ``{"panels": [{"label", "svg"}]}``, one picture per sub-topology
  (its topics and changelogs included), each readable at the page's width;
* ``GET /ui/api/local``: this instance's process id, its threads with their tasks (kind: active,
  standby or warm-up from the thread's assignment; state: RUNNING or RESTORING for an active task,
  REPLAYING for the others), its store partitions' positions and ends, and its stores' sizes
  (approximate entries over its active tasks);
* ``GET /ui/api/instances``: ``/ui/api/local`` of every instance in the assignment metadata (and
  this one), read here or from the instance's endpoint through a request signed with the
  inter-instance secret, never the caller's token (:mod:`.peers`: an instance that does not
  answer within a few seconds, or whose answer does not prove the secret, is listed with the
  error);
* ``GET /ui/api/history/all``: the charts' samples (:mod:`.console_history`);
* ``GET /stores`` of this instance (the key lookup's list of stores).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from streams_runtime.errors import StreamsError
from streams_runtime.processor.topology_graph import TopologyGraph, render
from streams_runtime.server.auth import require_token
from streams_runtime.server.figures import store_sizes
from streams_runtime.server.peers import gather, signed_get

if TYPE_CHECKING:
    from streams_runtime.processor.internals.stream_thread import StreamThread

#: the per-instance view other instances are asked for (signed, see :func:`_remote`)
LOCAL_PATH = "/ui/api/local"
#: longest wait for a stream thread's lock when reading its tasks' states (never stall the page)
LOCK_TIMEOUT_S = 0.25
_STATIC = Path(__file__).parent / "static"
_ASSETS = {"console.js": "text/javascript", "charts.js": "text/javascript", "console.css": "text/css"}

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


@api.get("/topology/panels", summary="The topology as one SVG panel per sub-topology")
def topology_panels(request: Request) -> dict[str, Any]:
    state = request.app.state
    with _svg_lock:
        panels = getattr(state, "topology_panels", None)
        if panels is None:
            try:
                graph = TopologyGraph.of(state.streams.topology)
                panels = [{"label": label, "svg": g.to_svg("TB")} for label, g in graph.panels()]
            except StreamsError as exc:  # Graphviz missing: say so in the pictures' place
                raise HTTPException(503, {"error": "no_picture", "message": str(exc)}) from exc
            state.topology_panels = panels
    return {"panels": panels}


@api.get("/instances", summary="Every instance: threads, tasks, store lags and sizes")
def instances(request: Request) -> dict[str, Any]:
    views = gather(request, lambda: _local(request), lambda host: _remote(request, host))
    return {"application_id": request.app.state.streams.config.application_id, "instances": views}


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
        "stores": store_sizes(list(streams.local_threads())),
    }


def _warmups_and_restoring(thread: StreamThread | None) -> tuple[set[str], set[str]]:
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
    """Another instance's ``/ui/api/local``, asked like a forwarded key lookup (:mod:`.peers`):
    signed with the inter-instance secret, never with the caller's token, and believed only when
    the answer proves the same secret (an endpoint advertised in the group may belong to anyone
    who can join it)."""
    body = signed_get(request, endpoint, LOCAL_PATH)
    if "error" in body:
        return {"error": body["error"], "threads": [], "lags": {}, "stores": {}}
    try:
        return {
            "process_id": body.get("process_id"),
            "state": body["state"],
            "threads": body["threads"],
            "lags": body["lags"],
            "stores": body.get("stores", {}),
        }
    except KeyError as exc:
        return {"error": f"answer without {exc}", "threads": [], "lags": {}, "stores": {}}
