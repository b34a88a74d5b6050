"""The Data Docs of every validation, served by Airflow's API server under ``/data-docs/``.

Airflow's UI renders an extra link only when it is http(s) or on its own origin, so a ``file://``
report would stay invisible. This plugin (registered through the provider's ``plugins`` entry)
mounts a small FastAPI app on the API server that serves, to logged-in users only (the UI's JWT
cookie or a bearer token, checked by Airflow's own dependency), the Great Expectations Data Docs
under :func:`data_docs_root` (``$STREAMS_OPS_DATA_DOCS_ROOT``, default ``$STREAMS_RUNTIME_HOME``,
where the DAGs write by default). Only files below a ``data_docs`` folder with a web suffix are
served; anything else, or a path leaving the root, is a 404.

**Offline**: GX's pages link Bootstrap, jQuery, Font Awesome, bootstrap-table, Vega and GX's
logos from public CDNs (~16 requests; without them a report renders unstyled). Every HTML page is
rewritten as it is served (:func:`offline_html`): Bootstrap and jQuery point at copies served
here under ``/data-docs/_static/`` (``static/``, see its README), Font Awesome at a stylesheet of
the few icons GX uses, GX's logo at the installed ``great_expectations`` package's own image;
every other remote stylesheet, script or image is dropped. A Content-Security-Policy of
``'self'`` makes the browser refuse anything still remote.

``/data-docs/`` itself lists every report below the root, newest first (:func:`reports`);
``/data-docs/runs/<dag_id>/<run_id>`` shows a DAG run's reports (the ``data_docs_url`` XComs of
its tasks): the report itself when the run has one, else a list. The plugin adds that page as a
"Data Docs" tab to every DAG run's page of the UI (an external view, ``destination`` ``dag_run``)
and to every task instance's page (``task_instance``, that task's report).

:func:`link_for` turns a ``file://`` Data Docs URL into that same-origin ``/data-docs/...`` link
(unchanged when it is outside the root); :func:`absolute_link` adds the API server's base URL.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

URL_PREFIX = "/data-docs"
STATIC_PREFIX = f"{URL_PREFIX}/_static"
SUFFIXES = {
    *(".html", ".css", ".js", ".json"),
    *(".png", ".svg", ".ico", ".gif"),
    *(".woff", ".woff2", ".ttf", ".otf"),
}
VENDORED = Path(__file__).resolve().parent / "static"
#: remote stylesheets and scripts of GX's pages that have a local copy (matched on the URL's path)
LOCAL_COPIES = {
    "bootstrap.min.css": "bootstrap.min.css",
    "bootstrap.min.js": "bootstrap.bundle.min.js",  # with Popper: popper.min.js is dropped
    "jquery-3.7.1.min.js": "jquery.min.js",
    "all.min.css": "icons.css",  # Font Awesome: the handful of icons GX uses, as text
}
GX_ASSETS_HOST = "great-expectations-web-assets.s3.us-east-2.amazonaws.com"
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'"
)
#: directories below the root never holding reports (state, logs, brokers): not walked for the list
NOT_WALKED = {"state", "logs", "airflow", "kafka", "tansu", "broker", "site", "spark-warehouse"}
MAX_LISTED = 200


def data_docs_root() -> Path:
    root = os.environ.get("STREAMS_OPS_DATA_DOCS_ROOT") or os.environ.get("STREAMS_RUNTIME_HOME")
    return Path(root or Path.cwd() / ".streams-runtime").resolve()


def gx_static_dir() -> Path | None:
    """The installed ``great_expectations`` package's ``render/view/static`` (not imported)."""
    spec = importlib.util.find_spec("great_expectations")
    for location in (spec.submodule_search_locations or []) if spec else []:
        static = Path(location) / "render" / "view" / "static"
        if static.is_dir():
            return static
    return None


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


def static_file(relative: str) -> Path | None:
    """``_static/<file>`` (the vendored copies) or ``_static/gx/<path>`` (GX's own assets)."""
    base = VENDORED
    if relative.startswith("gx/"):
        base, relative = gx_static_dir() or VENDORED, relative[3:]
    base = base.resolve()
    try:
        target = (base / unquote(relative)).resolve()
        target.relative_to(base)
    except (ValueError, OSError):
        return None
    return target if target.suffix.lower() in SUFFIXES and target.is_file() else None


