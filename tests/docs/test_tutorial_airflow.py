"""The Airflow and Spark tutorial asks only for what exists.

``docs/tutorials/airflow-and-spark.md`` is a walk through a running demo with Airflow, so its
steps cannot run here; what it tells the reader to type can be checked. Every command of its shell
blocks (``bash`` blocks: every line; ``console`` blocks: the ``$`` lines) must be one the project
accepts: a ``make`` target of the Makefile with variables it reads (``ARGS`` of ``make demo``
parsed by ``streams-runtime demo``'s own parser), a ``streams-runtime`` line its parser accepts,
a script of ``scripts/`` with arguments its parser accepts, a ``curl`` of a route the workers'
HTTP API serves, or one of a few shell commands. A command of any other kind fails until it gets
a check here. The DAG ids, form fields and task ids the page names are checked against the DAGs
themselves in ``tests/dags/test_tutorial_names.py`` (Airflow is imported under tests/dags only).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import pytest

from streams_runtime.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorials" / "airflow-and-spark.md"
TEXT = PAGE.read_text()
MAKEFILE = (ROOT / "Makefile").read_text()

#: plain shell commands the page may use, with nothing of the project's to check in them
SHELL = {"export", "cat", "ls", "cd", "."}


def command_lines(text: str) -> list[str]:
    """Each command of the page's ``bash`` and ``console`` blocks, comments and prompts removed."""
    found = []
    for kind, block in re.findall(r"```(bash|console)\n(.*?)```", text, re.S):
        lines = block.replace("\\\n", " ").splitlines()
        if kind == "console":
            lines = [line.removeprefix("$ ") for line in lines if line.startswith("$ ")]
        for line in lines:
            for part in re.split(r"\s(?:&&|\|)\s", line):
                part = re.sub(r"(^|\s+)#.*$", "", part).strip()
                if part:
                    found.append(part)
    return found


COMMANDS = command_lines(TEXT)


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", MAKEFILE, re.M))


def check_make(words: list[str]) -> None:
    targets = [w for w in words[1:] if "=" not in w]
    assignments = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    assert targets, "make without a target"
    for target in targets:
        assert target in makefile_targets(), f"no target {target!r} in the Makefile"
    for name, value in assignments.items():
        assert f"$({name})" in MAKEFILE, f"the Makefile reads no variable {name}"
        if name == "ARGS" and targets == ["demo"]:  # the Makefile hands them to `streams-runtime demo`
            assert "streams-runtime demo $(ARGS)" in MAKEFILE
            check_streams_runtime(["streams-runtime", "demo", *shlex.split(value)])


def check_streams_runtime(words: list[str]) -> None:
    args = build_parser().parse_args(words[1:])
    assert callable(args.func)


def check_script(words: list[str]) -> None:
    assert words[0] in (".venv/bin/python", "python"), words[0]
    script = ROOT / words[1]
    assert script.is_file() and script.parent == ROOT / "scripts", f"no script {words[1]}"
    spec = importlib.util.spec_from_file_location(f"tutorial_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.parse_args(words[2:])  # argparse exits (SystemExit) on a flag it does not know


def worker_routes() -> list[object]:
    from streams_runtime.server.app import create_app

    return [r for r in create_app(SimpleNamespace(config={})).routes if hasattr(r, "path_regex")]


def check_curl(words: list[str]) -> None:
    urls = [w for w in words[1:] if w.startswith("http")]
    assert len(urls) == 1, words
    path = urllib.parse.urlparse(urls[0]).path
    assert any(route.path_regex.match(path) for route in worker_routes()), f"no route serves {path}"


def check(line: str) -> None:
    words = shlex.split(line)
    if words[0] == "make":
        check_make(words)
    elif words[0] == "streams-runtime":
        check_streams_runtime(words)
    elif len(words) > 1 and words[1].startswith("scripts/"):
        check_script(words)
    elif words[0] == "curl":
        check_curl(words)
    else:
        assert words[0] in SHELL, f"{line!r}: a command this test has no check for (add one)"


def test_the_page_has_the_walks_commands() -> None:
    # the extraction still finds what the walk is made of (a changed block format fails here)
    programs = {shlex.split(line)[0] for line in COMMANDS}
    assert {"make", "streams-runtime", "curl"} <= programs, programs
    assert 'make demo ARGS="--with-airflow --keep-running"' in COMMANDS


@pytest.mark.parametrize("line", COMMANDS)
def test_every_command_is_one_the_project_accepts(line: str) -> None:
    check(line)


@pytest.mark.parametrize(
    "line",
    [
        "make docs",
        'make demo ARGS="--broker kafka --with-airflow"',
        ".venv/bin/python scripts/trigger_backfill.py --url http://127.0.0.1:8080 --start 2026-01-01"
        " --end 2026-01-02 --chunk-hours 6",
        "curl -s http://127.0.0.1:7070/metadata/payment-totals",
        "ls .streams-runtime",
    ],
)
def test_the_checks_accept_what_the_project_accepts(line: str) -> None:
    check(line)


@pytest.mark.parametrize(
    "line",
    [
        "make demo-airflow",  # no such target
        'make demo ARGS="--with-airflow --airflow-ui-port 8080"',  # no such flag of the demo
        "make demo AIRFLOW=1",  # a variable the Makefile does not read
        "streams-runtime consume demo-user-totals --from-beginning",
        "curl -s http://127.0.0.1:7070/stores/payment-totals/key/user-0",  # not a route
        ".venv/bin/python scripts/trigger_backfill.py --url http://x --start a --end b --hours 6",
        ".venv/bin/python scripts/backfill.py --start a --end b",  # no such script
        "airflow dags trigger streams_spark_backfill",  # a program the test has no check for
    ],
)
def test_a_command_the_project_does_not_accept_fails(line: str) -> None:
    with pytest.raises((AssertionError, SystemExit)):
        check(line)


def test_page_is_in_the_nav_and_listed_with_the_tutorials() -> None:
    assert "tutorials/airflow-and-spark.md" in (ROOT / "mkdocs.yml").read_text()
    assert "](tutorials/airflow-and-spark.md)" in (ROOT / "docs" / "index.md").read_text()
    assert "](docs/tutorials/airflow-and-spark.md)" in (ROOT / "README.md").read_text()
