"""The bearer token: every route but the public ones (``/health/*``, the ``/docs`` and ``/ui``
shells and their assets) needs it when ``application_server_token`` is set.

A request must carry ``Authorization: Bearer <token>``; otherwise 401 with a JSON body naming what
is missing. The token is compared in constant time. A request forwarded by another instance
carries no token: on the routes that forward (a key's value or windows, and the console's
per-instance view) it is accepted when its inter-instance signature checked
(:class:`~.forwarding.VerifyForwarded` marks it in the request's scope); every other route (admin,
scans, metrics...) still needs the token, whatever signature a request carries.

Routers declare the rule with ``dependencies=[Depends(require_token)]``; :func:`refusal` is the
rule, applied twice:

1. :class:`TokenGate` (ASGI middleware) finds the route a request is for and applies it before any
   of the request's body is read or parsed (a route's body is parsed before its dependencies run);
   a path no route matches goes on to its 404, which reads no body;
2. :func:`require_token` (the dependency) applies it again where the route runs.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import HTTPException, Request, status
from starlette.routing import Match

from streams_runtime.server.error_handlers import http_error_response
from streams_runtime.server.forwarding import FORWARDED_SCOPE, forwarded_by

#: the header carrying the token
AUTHORIZATION = "authorization"
#: the routes a signed forwarded request may reach without the token (the ones that forward)
FORWARDED_ROUTES = frozenset(
    {"/stores/{store}/keys/{key}", "/stores/{store}/windows/{key}", "/ui/api/local", "/ui/api/history"}
)
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def expected_token(request: Request) -> str | None:
    streams = request.app.state.streams
    token: str | None = streams.config.application_server_token
    return token


def refusal(
    token: str | None, authorization: str, route: str | None, forwarded: bool
) -> dict[str, Any] | None:
    """The 401 detail for a request to ``route`` (its path format) with this ``Authorization``
    header, or None when it may pass."""
    if not token:
        return None
    if forwarded and route in FORWARDED_ROUTES:
        return None
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not given:
        return {
            "error": "unauthorized",
            "message": "this endpoint needs 'Authorization: Bearer <token>' "
            "(application_server_token is set)",
        }
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        return {"error": "unauthorized", "message": "the bearer token is not valid"}
    return None


def require_token(request: Request) -> None:
    """FastAPI dependency: 401 unless the request carries the configured bearer token."""
    route = getattr(request.scope.get("route"), "path_format", None)
    detail = refusal(
        expected_token(request),
        request.headers.get(AUTHORIZATION, ""),
        route,
        forwarded_by(request) is not None,
    )
    if detail is not None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, detail=detail, headers=_CHALLENGE)


def _needs_token(route: object) -> bool:
    """Whether ``route`` (or a dependency of it, at any depth) depends on :func:`require_token`."""
    dependant = getattr(route, "dependant", None)
    stack = [dependant] if dependant is not None else []
    while stack:
        current = stack.pop()
        if current.call is require_token:
            return True
        stack.extend(current.dependencies)
    return False


class TokenGate:
    """ASGI middleware: Step 1 of the module docstring (inside :class:`~.forwarding.VerifyForwarded`,
    which marks verified forwarded requests first)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._needs: dict[int, bool] = {}

    def _route_of(self, routes: Iterable[Any], scope: Mapping[str, Any]) -> tuple[str | None, bool]:
        """The path format of the route ``scope`` is for, and whether it needs the token
        (a route matching only the path, not the method, counts)."""
        partial = None
        for route in routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                partial = route
                break
            if match is Match.PARTIAL and partial is None:
                partial = route
        if partial is None:
            return None, False
        needs = self._needs.get(id(partial))
        if needs is None:
            needs = self._needs[id(partial)] = _needs_token(partial)
        return getattr(partial, "path_format", None), needs

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        app = scope["app"]
        token = _configured_token(app)
        if token:
            route, needs = self._route_of(app.router.routes, scope)
            if needs:
                authorization = next(
                    (v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"), ""
                )
                detail = refusal(token, authorization, route, FORWARDED_SCOPE in scope)
                if detail is not None:
                    response = http_error_response(401, detail, {**_CHALLENGE, "connection": "close"})
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _configured_token(app: Any) -> str | None:
    try:
        token: str | None = app.state.streams.config.application_server_token
    except (AttributeError, KeyError, TypeError):  # an app built without a client's config
        return None
    return token
