"""``/health/live`` and ``/health/ready``: answered on the server's event loop, never behind
forwarding or store work.

Both routes are ``async``: they never take a seat in the thread pool where FastAPI runs the other
(blocking) routes, so a pool full of lookups forwarded to an owner that does not answer delays
neither of them.

* ``GET /health/live``: 200 unless the client is ERROR, PENDING_ERROR or NOT_RUNNING (503); it
  reads the client's state attribute and nothing else.
* ``GET /health/ready``: 200 only when the client is RUNNING and every active task is RUNNING;
  else 503 with a reason. Which tasks restore is read under each stream thread's query lock, which
  a busy thread holds; :class:`Readiness` reads it on its own sampler thread and the route waits at
  most ``READY_WAIT_S`` for that sample, else answers the last one (a thread busy for longer than
  that leaves the answer one sample behind).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

#: longest a readiness probe waits for a fresh sample before answering the last one
READY_WAIT_S = 0.05
#: longest the sampler waits for one stream thread's query lock
LOCK_WAIT_S = 2.0
_DEAD_STATES = ("ERROR", "NOT_RUNNING", "PENDING_ERROR")


def router() -> APIRouter:
    routes = APIRouter(prefix="/health", tags=["health"])

    @routes.get("/live", summary="Liveness: 200 unless the client failed or stopped")
    async def live(request: Request) -> JSONResponse:
        state = request.app.state.streams.state.name
        ok = state not in _DEAD_STATES
        return JSONResponse(
            {"status": "alive" if ok else "dead", "state": state}, status_code=200 if ok else 503
        )

    @routes.get("/ready", summary="Readiness: 200 only when RUNNING with every active task RUNNING")
    async def ready(request: Request) -> JSONResponse:
        streams = request.app.state.streams
        state = streams.state.name
        if state != "RUNNING":
            return _not_ready(state, f"the client is {state}, not RUNNING")
        restoring = await request.app.state.readiness.restoring()
        if restoring:
            return _not_ready(state, f"active tasks not RUNNING yet (restoring): {', '.join(restoring)}")
        return JSONResponse({"status": "ready", "state": state})

    return routes


def _not_ready(state: str, reason: str) -> JSONResponse:
    return JSONResponse({"status": "not_ready", "state": state, "reason": reason}, status_code=503)


class Readiness:
    """Samples of the client's restoring tasks, taken on a sampler thread of their own."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams
        self._lock = threading.Lock()
        self._pending: Future[list[str]] | None = None
        self._last: list[str] | None = None

    async def restoring(self) -> list[str]:
        """The freshest sample within ``READY_WAIT_S``: a new one, else the last one."""
        with self._lock:
            if self._pending is None or self._pending.done():
                self._pending = Future()
                threading.Thread(
                    target=self._sample, args=(self._pending,), name="http-readiness", daemon=True
                ).start()
            pending = self._pending
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(pending)), READY_WAIT_S)
        except TimeoutError:
            last = self._last
            return last if last is not None else ["readiness not sampled yet (a stream thread is busy)"]

    def _sample(self, pending: Future[list[str]]) -> None:
        try:
            sample = _restoring_tasks(self._streams)
        except BaseException as exc:  # the probe answers 503 with it
            sample = [f"readiness could not be sampled: {exc}"]
        self._last = sample
        pending.set_result(sample)


def _restoring_tasks(streams: Any) -> list[str]:
    restoring = []
    for thread in streams.local_threads():
        if thread.state != "RUNNING":
            restoring.append(f"thread {thread.name} is {thread.state}")
            continue
        if not thread.query_lock.acquire(timeout=LOCK_WAIT_S):
            restoring.append(f"thread {thread.name} is busy")
            continue
        try:
            manager = thread.task_manager
            if manager is not None:
                restoring.extend(str(t) for t in sorted(manager.tasks) if manager.is_restoring(t))
        finally:
            thread.query_lock.release()
    return restoring
