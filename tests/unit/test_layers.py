"""The package's layers (import-linter `layers` contracts in pyproject.toml) hold, and the DSL
needs no function-local import to stay free of import cycles."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER_CONTRACTS = (
    "layers: kafka client boundary at the bottom",
    "layers inside the DSL: no import cycle",
)


def _lint_imports() -> str:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)


def test_layer_contracts_are_declared_and_kept() -> None:
    out = _lint_imports()
    for contract in LAYER_CONTRACTS:
        lines = [line for line in out.splitlines() if line.startswith(contract)]
        assert lines, f"contract {contract!r} missing from lint-imports output:\n{out}"
        assert all(line.rstrip().endswith("KEPT") for line in lines), out


def _function_local_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streams_runtime"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}")
                elif isinstance(node, ast.Import) and any(
                    a.name.startswith("streams_runtime") for a in node.names
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_dsl_imports_the_project_at_module_level_only() -> None:
    files = sorted((ROOT / "streams_runtime" / "kstream").rglob("*.py"))
    assert len(files) > 20
    local = [hit for path in files for hit in _function_local_imports(path)]
    assert local == [], "function-local imports hide import cycles:\n" + "\n".join(local)


def test_the_kafka_client_boundary_imports_nothing_of_the_runtime_above_it() -> None:
    allowed = {"streams_runtime.errors", "streams_runtime.kafka"}
    for path in sorted((ROOT / "streams_runtime" / "kafka").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streams_runtime"):
                top = ".".join(node.module.split(".")[:2])
                assert top in allowed, f"{path.name}:{node.lineno} imports {node.module}"
