"""DAG policy, one test id per DAG file: imports cleanly, documented, owned, retried, cheap to parse.

"Cheap" is checked where it matters: in a fresh interpreter (a subprocess, as the DAG processor
parses), importing the DAG file loads none of the heavy libraries its tasks use, and parsing it
takes under a second once Airflow itself is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dags.conftest import DAGS, airflow_environ

DAG_FILES = sorted(p for p in DAGS.glob("*.py") if not p.name.startswith("_"))
HEAVY = ("pyspark", "great_expectations", "confluent_kafka", "pandas", "rocksdict")
PARSE_BUDGET_S = 1.0

FRESH_IMPORT = f"""
import importlib.util, json, sys, time
import airflow.sdk  # Airflow's own start-up is not the DAG file's cost
path = sys.argv[1]
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("dag_under_test", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
elapsed = time.perf_counter() - started
print(json.dumps({{
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r}),
    "parse_s": elapsed,
}}))
"""


def ids(path: Path) -> str:
    return path.name


def test_every_dag_file_is_found() -> None:
    assert {p.name for p in DAG_FILES} >= {
        "provision_topics.py",
        "changelog_compaction_check.py",
        "spark_backfill.py",
        "state_rebuild.py",
    }


@pytest.mark.parametrize("dag_file", DAG_FILES, ids=ids)
def test_dag_file_imports_nothing_heavy_in_a_fresh_interpreter(dag_file: Path, tmp_path: Path) -> None:
    env = {**os.environ, **airflow_environ(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", FRESH_IMPORT, str(dag_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    facts = json.loads(result.stdout.strip().splitlines()[-1])
    assert facts["heavy"] == [], f"imported at parse time: {facts['heavy']}"
    assert facts["parse_s"] < PARSE_BUDGET_S, f"parsing took {facts['parse_s']:.2f}s"


@pytest.mark.parametrize("dag_file", DAG_FILES, ids=ids)
def test_dag_is_documented_owned_tagged_and_retried(dag_file: Path) -> None:
    from airflow.dag_processing.dagbag import DagBag

    started = time.perf_counter()
    bag = DagBag(dag_folder=str(dag_file))
    elapsed = time.perf_counter() - started
    assert bag.import_errors == {}
    assert len(bag.dags) == 1, f"one DAG per file, found {list(bag.dags)}"
    dag = next(iter(bag.dags.values()))
    assert elapsed < PARSE_BUDGET_S, f"DagBag parse took {elapsed:.2f}s"
    assert dag.tags, "tags"
    assert dag.doc_md and dag.doc_md.strip().startswith("###"), "doc_md (the module docstring)"
    for task in dag.tasks:
        assert task.owner not in ("", "airflow"), f"{task.task_id}: owner"
        assert task.retries >= 1, f"{task.task_id}: retries"


@pytest.mark.parametrize("dag_file", DAG_FILES, ids=ids)
def test_dag_params_make_a_valid_trigger_form(dag_file: Path) -> None:
    """Every Param has a default that validates, a title, and a type (the UI builds its form from them)."""
    from airflow.dag_processing.dagbag import DagBag

    dag = next(iter(DagBag(dag_folder=str(dag_file)).dags.values()))
    assert dag.params, "Params, so a manual trigger shows a form"
    dag.params.validate()
    for name in dag.params:
        param = dag.params.get_param(name)
        assert param.schema.get("type"), f"{name}: type"
        assert param.schema.get("title"), f"{name}: title"


def test_dag_ids_are_unique(dag_bag) -> None:
    assert len(dag_bag.dags) == len(DAG_FILES)
