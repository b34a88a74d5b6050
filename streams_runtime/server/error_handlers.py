"""The API's error answers: every error is JSON ``{"error": <code>, "message": <text>}``.

:func:`install` registers the handlers on an app: :class:`~.forwarding.ApiError` (its status,
code and extra fields), the store errors of interactive queries (404 unknown store or partition
not hosted, 503 migrating or not running), a key that does not convert (400 ``malformed_key``),
invalid parameters (422 ``invalid_request``, FastAPI's ``detail`` kept), and the framework's
HTTP errors (404 unknown route, 405, 401 from the token check...: their ``detail`` kept too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar, cast

from fastapi import FastAPI, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import HTTPException, RequestValidationError
from fastapi.responses import JSONResponse

from streams_runtime.errors import (
    InvalidStateStoreError,
    InvalidStateStorePartitionError,
    StateStoreMigratedError,
    StreamsError,
    StreamsNotStartedError,
    UnknownStateStoreError,
)
from streams_runtime.server.forwarding import ApiError
from streams_runtime.server.keys import MalformedKeyError

#: status codes of framework HTTP errors answered with the JSON error body
HTTP_STATUSES = (400, 401, 403, 404, 405, 406, 409, 413, 415, 503)
_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    401: "unauthorized",
    408: "request_timeout",
    411: "length_required",
    413: "body_too_large",
    431: "headers_too_large",
}

_E = TypeVar("_E", bound=Exception)


def _handler(handle: Callable[[Request, _E], Response]) -> Callable[[Request, Exception], Response]:
    """``handle`` as Starlette types an exception handler (taking any exception): Starlette calls
    a handler only with instances of the exception type it was registered for."""
    return cast(Callable[[Request, Exception], Response], handle)


def _status_of(exc: InvalidStateStoreError) -> tuple[int, str]:
    if isinstance(exc, UnknownStateStoreError):
        return 404, "unknown_store"
    if isinstance(exc, StateStoreMigratedError):
        return 503, "store_migrating"
    if isinstance(exc, StreamsNotStartedError):
        return 503, "not_running"
    if isinstance(exc, InvalidStateStorePartitionError):
        return 404, "partition_not_hosted"
    return 503, "store_not_queryable"


def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    return JSONResponse(jsonable_encoder(exc.body()), status_code=exc.status)


def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = jsonable_encoder(exc.errors())
    where = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in errors)
    body = {"error": "invalid_request", "message": where or "invalid request", "detail": errors}
    return JSONResponse(body, status_code=422)


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    status = getattr(exc, "status_code", 500)
    return http_error_response(status, getattr(exc, "detail", str(exc)), getattr(exc, "headers", None))


def http_error_response(
    status: int, detail: object, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The JSON answer of an HTTP error: ``detail`` a ``{"error", "message"}`` dict, or a text."""
    if isinstance(detail, dict) and "error" in detail:
        body = {**detail, "detail": detail}
    else:
        body = {"error": _HTTP_CODES.get(status, "http_error"), "message": str(detail), "detail": detail}
    return JSONResponse(jsonable_encoder(body), status_code=status, headers=headers)


def _store_error(request: Request, exc: InvalidStateStoreError) -> JSONResponse:
    status, code = _status_of(exc)
    return JSONResponse({"error": code, "message": str(exc)}, status_code=status)


def _streams_error(request: Request, exc: StreamsError) -> JSONResponse:
    body = {"error": "streams_error", "message": f"{type(exc).__name__}: {exc}"}
    return JSONResponse(body, status_code=500)


def _bad_key(request: Request, exc: MalformedKeyError) -> JSONResponse:
    return JSONResponse({"error": "malformed_key", "message": str(exc)}, status_code=400)


def install(app: FastAPI) -> None:
    """Register the module's handlers on ``app``."""
    app.add_exception_handler(ApiError, _handler(_api_error))
    app.add_exception_handler(RequestValidationError, _handler(_invalid))
    app.add_exception_handler(HTTPException, _http_error)
    for status in HTTP_STATUSES:  # the router's own 404/405 are not FastAPI's HTTPException
        app.add_exception_handler(status, _http_error)
    app.add_exception_handler(InvalidStateStoreError, _handler(_store_error))
    app.add_exception_handler(StreamsError, _handler(_streams_error))
    app.add_exception_handler(MalformedKeyError, _handler(_bad_key))
