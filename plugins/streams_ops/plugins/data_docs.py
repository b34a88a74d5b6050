"""The Data Docs of every validation, served by Airflow's API server under ``/data-docs/``.

Airflow's UI renders an extra link only when it is http(s) or on its own origin, so a ``file://``
report would stay invisible. This plugin (registered through the provider's ``plugins`` entry)
mounts a small FastAPI app on the API server that serves, to logged-in users only (the UI's JWT
cookie or a bearer token, checked by Airflow's own dependency), the Great Expectations Data Docs
under :func:`data_docs_root` (``$STREAMS_OPS_DATA_DOCS_ROOT``, default ``$STREAMS_RUNTIME_HOME``,
where the DAGs write by default). Only files below a ``data_docs`` folder with a web suffix are
served; anything else, or a path leaving the root, is a 404.

:func:`link_for` turns a ``file://`` Data Docs URL into that same-origin ``/data-docs/...`` link
(unchanged when it is outside the root).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse

URL_PREFIX = "/data-docs"
SUFFIXES = {".html", ".css", ".js", ".png", ".svg", ".ico", ".json", ".woff", ".woff2", ".ttf"}


def data_docs_root() -> Path:
    root = os.environ.get("STREAMS_OPS_DATA_DOCS_ROOT") or os.environ.get("STREAMS_RUNTIME_HOME")
    return Path(root or Path.cwd() / ".streams-runtime").resolve()


def servable(relative: str, root: Path | None = None) -> Path | None:
    """The file ``relative`` names below the root, if it may be served; else ``None``."""
    root = root or data_docs_root()
    try:
        target = (root / unquote(relative)).resolve()
        target.relative_to(root)
    except (ValueError, OSError):
        return None
    inside = target.relative_to(root).parts
    if "data_docs" not in inside[:-1] or target.suffix.lower() not in SUFFIXES or not target.is_file():
        return None
    return target


def link_for(url: str) -> str:
    """``file:///<root>/x/data_docs/y.html`` -> ``/data-docs/x/data_docs/y.html``; else ``url``."""
    if not url.startswith("file://"):
        return url
    path = Path(unquote(urlparse(url).path))
    try:
        relative = path.resolve().relative_to(data_docs_root())
    except ValueError:
        return url
    return f"{URL_PREFIX}/{quote(relative.as_posix())}"


async def require_user(request: Request) -> object:
    """Airflow's own check: a valid JWT as bearer token or in the UI's cookie, else 401/403."""
    from airflow.api_fastapi.core_api import security

    header = request.headers.get("authorization", "")
    token = header[7:] if header.lower().startswith("bearer ") else None
    return await security.resolve_user_from_token(
        token or request.cookies.get(security.COOKIE_NAME_JWT_TOKEN)
    )


def create_app() -> FastAPI:
    app = FastAPI(title="Great Expectations Data Docs", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/{relative:path}", dependencies=[Depends(require_user)])
    def serve(relative: str) -> FileResponse:
        target = servable(relative)
        if target is None:
            raise HTTPException(status_code=404, detail="no such Data Docs file")
        return FileResponse(target)

    return app


class DataDocsPlugin(AirflowPlugin):
    name = "streams_data_docs"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Great Expectations Data Docs"}]