def _local(url: str) -> str | None:
    """The local address of a remote asset of GX's pages, or ``None`` when there is none."""
    parsed = urlparse(html.unescape(url))
    name = parsed.path.rsplit("/", 1)[-1]
    if parsed.hostname == GX_ASSETS_HOST:
        images = gx_static_dir()
        if images and (images / "images" / name).is_file():
            return f"{STATIC_PREFIX}/gx/images/{name}"
        return None
    if name in LOCAL_COPIES:
        return f"{STATIC_PREFIX}/{LOCAL_COPIES[name]}"
    return None


_TAG = re.compile(
    r"<(?P<tag>link|script|img)\b(?P<attrs>[^>]*?)\b(?P<attr>href|src)=\"(?P<url>https?://[^\"]*)\""
    r"(?P<rest>[^>]*)>(?P<close>\s*</script>)?",
    re.IGNORECASE,
)
_CSS_URL = re.compile(r"url\((?P<q>['\"]?)(?P<url>https?://[^'\")]*)(?P=q)\)", re.IGNORECASE)
_SRI = re.compile(r"\s(integrity|crossorigin)=\"[^\"]*\"|\scrossorigin\b", re.IGNORECASE)


def offline_html(text: str) -> str:
    """GX's page without requests to other hosts: remote stylesheets, scripts and images point at
    local copies or are dropped; remote ``url(...)`` in styles become empty. Links (``<a>``) stay."""

    def tag(match: re.Match[str]) -> str:
        local = _local(match["url"])
        if local is None:
            return "" if match["tag"].lower() in ("link", "script") else f"<{match['tag']}{match['attrs']}>"
        rest = _SRI.sub("", match["rest"])
        attrs = _SRI.sub("", match["attrs"])
        return f'<{match["tag"]}{attrs}{match["attr"]}="{local}"{rest}>{match["close"] or ""}'

    def css(match: re.Match[str]) -> str:
        local = _local(match["url"])
        return f"url('{local}')" if local else "url('data:,')"

    return _CSS_URL.sub(css, _TAG.sub(tag, text))


def reports(root: Path | None = None) -> list[Path]:
    """Every validation page below the root (``.../data_docs/validations/**.html``), newest first."""
    root = root or data_docs_root()
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        if here == root:
            subdirs[:] = [d for d in subdirs if d not in NOT_WALKED]
        if "data_docs" in here.relative_to(root).parts:
            found += [here / f for f in files if f.endswith(".html") and "validations" in here.parts]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return found[:MAX_LISTED]


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


def absolute_link(url: str, base_url: str | None = None) -> str:
    """:func:`link_for` with the API server's base URL (``[api] base_url``) in front, for logs."""
    link = link_for(url)
    if not link.startswith("/"):
        return link
    if base_url is None:
        from airflow.configuration import conf

        base_url = conf.get("api", "base_url", fallback="") or ""
    return base_url.rstrip("/") + link


async def require_user(request: Request) -> object:
    """Airflow's own check: a valid JWT as bearer token or in the UI's cookie, else 401/403."""
    from airflow.api_fastapi.core_api import security

    header = request.headers.get("authorization", "")
    token = header[7:] if header.lower().startswith("bearer ") else None
    return await security.resolve_user_from_token(
        token or request.cookies.get(security.COOKIE_NAME_JWT_TOKEN)
    )


def _index_page(root: Path) -> str:
    rows = []
    for page in reports(root):
        relative = page.relative_to(root).as_posix()
        label = relative.split("/data_docs/")[0]
        rows.append(
            f'<tr><td><a href="{URL_PREFIX}/{quote(relative)}">{html.escape(label)}</a></td>'
            f"<td>{html.escape(page.name)}</td></tr>"
        )
    body = "".join(rows) or '<tr><td colspan="2">no validation report yet</td></tr>'
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Data Docs</title>"
        f'<link rel="stylesheet" href="{STATIC_PREFIX}/bootstrap.min.css"></head>'
        '<body class="container py-4"><h1 class="h3">Great Expectations Data Docs</h1>'
        f"<p>Every validation report below <code>{html.escape(str(root))}</code>, newest first.</p>"
        f'<table class="table table-sm"><tr><th>run</th><th>page</th></tr>{body}</table></body></html>'
    )


