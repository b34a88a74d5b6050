"""create_app: the FastAPI app of one worker (interactive queries, metadata, metrics, health).

Routes (every one but ``/health/*`` needs the bearer token when ``application_server_token`` is set):

* ``GET /stores``: the topology's stores, their kind, partition count and local partitions.
* ``GET /stores/{store}/keys/{key}``: the value of one key (key-value store). Answered here when
  this instance runs the key's partition; otherwise, with ``application_server_forwarding_secret``
  set, forwarded once to the owner's endpoint (from ``query_metadata_for_key``), signed with that
  secret and never with the client's token, and relayed only when the owner's answer proves the
  secret (:mod:`.forwarding`); a forwarded request is never forwarded again (no loops while the
  assignment changes). Without the secret: 409 ``not_hosted_here`` naming the owner. The key is
  the rest of the path, percent-decoded (:mod:`.keys`: ``%2F`` is a ``/`` of the key). ``?allow_stale=true``
  lets a local standby answer (``"stale": true`` in the body). Window stores take
  ``?from=&to=`` (window starts, ms) and answer ``[{start, end, value}]``; session stores answer
  the key's sessions. Versioned key-value stores take ``?as_of=<ms>``: the version valid then
  (``{"value", "timestamp"}``; 404 when no version was valid), 400 on other stores.
* ``GET /stores/{store}/windows/{key}?from=&to=``: the same, for window stores, spelled out.
* ``GET /stores/{store}/range?from=&to=`` and ``GET /stores/{store}/all`` (key-value),
  ``GET /stores/{store}/windows?from=&to=`` (window ``fetch_all``): LOCAL scans. They cover the
  partitions of the store hosted on this instance (``?partition=p`` limits them to one, which
  must be hosted here), never forward, and say which partitions they read; a caller wanting the
  whole store asks every instance of ``GET /metadata/{store}`` (each answers for its own
  partitions only, so the union has no duplicates). A local partition that is restoring makes
  the scan fail with 503 rather than answer without its entries.
* ``GET /metadata/{store}``, ``GET /metadata/{store}/{key}``: instances hosting a store; the
  active host, standby hosts and partition of a key.
* ``GET /lags``: ``all_local_store_partition_lags()``.
* ``GET /metrics``: Prometheus text (:mod:`.prometheus`).
* ``GET /openapi.json``, ``GET /docs``: this description, as OpenAPI and Swagger UI (:mod:`.docs_ui`:
  assets shipped, the page itself public, the token entered in it); ``GET /ui``: the live
  console (:mod:`.console`), with the figures of the last 15 minutes of every instance
  (:mod:`.console_history`).
* ``GET /health/live`` (200 unless the client is in ERROR/NOT_RUNNING) and ``GET /health/ready``
  (200 only when the client is RUNNING and every active task is RUNNING; else 503 with a reason),
  answered on the event loop, never behind other requests (:mod:`.health`).

Before any route runs, the server refuses what is too big or too slow (408, 411, 413, 431:
:mod:`.limits`), then a request without the token (:class:`~.auth.TokenGate`, before any body is
read).

Errors are JSON ``{"error": <code>, "message": <text>}``: 400 malformed key, 401 no/bad token or
forwarding signature, 404 unknown store or key (or route), 408 request head too slow, 409 wrong
store kind for the route or key hosted elsewhere with forwarding off, 411 body without a
Content-Length, 413 body too large, 422 invalid parameters, 431 request head too large, 502 an
advertised owner that does not prove the forwarding secret, 503 store migrating, client not
running, or owner unreachable.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import Response

from streams_runtime.config import StreamsConfig
from streams_runtime.errors import (
    InvalidStateStorePartitionError,
    StateStoreMigratedError,
    StreamsError,
    StreamsNotStartedError,
)
from streams_runtime.query.local_stores import KEY_VALUE, WINDOW
from streams_runtime.server import console, console_history, docs_ui, error_handlers, health, prometheus
from streams_runtime.server.auth import TokenGate, require_token
from streams_runtime.server.forwarding import (
    HOP_HEADER,
    ApiError,
    VerifyForwarded,
    forward,
    forwarded_by,
    signer_for,
)
from streams_runtime.server.history import History
from streams_runtime.server.keys import parse_key, path_key, to_json  # registers {key:anykey}
from streams_runtime.server.limits import HttpLimits, RequestLimits

log = logging.getLogger("streams_runtime.server")

__all__ = ["HOP_HEADER", "ApiError", "create_app"]

FORWARD_TIMEOUT_S = 10.0
#: the latest window start a window route reads by default
MAX_TIMESTAMP = 2**63 - 1
MIN_TIMESTAMP = -(2**63)

# Query parameters shared by several routes.
AllowStale = Annotated[bool, Query(description="let a local standby answer")]
LocalPartition = Annotated[int | None, Query(description="read only this partition (hosted here)")]


def _timestamp(description: str, alias: str | None = None) -> object:
    """A query parameter holding a timestamp (ms): ``description``, spelled ``alias`` in the URL."""
    return Query(alias=alias, ge=MIN_TIMESTAMP, le=MAX_TIMESTAMP, description=description)


WindowFrom = Annotated[int, _timestamp("first window start (ms)", "from")]
WindowTo = Annotated[int, _timestamp("last window start (ms)", "to")]
#: the key route's window bounds (window stores only)
KeyWindowFrom = Annotated[int | None, _timestamp("window stores: first window start (ms)", "from")]
KeyWindowTo = Annotated[int | None, _timestamp("window stores: last window start (ms)", "to")]
AsOf = Annotated[
    int | None, _timestamp("versioned key-value stores: the version valid at this timestamp (ms)")
]
#: the fixed segments before the key of each key route (None: the store name)
KEY_ROUTE = (b"stores", None, b"keys")
WINDOWS_ROUTE = (b"stores", None, b"windows")
METADATA_ROUTE = (b"metadata", None)


def create_app(streams: Any) -> FastAPI:
    """The app serving ``streams`` (kept in ``app.state.streams`` for other routers)."""
    app = FastAPI(
        title="Kafka Streams worker API", version="1", description=__doc__, docs_url=None, openapi_url=None
    )
    app.state.streams = streams
    app.state.http = httpx.Client(timeout=FORWARD_TIMEOUT_S)
    config = getattr(streams, "config", {})
    app.state.signer = signer_for(config) if isinstance(config, StreamsConfig) else None
    app.state.limits = HttpLimits.from_config(config) if isinstance(config, StreamsConfig) else HttpLimits()
    app.state.readiness = health.Readiness(streams)
    app.state.history = History()  # filled by the HttpServer's sampler
    # outermost last: the request limits, then the forwarding signature, then the token
    app.add_middleware(TokenGate)
    app.add_middleware(VerifyForwarded)
    app.add_middleware(RequestLimits, limits=app.state.limits)

    error_handlers.install(app)
    app.include_router(health.router())
    app.include_router(_query_router(), dependencies=[Depends(require_token)])
    app.include_router(docs_ui.router(app))
    app.include_router(console.page)
    app.include_router(console.api)
    app.include_router(console_history.api)
    if importlib.util.find_spec("streams_runtime.server.admin") is not None:
        from streams_runtime.server import admin

        app.include_router(admin.router)
    return app


# ---------------------------------------------------------------------------- queries
def _query_router() -> APIRouter:
    router = APIRouter()

    @router.get("/stores", tags=["stores"], summary="The topology's stores")
    def stores(request: Request) -> dict[str, Any]:
        queries = request.app.state.streams.interactive_queries
        out = []
        for name in queries.local.store_names():
            try:
                out.append(
                    {
                        "name": name,
                        "type": queries.local.kind(name),
                        "partitions": queries.local.partition_count(name),
                        "local_partitions": sorted(queries.local.local_partitions(name)),
                        "local_standby_partitions": sorted(
                            queries.local.local_partitions(name, standby=True)
                            - queries.local.local_partitions(name)
                        ),
                    }
                )
            except StreamsNotStartedError:
                out.append({"name": name})
        return {"stores": out}

    @router.get(
        "/stores/{store}/keys/{key:anykey}",
        tags=["stores"],
        summary="One key's value (forwarded to its owner when not hosted here)",
    )
    def get_key(
        lookup: Annotated[_KeyLookup, Depends(_key_lookup(KEY_ROUTE))],
        allow_stale: AllowStale = False,
        time_from: KeyWindowFrom = None,
        time_to: KeyWindowTo = None,
        as_of: AsOf = None,
    ) -> Any:
        return _key_query(lookup, allow_stale, time_from, time_to, None, as_of)

    @router.get(
        "/stores/{store}/windows/{key:anykey}",
        tags=["stores"],
        summary="A window store's windows of one key between two window starts",
    )
    def get_windows(
        lookup: Annotated[_KeyLookup, Depends(_key_lookup(WINDOWS_ROUTE))],
        time_from: WindowFrom = 0,
        time_to: WindowTo = MAX_TIMESTAMP,
        allow_stale: AllowStale = False,
    ) -> Any:
        return _key_query(lookup, allow_stale, time_from, time_to, WINDOW)

    @router.get(
        "/stores/{store}/range",
        tags=["stores"],
        summary="Local scan of a key-value store between two keys (inclusive)",
    )
    def get_range(
        scan: LocalScan,
        key_from: str | None = Query(None, alias="from"),
        key_to: str | None = Query(None, alias="to"),
    ) -> dict[str, Any]:
        view = _view(scan, KEY_VALUE)
        serde = scan.request.app.state.streams.interactive_queries.local.key_serde(scan.store)
        lo = parse_key(key_from, serde) if key_from is not None else None
        hi = parse_key(key_to, serde) if key_to is not None else None
        return _scan_body(scan.store, view, view.range(lo, hi))

    @router.get("/stores/{store}/all", tags=["stores"], summary="Local scan of a whole key-value store")
    def get_all(scan: LocalScan) -> dict[str, Any]:
        view = _view(scan, KEY_VALUE)
        return _scan_body(scan.store, view, view.all())

    @router.get(
        "/stores/{store}/windows",
        tags=["stores"],
        summary="Local scan of a window store: every window starting between from and to",
    )
    def get_all_windows(
        scan: LocalScan, time_from: WindowFrom = 0, time_to: WindowTo = MAX_TIMESTAMP
    ) -> dict[str, Any]:
        view = _view(scan, WINDOW)
        return _scan_body(scan.store, view, view.fetch_all(time_from, time_to))

    @router.get("/metadata/{store}", tags=["metadata"], summary="Instances hosting a store")
    def store_metadata(request: Request, store: str) -> dict[str, Any]:
        streams = request.app.state.streams
        metadata = streams.all_metadata_for_store(store)
        topics = set(streams.interactive_queries.local.subtopology_of(store).source_topics)

        def of_store(topic_partitions: Iterable[tuple[str, int]]) -> dict[str, list[Any]]:
            mine = sorted({(t, p) for t, p in topic_partitions if t in topics})
            return {
                "partitions": sorted({p for _, p in mine}),
                "topic_partitions": [{"topic": t, "partition": p} for t, p in mine],
            }

        instances = []
        for m in metadata:
            active, standby = of_store(m.topic_partitions), of_store(m.standby_topic_partitions)
            instances.append(
                {
                    "host": str(m.host_info),
                    **active,
                    "standby_partitions": standby["partitions"],
                    "standby_topic_partitions": standby["topic_partitions"],
                }
            )
        return {"store": store, "source_topics": sorted(topics), "instances": instances}

    @router.get(
        "/metadata/{store}/{key:anykey}",
        tags=["metadata"],
        summary="Active host, standby hosts and partition of a key",
    )
    def key_metadata(lookup: Annotated[_KeyLookup, Depends(_key_lookup(METADATA_ROUTE))]) -> dict[str, Any]:
        streams, store = lookup.request.app.state.streams, lookup.store
        streams.interactive_queries.local.kind(store)  # 404 for an unknown store
        parsed = parse_key(lookup.key, streams.interactive_queries.local.key_serde(store))
        meta = streams.query_metadata_for_key(store, parsed)
        return {
            "store": store,
            "key": to_json(parsed),
            "partition": meta.partition,
            "active_host": str(meta.active_host) if meta.active_host else None,
            "standby_hosts": sorted(str(h) for h in meta.standby_hosts),
        }

    @router.get("/lags", tags=["metadata"], summary="Lag of every local store partition behind its changelog")
    def lags(request: Request) -> dict[str, Any]:
        out = request.app.state.streams.all_local_store_partition_lags()
        return {
            store: {
                str(p): {
                    "current_offset": i.current_offset_position,
                    "end_offset": i.end_offset_position,
                    "lag": i.offset_lag,
                }
                for p, i in sorted(by_p.items())
            }
            for store, by_p in sorted(out.items())
        }

    @router.get(
        "/metrics",
        tags=["metrics"],
        summary="Prometheus text exposition of the client's metrics",
        response_class=Response,
    )
    def metrics(request: Request) -> Response:
        return Response(prometheus.render(request.app.state.streams), media_type=prometheus.CONTENT_TYPE)

    return router


@dataclass(frozen=True, slots=True)
class _KeyLookup:
    """What a key route is asked: the store, and the key as the raw path spells it (``%2F`` is a
    ``/`` of the key)."""

    request: Request
    store: str
    key: bytes


def _key_lookup(route: tuple[bytes | None, ...]) -> Callable[..., _KeyLookup]:
    """The dependency reading the :class:`_KeyLookup` of a key route whose path begins with ``route``
    (its fixed segments; None for the store's)."""

    def lookup(request: Request, store: str, key: str) -> _KeyLookup:
        return _KeyLookup(request, store, path_key(request.scope, route, key))

    return lookup


@dataclass(frozen=True, slots=True)
class _Scan:
    """What a local scan route is asked: the store, the one local partition to read (None: all), and
    whether local standbys may answer."""

    request: Request
    store: str
    partition: LocalPartition = None
    allow_stale: AllowStale = False


def _scan(
    request: Request, store: str, partition: LocalPartition = None, allow_stale: AllowStale = False
) -> _Scan:
    return _Scan(request, store, partition, allow_stale)


LocalScan = Annotated[_Scan, Depends(_scan)]


def _view(scan: _Scan, kind: str) -> Any:
    queries = scan.request.app.state.streams.interactive_queries
    _require_kind(scan.store, queries.local.kind(scan.store), kind)
    return queries.store(scan.store, allow_stale=scan.allow_stale, partition=scan.partition)


def _require_kind(store: str, actual: str, wanted: str) -> None:
    """409 when a route for ``wanted`` stores is asked about a store of another type."""
    if actual != wanted:
        raise ApiError(
            409, "wrong_store_type", f"store {store} is a {actual} store; this route reads {wanted} stores"
        )


def _scan_body(store: str, view: Any, entries: list[Any]) -> dict[str, Any]:
    return {
        "store": store,
        "partitions": view.partitions(),
        "local_only": True,
        "entries": [{"key": to_json(k), "value": to_json(v)} for k, v in entries],
    }


def _read_key(kind: str, key: Any, time_from: int | None, time_to: int | None) -> Any:
    """The read of one key for a store of ``kind`` (a function of the store, run under its lock)."""
    if kind == KEY_VALUE:
        return lambda store: store.get(key)
    if kind == WINDOW:
        lo = 0 if time_from is None else time_from
        hi = MAX_TIMESTAMP if time_to is None else time_to

        def windows(store: Any) -> list[dict[str, Any]]:
            with store.fetch(key, lo, hi) as it:
                return [{"start": start, "value": to_json(value)} for start, value in it]

        return windows

    def sessions(store: Any) -> list[dict[str, Any]]:
        with store.fetch(key) as it:
            return [{"start": w.window.start, "end": w.window.end, "value": to_json(v)} for w, v in it]

    return sessions


def _read_as_of(name: str, key: Any, as_of: int) -> Any:
    """``?as_of=``: the version of ``key`` valid at ``as_of`` (versioned stores only; else 400)."""

    def read(store: Any) -> Any:
        if not getattr(store, "versioned", False):
            raise ApiError(400, "not_versioned", f"store {name} is not a versioned store; as_of needs one")
        return store.get(key, as_of)

    return read


def _key_query(
    lookup: _KeyLookup,
    allow_stale: bool,
    time_from: int | None,
    time_to: int | None,
    required_kind: str | None,
    as_of: int | None = None,
) -> Any:
    request, store = lookup.request, lookup.store
    streams = request.app.state.streams
    local = streams.interactive_queries.local
    kind = local.kind(store)
    if required_kind is not None:
        _require_kind(store, kind, required_kind)
    key = parse_key(lookup.key, local.key_serde(store))
    partition = local.partition_of(store, key)
    read = _read_key(kind, key, time_from, time_to) if as_of is None else _read_as_of(store, key, as_of)
    me = streams.config.application_server
    body = {"store": store, "key": to_json(key), "partition": partition, "host": me}
    try:
        value = local.read(store, partition, read)
        stale: bool | None = False
    except StateStoreMigratedError:
        if not allow_stale:
            raise
        value, stale = local.read(store, partition, read, allow_stale=True), True
    except InvalidStateStorePartitionError:
        try:
            value, stale = (
                (local.read(store, partition, read, allow_stale=True), True) if allow_stale else (None, None)
            )
        except InvalidStateStorePartitionError:
            stale = None
        if stale is None:
            return _to_owner(request, store, key, partition, me)
    if value is None and kind == KEY_VALUE:
        raise ApiError(
            404,
            "key_not_found",
            f"store {store} has no value for key {to_json(key)!r} (partition {partition}, answered by {me})",
        )
    return {**body, "value": to_json(value), "stale": stale}


def _to_owner(request: Request, store: str, key: Any, partition: int, me: str) -> Response:
    """A key this instance does not host: 503 while no owner is known (or when the request was
    already forwarded here), else :func:`.forwarding.forward` (the answer, or 409 naming the owner)."""
    sender = forwarded_by(request)
    if sender is not None:
        raise ApiError(
            503,
            "store_migrating",
            f"store {store} partition {partition} is not hosted on {me} (the request was forwarded "
            f"here by {sender}); the assignment is changing, retry",
        )
    try:
        meta = request.app.state.streams.query_metadata_for_key(store, key)
    except StreamsError as exc:
        raise ApiError(
            503, "store_migrating", f"store {store} partition {partition}: no owner known ({exc})"
        ) from exc
    owner = str(meta.active_host) if meta.active_host is not None else None
    if owner is None or owner == me:
        raise ApiError(
            503,
            "store_migrating",
            f"store {store} partition {partition} is migrating: no instance runs it right now, retry",
        )
    return forward(request, store, to_json(key), partition, owner, me)
