"""The import fence: ``airflow`` only in dags/ and plugins/.

The import-linter contracts in pyproject.toml cover the ``streams_runtime`` package only, so this
test reads the sources: no module of ``streams_runtime`` or ``spark_jobs`` imports ``airflow``, and
the plain logic modules of ``plugins/streams_ops`` (provisioning, compaction, offsets) stay
Airflow-free so they can be tested and reused without it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAIN_PLUGIN_MODULES = ["provisioning.py", "compaction.py", "offsets.py"]


def airflow_imports(path: Path) -> list[str]:
    """``file:line`` of every import of ``airflow`` (module level or inside functions)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(n == "airflow" or n.startswith("airflow.") for n in names):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


@pytest.mark.parametrize("package", ["streams_runtime", "spark_jobs"])
def test_no_airflow_import_outside_dags_and_plugins(package: str) -> None:
    root = REPO / package
    assert root.is_dir(), f"{package}/ is part of the repository"
    offenders = [hit for path in sorted(root.rglob("*.py")) for hit in airflow_imports(path)]
    assert offenders == [], f"airflow is imported outside dags/ and plugins/: {offenders}"


@pytest.mark.parametrize("module", PLAIN_PLUGIN_MODULES)
def test_plugin_logic_modules_do_not_import_airflow(module: str) -> None:
    assert airflow_imports(REPO / "plugins" / "streams_ops" / module) == []
