"""The README is the front door: short, with the two commands, and everything it shows works.

Its application module runs and counts what its walk-through produces; every ``streams-runtime``
command line it prints is accepted by the command's own parser (the subcommands and flags exist);
every relative link it holds leads to a file of the repository.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from streams_runtime.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

TWO_COMMANDS = """```bash
make demo    # set up .venv, start the embedded broker, run the main job, print what it saw
make test    # set up .venv and run the whole test suite (unit, topology, real-broker integration)
```"""


def test_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) < 250
    assert TWO_COMMANDS in README
    for url in ("/ui", "/docs", "Airflow"):
        assert url in README


def _command_lines() -> list[str]:
    """``streams-runtime ...`` as the README's shell and console blocks show them, one per command."""
    found = []
    for block in re.findall(r"```(?:bash|console)\n(.*?)```", README, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            for part in line.split("|"):
                part = re.sub(r"\s+#.*$", "", part.strip().removeprefix("$ "))
                if part.startswith("streams-runtime "):
                    found.append(part)
    return found


COMMANDS = _command_lines()


def test_readme_shows_the_walk_through_commands() -> None:
    subcommands = {shlex.split(line)[1] for line in COMMANDS}
    assert {"broker", "topics", "produce", "worker", "status"} <= subcommands


@pytest.mark.parametrize("line", COMMANDS)
def test_every_command_line_is_accepted_by_the_parser(line: str) -> None:
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert callable(args.func)


def test_readme_application_counts_the_payments_it_produces() -> None:
    from streams_runtime import Serdes, TopologyTestDriver

    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    scope: dict = {"__name__": "payments"}
    exec(compile(code, "README.md", "exec"), scope)
    topology, config = scope["app"]()
    assert config["application_id"] == "payments-app"
    # the walk-through's three payments (step 3), as `produce` sends them: string keys, JSON values
    payments = [("user-1", {"amount": 12.5}), ("user-2", {"amount": 3.0}), ("user-1", {"amount": 7.25})]
    with TopologyTestDriver(topology, config) as driver:
        source = driver.create_input_topic("payments", Serdes.String(), Serdes.Json())
        counts = driver.create_output_topic("payment-counts", Serdes.String(), Serdes.Long())
        for key, value in payments:
            source.pipe_input(key, value)
        assert counts.read_key_values_to_list() == [("user-1", 1), ("user-2", 1), ("user-1", 2)]
        # what `curl .../stores/payment-counts/keys/user-1` answers (step 5): 2
        assert driver.get_key_value_store("payment-counts").get("user-1") == 2


def test_readme_links_lead_to_files_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(relative) > 20
    for link in relative:
        assert (ROOT / link).exists(), link
