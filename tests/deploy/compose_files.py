"""docker-compose.yml as compose reads it with ``--env-file deploy/stack.env``, for the deploy tests.

:data:`RAW` is the file as written; :data:`COMPOSE` has every ``${NAME...}`` whose NAME
deploy/stack.env sets replaced by that value (innermost first, as compose resolves the nested
default of ``${SPARK_MASTER_URL:-spark://spark-master:${SPARK_MASTER_PORT}}``); the secrets' and the
shell's references are left for the tests to render.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
STACK_ENV_FILE = ROOT / "deploy" / "stack.env"
#: innermost references only: no brace inside
REFERENCE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<word>[^{}]*))?\}")


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines, ``#`` comments and blank lines skipped (compose's --env-file)."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f"{path}: not NAME=value: {line!r}"
            values[name.strip()] = value.strip()
    return values


STACK_ENV = read_env_file(STACK_ENV_FILE)
RAW = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def with_stack_env(node: Any, env: dict[str, str] = STACK_ENV) -> Any:
    """``node`` with the references to ``env``'s names replaced by their values ($$ kept)."""
    if isinstance(node, dict):
        return {k: with_stack_env(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [with_stack_env(v, env) for v in node]
    if not isinstance(node, str):
        return node

    def one(match: re.Match[str]) -> str:
        return env[match["name"]] if match["name"] in env else match[0]

    parts = node.split("$$")
    for i, part in enumerate(parts):
        while (replaced := REFERENCE.sub(one, part)) != part:
            part = replaced
        parts[i] = part
    return "$$".join(parts)


COMPOSE = with_stack_env(RAW)


def load_stack_module() -> ModuleType:
    """scripts/stack.py (the native stack) imported as a module, once."""
    if "stack_script" in sys.modules:
        return sys.modules["stack_script"]
    spec = importlib.util.spec_from_file_location("stack_script", ROOT / "scripts" / "stack.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