def run_reports(dag_id: str, run_id: str, task_id: str | None = None, map_index: int | None = None) -> list:
    """``(task label, file URL)`` of each Data Docs XCom (``data_docs_url``) of the DAG run."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    from streams_ops.links.data_docs import XCOM_KEY

    with create_session() as session:
        query = session.query(XComModel).filter_by(dag_id=dag_id, run_id=run_id, key=XCOM_KEY)
        if task_id:
            query = query.filter_by(task_id=task_id)
        if map_index is not None:
            query = query.filter_by(map_index=map_index)
        rows = [(r.task_id, r.map_index, XComModel.deserialize_value(r)) for r in query.all()]
    return [
        (task if index < 0 else f"{task}[{index}]", str(url))
        for task, index, url in sorted(rows, key=lambda r: (r[0], r[1]))
        if url
    ]


def _run_page(dag_id: str, run_id: str, found: list) -> str:
    items = "".join(
        f'<li><a href="{html.escape(link_for(url))}">{html.escape(label)}</a></li>' for label, url in found
    )
    what = f"<ul>{items}</ul>" if found else "<p>No task of this run built a validation report.</p>"
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Data Docs</title>"
        f'<link rel="stylesheet" href="{STATIC_PREFIX}/bootstrap.min.css"></head>'
        f'<body class="container py-4"><h1 class="h4">Data Docs of {html.escape(dag_id)} '
        f'run {html.escape(run_id)}</h1>{what}<p><a href="{URL_PREFIX}/">every report</a></p></body></html>'
    )


def create_app() -> FastAPI:
    app = FastAPI(title="Great Expectations Data Docs", docs_url=None, redoc_url=None, openapi_url=None)
    headers = {"Content-Security-Policy": CSP}

    @app.get("/", dependencies=[Depends(require_user)])
    def index() -> HTMLResponse:
        return HTMLResponse(_index_page(data_docs_root()), headers=headers)

    @app.get("/runs/{dag_id}/{run_id}", dependencies=[Depends(require_user)])
    def run(dag_id: str, run_id: str, task_id: str | None = None, map_index: str | None = None) -> Response:
        index = int(map_index) if map_index and map_index.lstrip("-").isdigit() else None
        found = run_reports(dag_id, run_id, task_id, index)
        if len(found) == 1 and link_for(found[0][1]).startswith(URL_PREFIX):
            return RedirectResponse(link_for(found[0][1]), status_code=307)
        return HTMLResponse(_run_page(dag_id, run_id, found), headers=headers)

    @app.get("/_static/{relative:path}", dependencies=[Depends(require_user)])
    def static(relative: str) -> FileResponse:
        target = static_file(relative)
        if target is None:
            raise HTTPException(status_code=404, detail="no such asset")
        return FileResponse(target, headers={"Cache-Control": "max-age=3600"})

    @app.get("/{relative:path}", dependencies=[Depends(require_user)])
    def serve(relative: str) -> Response:
        target = servable(relative)
        if target is None:
            raise HTTPException(status_code=404, detail="no such Data Docs file")
        if target.suffix.lower() == ".html":
            return HTMLResponse(offline_html(target.read_text(errors="replace")), headers=headers)
        return FileResponse(target, headers=headers)

    return app


class DataDocsPlugin(AirflowPlugin):
    name = "streams_data_docs"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Great Expectations Data Docs"}]
    # a "Data Docs" tab on every DAG run's page and task instance's page, showing its reports
    external_views = [
        {
            "name": "Data Docs",
            "href": URL_PREFIX + "/runs/{DAG_ID}/{RUN_ID}",
            "destination": "dag_run",
            "url_route": "data-docs-run",
        },
        {
            "name": "Data Docs",
            "href": URL_PREFIX + "/runs/{DAG_ID}/{RUN_ID}?task_id={TASK_ID}&map_index={MAP_INDEX}",
            "destination": "task_instance",
            "url_route": "data-docs-task",
        },
    ]
