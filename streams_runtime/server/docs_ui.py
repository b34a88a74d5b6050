"""Swagger UI at ``/docs`` without a CDN, with the bearer token entered in the page.

The page and its assets hold no data and are served without the token; ``/openapi.json`` and
every API call stay behind it. The OpenAPI description declares an HTTP bearer scheme
(``bearerAuth``) on every route but ``/health/*``, so Swagger's Authorize button takes the token.
With a token configured, the page asks for it first (the description itself is behind the token),
keeps it in the tab's session storage, loads the description with it and pre-authorizes Swagger,
so "Try it out" sends it. The Swagger UI assets come from the pinned ``fastapi-offline`` wheel,
the only module importing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from streams_runtime.server.auth import require_token

SCHEME = "bearerAuth"
_SWAGGER_DIR = Path(fastapi_offline.__file__).parent / "static"
_ASSETS = {
    "swagger-ui-bundle.js": (_SWAGGER_DIR / "swagger-ui-bundle.js", "text/javascript"),
    "swagger-ui.css": (_SWAGGER_DIR / "swagger-ui.css", "text/css"),
    "favicon.png": (_SWAGGER_DIR / "favicon.png", "image/png"),
    "docs.js": (Path(__file__).parent / "static" / "docs.js", "text/javascript"),
}

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - docs</title>
<link rel="icon" href="/docs/assets/favicon.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>#token-bar{{font:14px sans-serif;padding:8px 16px;background:#f3f3f3;border-bottom:1px solid #ddd}}
#token-bar input{{width:22em}} #token-note{{margin-left:1em;color:#a33}}</style></head>
<body><form id="token-bar">Bearer token: <input id="token-input" type="password" autocomplete="off">
<button id="token-use" type="submit">Use token</button> <a href="/ui">console</a>
<span id="token-note"></span></form>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script></body></html>
"""


def _secure(app: FastAPI) -> None:
    """Wrap ``app.openapi`` so the description declares the bearer scheme (once, cached)."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = base()
        schema.setdefault("components", {}).setdefault("securitySchemes", {})[SCHEME] = {
            "type": "http",
            "scheme": "bearer",
            "description": "the worker's application_server_token",
        }
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                operation["security"] = [] if path.startswith("/health/") else [{SCHEME: []}]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def router(app: FastAPI) -> APIRouter:
    """``/docs`` and its assets (public), ``/openapi.json`` (behind the token)."""
    _secure(app)
    routes = APIRouter(include_in_schema=False)

    @routes.get("/openapi.json", dependencies=[Depends(require_token)])
    def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @routes.get("/docs")
    def docs() -> HTMLResponse:
        return HTMLResponse(_PAGE.format(title=app.title))

    @routes.get("/docs/assets/{name}")
    def asset(name: str) -> Response:
        if name not in _ASSETS:
            return JSONResponse({"error": "not_found", "message": f"no asset {name!r}"}, status_code=404)
        path, media_type = _ASSETS[name]
        return FileResponse(path, media_type=media_type, headers={"Cache-Control": "max-age=3600"})

    return routes
