"""The Spark fence: ``pyspark`` and ``great_expectations`` live in ``spark_jobs/`` only.

* ``streams_runtime/`` never imports them, nor ``spark_jobs`` (the core does not depend on the ops
  layer), at any depth;
* ``dags/`` and ``plugins/`` never import them, nor ``spark_jobs``, at module level: parsing a DAG
  must stay cheap; a task imports ``spark_jobs`` lazily, inside the function that runs it.

Read with ``ast`` (no imports executed), so the test is fast and needs neither Spark nor Airflow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCED = ("pyspark", "great_expectations", "spark_jobs")


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Statements run at import time: the body, and the bodies of top-level if/try/with blocks."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody", "handlers"):
                pending.extend(getattr(node, field, []))
        if isinstance(node, ast.ExceptHandler):
            pending.extend(node.body)


def _violations(folder: str, top_level_only: bool) -> list[str]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        nodes = _module_level(tree) if top_level_only else ast.walk(tree)
        for node in nodes:
            for name in _imported(node):
                if name.split(".")[0] in FENCED:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    return found


def test_should_keep_spark_and_great_expectations_out_of_the_streams_runtime():
    assert _violations("streams_runtime", top_level_only=False) == []


@pytest.mark.parametrize("folder", ["dags", "plugins"])
def test_should_import_spark_jobs_only_lazily_in_the_airflow_side(folder):
    assert (ROOT / folder).is_dir(), f"{folder}/ is part of the repository"
    assert _violations(folder, top_level_only=True) == []


def test_should_detect_a_top_level_import_and_ignore_a_lazy_one():
    tree = ast.parse(
        "import pyspark\ntry:\n    import great_expectations\nexcept ImportError:\n    pass\n"
        "def task():\n    from spark_jobs.payments_backfill import main\n"
    )
    names = [n for node in _module_level(tree) for n in _imported(node)]
    assert sorted(names) == ["great_expectations", "pyspark"]
