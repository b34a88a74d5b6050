"""``streams_ops`` as an installed Airflow provider: nothing but ``AIRFLOW_HOME`` is needed.

The Airflow CLI runs in a fresh environment holding only ``PATH`` and ``AIRFLOW_HOME`` (whose
``dags/`` is a copy of the repo's DAG files, away from the repo so nothing of it is on
``sys.path``): the providers manager finds the provider through its entry point, the UI gets its
connection type, and the four DAGs import without a plugins folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AIRFLOW = Path(sys.executable).parent / "airflow"
STREAMS_DAGS = {
    "streams_provision_topics",
    "streams_changelog_compaction_check",
    "streams_spark_backfill",
    "streams_state_rebuild",
}


def airflow_cli(home: Path, *args: str) -> str:
    env = {"PATH": f"{AIRFLOW.parent}:/usr/bin:/bin", "AIRFLOW_HOME": str(home)}
    result = subprocess.run(
        [str(AIRFLOW), *args], env=env, cwd=str(home), capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout


def json_rows(output: str) -> list[dict]:
    start = output.index("[")
    return json.loads(output[start : output.rindex("]") + 1])


@pytest.fixture(scope="module")
def bare_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("bare_airflow_home")
    (home / "dags").mkdir()
    for dag_file in (REPO / "dags").glob("*.py"):
        shutil.copy(dag_file, home / "dags" / dag_file.name)
    shutil.copytree(REPO / "dags" / "specs", home / "dags" / "specs")
    airflow_cli(home, "db", "migrate")
    return home


def test_providers_list_shows_the_provider(bare_home: Path) -> None:
    rows = json_rows(airflow_cli(bare_home, "providers", "list", "-o", "json"))
    packages = {row["package_name"]: row for row in rows}
    assert "streams-runtime" in packages, sorted(packages)
    assert "apache-airflow-providers-apache-kafka" in packages


def test_connection_types_are_registered(bare_home: Path) -> None:
    rows = json_rows(airflow_cli(bare_home, "providers", "hooks", "-o", "json"))
    by_type = {row["connection_type"]: row for row in rows}
    assert by_type["streams_worker"]["class"] == "streams_ops.hooks.streams_worker.StreamsWorkerHook"
    assert by_type["streams_worker"]["package_name"] == "streams-runtime"
    # the Kafka admin connection is the official Kafka provider's type
    assert by_type["kafka"]["package_name"] == "apache-airflow-providers-apache-kafka"
    behaviours = {
        row["field_behaviours"]
        for row in json_rows(airflow_cli(bare_home, "providers", "behaviours", "-o", "json"))
    }
    assert {"kafka", "streams_worker"} <= behaviours
    # what the UI's connection form gets for the worker type: the password field relabelled Token
    probe = (
        "import json; from airflow.providers_manager import ProvidersManager; "
        "print(json.dumps(ProvidersManager().field_behaviours['streams_worker']))"
    )
    env = {"PATH": f"{AIRFLOW.parent}:/usr/bin:/bin", "AIRFLOW_HOME": str(bare_home)}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=str(bare_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    form = json.loads(out.stdout.strip().splitlines()[-1])
    assert form["relabeling"]["password"] == "Token"
    assert "login" in form["hidden_fields"]


def test_the_data_docs_plugin_is_loaded(bare_home: Path) -> None:
    rows = json_rows(airflow_cli(bare_home, "plugins", "-o", "json"))
    assert "streams_data_docs" in {row["name"] for row in rows}, rows


def test_dags_import_with_only_airflow_home(bare_home: Path) -> None:
    airflow_cli(bare_home, "dags", "reserialize")
    errors = airflow_cli(bare_home, "dags", "list-import-errors", "-o", "json")
    assert errors.strip() in ("[]", "No data found"), errors
    dags = {row["dag_id"] for row in json_rows(airflow_cli(bare_home, "dags", "list", "-o", "json"))}
    assert STREAMS_DAGS <= dags, sorted(dags)
