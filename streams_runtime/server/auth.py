"""require_token: the bearer-token dependency of every route but ``/health/*``.

When the client's ``application_server_token`` is set, a request must carry
``Authorization: Bearer <token>``; otherwise 401 with a JSON body naming what is missing. The
token is compared in constant time. Routers declare it as ``dependencies=[Depends(require_token)]``.
A request forwarded by another instance carries no token: on the routes that forward (a key's
value or windows, and the console's per-instance view) it is accepted when its inter-instance
signature checked
(:class:`~.forwarding.VerifyForwarded` marks it in the request's scope); every other route
(admin, scans, metrics...) still needs the token, whatever signature a request carries.
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request, status

from streams_runtime.server.forwarding import forwarded_by

#: the header carrying the token
AUTHORIZATION = "authorization"
#: the routes a signed forwarded request may reach without the token (the ones that forward)
FORWARDED_ROUTES = frozenset({"/stores/{store}/keys/{key}", "/stores/{store}/windows/{key}", "/ui/api/local"})


def expected_token(request: Request) -> str | None:
    streams = request.app.state.streams
    return streams.config["application_server_token"]


def require_token(request: Request) -> None:
    """FastAPI dependency: 401 unless the request carries the configured bearer token."""
    token = expected_token(request)
    if not token:
        return
    route = getattr(request.scope.get("route"), "path_format", None)
    if route in FORWARDED_ROUTES and forwarded_by(request) is not None:
        return
    header = request.headers.get(AUTHORIZATION, "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail={
                "error": "unauthorized",
                "message": "this endpoint needs 'Authorization: Bearer <token>' "
                "(application_server_token is set)",
            },
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail={"error": "unauthorized", "message": "the bearer token is not valid"},
            headers={"WWW-Authenticate": "Bearer"},
        )
