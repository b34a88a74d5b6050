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
