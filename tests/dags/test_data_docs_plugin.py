"""The Data Docs plugin: what it serves, to whom, and the links it makes (attacker's view included).

The real login check (Airflow's JWT, cookie or bearer) is exercised end to end by the browser
test; here it is replaced by a stand-in so every path rule can be tried quickly.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def docs_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "home"
    page = root / "backfill" / "_validation" / "x" / "data_docs" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text("<html>report</html>")
    (root / "backfill" / "part.parquet").write_text("data")
    (root / "backfill" / "_validation" / "x" / "data_docs" / "secret.txt").write_text("no")
    (tmp_path / "outside" / "data_docs").mkdir(parents=True)
    (tmp_path / "outside" / "data_docs" / "index.html").write_text("outside")
    monkeypatch.setenv("STREAMS_OPS_DATA_DOCS_ROOT", str(root))
    return root


@pytest.fixture
def client(docs_root: Path, monkeypatch: pytest.MonkeyPatch):
    from airflow.api_fastapi.core_api import security
    from fastapi import HTTPException
    from fastapi.testclient import TestClient

    async def stand_in(token):
        if token != "good":
            raise HTTPException(status_code=401, detail="Not authenticated")
        return object()

    monkeypatch.setattr(security, "resolve_user_from_token", stand_in)
    from streams_ops.plugins.data_docs import create_app

    return TestClient(create_app())


def test_serves_a_data_docs_page_to_a_logged_in_user_only(client) -> None:
    path = "/backfill/_validation/x/data_docs/index.html"
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer bad"}).status_code == 401
    assert client.get(path, cookies={"_token": "good"}).text == "<html>report</html>"
    answer = client.get(path, headers={"Authorization": "Bearer good"})
    assert answer.status_code == 200 and "report" in answer.text


@pytest.mark.parametrize(
    "path",
    [
        "/backfill/part.parquet",  # not below a data_docs folder
        "/backfill/_validation/x/data_docs/secret.txt",  # not a web file
        "/backfill/_validation/x/data_docs/missing.html",
        "/../outside/data_docs/index.html",
        "/backfill/_validation/x/data_docs/..%2F..%2F..%2F..%2Foutside%2Fdata_docs%2Findex.html",
        "/%2e%2e/outside/data_docs/index.html",
        "/" + "a/" * 50 + "data_docs/x.html",
    ],
)
def test_anything_else_is_a_404_even_when_logged_in(client, path: str) -> None:
    assert client.get(path, headers={"Authorization": "Bearer good"}).status_code == 404


def test_links_below_the_root_become_same_origin_links(docs_root: Path) -> None:
    from streams_ops.plugins.data_docs import link_for

    page = docs_root / "backfill" / "_validation" / "x" / "data_docs" / "index.html"
    assert link_for(page.as_uri()) == "/data-docs/backfill/_validation/x/data_docs/index.html"
    outside = docs_root.parent / "outside" / "data_docs" / "index.html"
    assert link_for(outside.as_uri()) == outside.as_uri(), "outside the root: left as it is"
    assert link_for("https://docs.example/x.html") == "https://docs.example/x.html"


GX_ASSETS = "https://great-expectations-web-assets.s3.us-east-2.amazonaws.com"


def gx_page_head() -> str:
    """The head of every GX Data Docs page, as the installed great_expectations renders it: its
    page template's stylesheet links, its script imports and its navbar logo (plus a style with a
    remote ``url()``, as its footer has)."""
    from streams_ops.plugins.data_docs import gx_static_dir

    templates = gx_static_dir().parent / "templates"
    text = "\n".join(
        (templates / name).read_text() for name in ("page.j2", "js_script_imports.j2", "top_navbar.j2")
    )
    logo = '{{ static_images_dir + "logo-long.png" | add_data_context_id_to_url }}'
    text = text.replace(logo, f"{GX_ASSETS}/logo-long.png?d=1")
    return text + f"<style>.x {{ background: url('{GX_ASSETS}/full_logo_dark.png') }}</style>"


def test_the_served_pages_request_nothing_from_other_hosts(docs_root: Path, client) -> None:
    import re

    from streams_ops.plugins.data_docs import offline_html

    head = gx_page_head()
    remote = re.compile(r"<(?:link|script|img)\b[^>]*(?:href|src)=\"https?://|url\(['\"]?https?://", re.I)
    assert len(remote.findall(head)) >= 16, "GX's page links its CDNs (else this test tests nothing)"
    page = offline_html(head)
    assert remote.findall(page) == []
    for local in (
        "bootstrap.min.css",
        "bootstrap.bundle.min.js",
        "jquery.min.js",
        "icons.css",
        "gx/images/logo-long.png",
    ):
        assert f'"/data-docs/_static/{local}"' in page, local
    assert "integrity=" not in page  # the CDN's hashes do not fit the local copies
    # the rewriting happens as the page is served, with a CSP refusing anything remote
    report = docs_root / "backfill" / "_validation" / "x" / "data_docs" / "index.html"
    report.write_text(head)
    answer = client.get("/backfill/_validation/x/data_docs/index.html", cookies={"_token": "good"})
    assert remote.findall(answer.text) == [] and "/data-docs/_static/bootstrap.min.css" in answer.text
    assert "default-src 'self'" in answer.headers["content-security-policy"]


@pytest.mark.parametrize(
    "path, status",
    [
        ("/_static/bootstrap.min.css", 200),
        ("/_static/bootstrap.bundle.min.js", 200),
        ("/_static/jquery.min.js", 200),
        ("/_static/icons.css", 200),
        ("/_static/gx/images/logo-long.png", 200),
        ("/_static/gx/styles/data_docs_default_styles.css", 200),
        ("/_static/README.md", 404),
        ("/_static/../data_docs.py", 404),
        ("/_static/gx/../../__init__.py", 404),
    ],
)
def test_the_local_assets_are_served_to_logged_in_users(client, path: str, status: int) -> None:
    assert client.get(path).status_code == 401
    assert client.get(path, cookies={"_token": "good"}).status_code == status


def test_the_index_lists_every_report_newest_first(docs_root: Path, client) -> None:
    older = docs_root / "backfill" / "_validation" / "a" / "data_docs" / "validations" / "s" / "old.html"
    newer = docs_root / "state_rebuild" / "app" / "store" / "run" / "data_docs" / "validations" / "new.html"
    for page in (older, newer):
        page.parent.mkdir(parents=True)
        page.write_text("<html></html>")
    import os

    os.utime(older, (1, 1))
    (docs_root / "state" / "data_docs" / "validations").mkdir(parents=True)  # state dirs are not walked
    (docs_root / "state" / "data_docs" / "validations" / "x.html").write_text("no")
    text = client.get("/", cookies={"_token": "good"}).text
    links = [line.split('"')[0] for line in text.split('href="/data-docs/')[1:] if "validations" in line]
    assert links == [
        "state_rebuild/app/store/run/data_docs/validations/new.html",
        "backfill/_validation/a/data_docs/validations/s/old.html",
    ]
