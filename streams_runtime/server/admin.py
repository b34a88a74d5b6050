"""Admin routes of a worker's HTTP endpoint: local tasks, and state-store rebuilds.

Included by the worker's app (``streams_runtime.server``), which puts the running
:class:`~streams_runtime.KafkaStreams` on ``app.state.streams``; every route here needs the
token (``Authorization: Bearer <application_server_token>`` when one is configured).

- ``GET /admin/tasks``: the instance's threads with their active (and standby) tasks, each task's
  partitions and stores.
- ``GET /admin/stores/{store}/instances``: every task of the store and the instance (its
  ``application_server`` endpoint) running it, active and standby, for the WHOLE group, from the
  last assignment this instance applied (``state_rebuild.store_instances``); ``unassigned_tasks``
  have no active owner now. What the state-rebuild DAG asks first, of any one instance, to send
  every owner its own tasks. 404 no such store, 409 the client is not running.
- ``POST /admin/stores/{store}/rebuild`` with ``{"tasks": ["0_1", ...] | null, "timeout_s": 120}``:
  :meth:`KafkaStreams.rebuild_state` for the local active tasks owning ``store`` (all of them when
  ``tasks`` is null); answers ``{"store", "endpoint", "ok", "reports": [per-task report]}``.
  Errors are ``{"error": <code>, "message": <text>}`` like the other routes: 404 no such store,
  409 a task asked for is not active here (or left during the rebuild), or the client is not
  running; 422 a task id that does not parse; 504 the restore did not finish in time. The call
  blocks until every task restored (run it in a worker thread: FastAPI runs plain ``def`` routes
  in its thread pool).

The admin calls write nothing but through the runtime; they never touch the stores themselves.
"""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from streams_runtime.errors import StreamsError, StreamsNotStartedError, UnknownStateStoreError
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.state_rebuild import (
    RebuildTimeoutError,
    TasksNotOwnedError,
    UnknownStoreError,
    store_instances,
)
from streams_runtime.processor.task_id import TaskId
from streams_runtime.server.auth import require_token

__all__ = ["RebuildRequest", "router"]

router = APIRouter(prefix="/admin", tags=["admin"], dependencies=[Depends(require_token)])

#: longest rebuild a caller may ask for (seconds)
MAX_REBUILD_TIMEOUT_S = 3600.0


class RebuildRequest(BaseModel):
    """Body of ``POST /admin/stores/{store}/rebuild``."""

    tasks: list[str] | None = Field(
        default=None, description='Task ids ("0_1"); null: every local task owning the store.'
    )
    timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=MAX_REBUILD_TIMEOUT_S,
        description="How long to wait for the tasks to restore.",
    )


class _LocalTask(Protocol):
    """A task of ``KafkaStreams.metadata_for_local_threads()`` (its ``TaskMetadata``)."""

    @property
    def task_id(self) -> TaskId: ...

    @property
    def topic_partitions(self) -> tuple[tuple[str, int], ...]: ...


def _error(status: int, code: str, message: str) -> JSONResponse:
    """The error body of every worker route: ``{"error": <code>, "message": <text>}``."""
    return JSONResponse({"error": code, "message": message}, status_code=status)


def _streams(request: Request) -> Any:
    streams = getattr(request.app.state, "streams", None)
    if streams is None:
        raise HTTPException(503, "no KafkaStreams client is attached to this endpoint")
    return streams


def _stores_by_subtopology(streams: Any) -> dict[int, list[str]]:
    infos = topology_info.sub_topologies(streams.topology.internal_builder)
    return {info.id: list(info.stores) for info in infos}


@router.get("/tasks", summary="Local threads and their tasks (with partitions and stores)")
def list_tasks(request: Request) -> dict[str, Any]:
    streams = _streams(request)
    stores = _stores_by_subtopology(streams)

    def describe(task: _LocalTask, kind: str) -> dict[str, Any]:
        return {
            "task_id": str(task.task_id),
            "kind": kind,
            "partitions": [f"{t}:{p}" for t, p in task.topic_partitions],
            "stores": stores.get(task.task_id.subtopology, []),
        }

    threads = []
    for meta in streams.metadata_for_local_threads():
        tasks = [describe(t, "active") for t in sorted(meta.active_tasks, key=lambda t: t.task_id)]
        tasks += [describe(t, "standby") for t in sorted(meta.standby_tasks, key=lambda t: t.task_id)]
        threads.append({"name": meta.thread_name, "state": meta.thread_state, "tasks": tasks})
    return {
        "application_id": streams.config.application_id,
        "endpoint": streams.config.application_server or None,
        "process_id": streams.process_id,
        "state": streams.state.name,
        "threads": threads,
    }


@router.get(
    "/stores/{store}/instances",
    summary="Every task of a store and the instances running it",
    response_model=dict[str, Any],  # the error answers are JSONResponses, outside the model
)
def instances_of_store(store: str, request: Request) -> dict[str, Any] | JSONResponse:
    streams = _streams(request)
    local = streams.interactive_queries.local
    try:
        info = local.subtopology_of(store)
        found = store_instances(
            store,
            info.id,
            info.source_topics,
            local.partition_count(store),
            streams.all_metadata_for_store(store),
        )
    except UnknownStateStoreError as exc:
        return _error(404, "unknown_store", str(exc))
    except StreamsNotStartedError as exc:
        return _error(409, "not_running", str(exc))
    return {**found.as_dict(), "endpoint": streams.config.application_server or None}


@router.post(
    "/stores/{store}/rebuild",
    summary="Rebuild a store from its changelog in the local tasks owning it",
    response_model=dict[str, Any],  # the error answers are JSONResponses, outside the model
)
def rebuild_store(
    store: str, request: Request, body: RebuildRequest | None = None
) -> dict[str, Any] | JSONResponse:
    streams = _streams(request)
    body = body or RebuildRequest()
    try:
        reports = streams.rebuild_state(store, tasks=body.tasks, timeout=body.timeout_s)
    except UnknownStoreError as exc:
        return _error(404, "unknown_store", str(exc))
    except ValueError as exc:  # a task id that does not parse
        return _error(422, "bad_task_id", f"bad task id in {body.tasks}: {exc}")
    except RebuildTimeoutError as exc:
        return _error(504, "rebuild_timeout", str(exc))
    except TasksNotOwnedError as exc:
        return _error(409, "tasks_not_owned", str(exc))
    except StreamsError as exc:  # not running, or a task left during the rebuild (a rebalance)
        return _error(409, "rebuild_failed", f"{type(exc).__name__}: {exc}")
    return {
        "store": store,
        "endpoint": streams.config.application_server or None,
        "ok": all(r["ok"] for r in reports),
        "reports": reports,
    }
