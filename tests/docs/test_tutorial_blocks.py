"""The tutorials' code runs as written.

Every fenced ``python`` block of ``docs/tutorials/*.md`` must compile. A block preceded by a marker
``<!-- test: NAME -->`` (an HTML comment: the site shows nothing of it) is run, and the check of the
same name below asserts what the tutorial says it gives: the outputs in its comments, the
``describe()`` text the page prints. A marker without a check, or a check without its block, fails.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
BLOCK = re.compile(r"(?:<!-- test: (?P<name>[a-z0-9-]+) -->\s*)?```python\n(?P<code>.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[Path, str | None, str]]:
    found = []
    for page in sorted(TUTORIALS.glob("*.md")):
        for match in BLOCK.finditer(page.read_text()):
            found.append((page, match.group("name"), match.group("code")))
    return found


BLOCKS = _blocks()
MARKED = {name: (page, code) for page, name, code in BLOCKS if name}


def _run(name: str) -> tuple[dict[str, Any], str]:
    """Runs the marked block in this process: its variables and what it printed."""
    page, code = MARKED[name]
    scope: dict[str, Any] = {"__name__": f"tutorial_{name.replace('-', '_')}"}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(code, f"{page.name}:{name}", "exec"), scope)
    return scope, out.getvalue()


def check_word_count() -> None:
    scope, printed = _run("word-count")
    # the block's comments: the counts read from the output topic, and the store's answer
    # (the block evaluates both without keeping them: ask the driver's topic and store again)
    from streams_runtime import Serdes, TopologyTestDriver

    assert "Sub-topology: 0" in printed and "Sub-topology: 1" in printed  # two sub-topologies
    assert "wordcount-app-word-count-store-repartition" in printed  # joined by this topic
    assert "'cleanup.policy': 'delete'" in printed and "'cleanup.policy': 'compact'" in printed
    assert "{0: 6, 1: 6}" in printed
    with TopologyTestDriver(scope["topology"], {"application_id": "wordcount-app"}) as driver:
        lines = driver.create_input_topic("text-input", Serdes.String(), Serdes.String())
        counts = driver.create_output_topic("wordcount-output", Serdes.String(), Serdes.Long())
        lines.pipe_input(None, "Hello Kafka Streams", timestamp=1)
        lines.pipe_input(None, "hello python", timestamp=2)
        assert [(kv.key, kv.value) for kv in counts.read_key_values_to_list()] == [
            ("hello", 1),
            ("kafka", 1),
            ("streams", 1),
            ("hello", 2),
            ("python", 1),
        ]
        assert driver.get_key_value_store("word-count-store").get("hello") == 2


def check_words_per_minute() -> None:
    scope, printed = _run("words-per-minute")
    assert printed.splitlines() == [
        "{'hello@0': 1, 'kafka@0': 2, 'hello@60000': 1}",  # the late "kafka" counted in its window
        "[(0, 1), (60000, 1)]",
    ], printed
    # past the grace (stream time 61 s + 5 min) a record for the first minute is dropped
    from streams_runtime import Serdes, TopologyTestDriver

    with TopologyTestDriver(scope["topology"], {"application_id": "words-per-minute"}) as driver:
        lines = driver.create_input_topic("text-input", Serdes.String(), Serdes.String())
        counts = driver.create_output_topic("words-per-minute", Serdes.String(), Serdes.Long())
        lines.pipe_input(None, "hello", timestamp=1_000)
        lines.pipe_input(None, "hello", timestamp=400_000)
        lines.pipe_input(None, "hello", timestamp=2_000)  # window [0, 60 s) closed at 360 s
        assert counts.read_key_values_to_map() == {"hello@0": 1, "hello@360000": 1}


def check_in_memory_runtime() -> None:
    # real stream threads: in a process of its own, so a hang is a timeout and no thread outlives it
    page, code = MARKED["in-memory-runtime"]
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "[b'HELLO']", run.stdout


def check_foreign_key_join() -> None:
    _, printed = _run("foreign-key-join")
    assert printed.splitlines()[:2] == [
        "{'o1': 'c1|book for Ada'}",
        "VersionedRecord(value='Ada', timestamp=10, valid_to=None)",
    ], printed


def check_more_dsl() -> None:
    from streams_runtime import Serdes, TopologyTestDriver

    scope, _ = _run("more-dsl")
    config = {"application_id": "dsl-tour", "default_key_serde": "string", "default_value_serde": "string"}
    topology = scope["builder"].build(config)
    described = str(topology.describe())
    assert described.count("Processor: COGROUPKSTREAM-AGGREGATE-") == 2  # one aggregate per input ...
    assert described.count("(stores: [activity])") == 2  # ... into one store
    assert "(topics: orders-.*)" in described  # the pattern source
    with (
        contextlib.redirect_stdout(io.StringIO()) as printed,
        TopologyTestDriver(topology, config) as driver,
    ):
        clicks = driver.create_input_topic("clicks", Serdes.String(), Serdes.String())
        purchases = driver.create_input_topic("purchases", Serdes.String(), Serdes.String())
        clicks.pipe_input("ada", "home", timestamp=1_000)
        clicks.pipe_input("ada", "cart", timestamp=2_000)
        purchases.pipe_input("ada", "book", timestamp=3_000)
        # a click +1, a purchase +100, in one aggregate
        assert driver.get_key_value_store("activity").get("ada") == 102
        driver.create_input_topic("orders-eu", Serdes.String(), Serdes.String()).pipe_input("o1", "book")
    assert "[orders]: o1, book" in printed.getvalue()


def _tutorial_module(tmp_path: Path, name: str, block: str) -> Any:
    """The marked ``block`` saved as ``<name>.py`` and imported, as the tutorial tells its reader."""
    import importlib

    (tmp_path / f"{name}.py").write_text(MARKED[block][1])
    sys.path.insert(0, str(tmp_path))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def _greetings_module(tmp_path: Path) -> Any:
    return _tutorial_module(tmp_path, "greetings", "greetings-module")


def _described_on(page_name: str, command: str) -> str:
    page = (TUTORIALS / page_name).read_text()
    return re.search(rf"\$ {re.escape(command)}\n(.*?)```", page, re.S).group(1).strip()


def check_greetings_module(tmp_path: Path) -> None:
    greetings = _greetings_module(tmp_path)
    topology, config = greetings.app()
    assert config == {"application_id": "greetings-app"}
    # the page prints what `streams-runtime describe --app greetings:app` shows
    shown = _described_on("first-application.md", "streams-runtime describe --app greetings:app")
    assert str(topology.describe()).strip() == shown


def check_greetings_test(tmp_path: Path) -> None:
    _greetings_module(tmp_path)
    scope, _ = _run("greetings-test")
    scope["test_greets_each_name"]()  # its own assertion: ada is greeted


def check_spend_module(tmp_path: Path) -> None:
    spend = _tutorial_module(tmp_path, "spend", "spend-module")
    topology, config = spend.app()
    assert config == {"application_id": "card-spend"}
    assert str(topology.describe()).strip() == _described_on(
        "processor-api.md", "streams-runtime describe --app spend:app"
    )


def check_spend_test(tmp_path: Path) -> None:
    _tutorial_module(tmp_path, "spend", "spend-module")
    scope, _ = _run("spend-test")
    scope["test_alerts_on_an_outlier_and_summarises_every_minute"]()  # its own assertions


def check_counts_module(tmp_path: Path) -> None:
    from streams_runtime import Serdes, StreamsConfig, TopologyTestDriver

    counts = _tutorial_module(tmp_path, "counts", "counts-module")
    topology, config = counts.app()
    resolved = StreamsConfig(config)
    assert (resolved["processing_guarantee"], resolved["commit_interval_ms"]) == ("exactly_once_v2", 100)
    with TopologyTestDriver(topology, {**config, "statestore_cache_max_bytes": 0}) as driver:
        payments = driver.create_input_topic("payments", Serdes.String(), Serdes.Json())
        out = driver.create_output_topic("payment-counts", Serdes.String(), Serdes.Long())
        for card in ("card-1", "card-2", "card-1"):
            payments.pipe_input(card, {"amount": 5})
        assert out.read_key_values_to_list() == [("card-1", 1), ("card-2", 1), ("card-1", 2)]


def _script(tmp_path: Path, block: str, *args: str, stdin: str = "") -> str:
    script = tmp_path / f"{block}.py"
    script.write_text(MARKED[block][1])
    run = subprocess.run(
        [sys.executable, str(script), *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


@functools.cache
def _payments_lines() -> list[str]:
    """What the tutorial's payments.py prints (run once for both checks that need it)."""
    with tempfile.TemporaryDirectory() as scratch:
        return _script(Path(scratch), "payments-script").splitlines()


def check_payments_script() -> None:
    import collections
    import json

    lines = _payments_lines()
    keys = collections.Counter(json.loads(line)["key"] for line in lines)
    assert len(lines) == 200_000 and len(keys) == 50 and set(keys.values()) == {4000}  # as the page says


def check_check_script(tmp_path: Path) -> None:
    import json

    from streams_runtime import Serdes, TopologyTestDriver

    # the tutorial's pipeline on a slice of its input, without a broker: the app's counts as
    # `consume` prints them, then check.py over them
    sent = _payments_lines()[:2_000]
    (tmp_path / "payments.jsonl").write_text("\n".join(sent) + "\n")
    counts = _tutorial_module(tmp_path, "counts", "counts-module")
    with TopologyTestDriver(counts.topology(), counts.CONFIG) as driver:
        payments = driver.create_input_topic("payments", Serdes.String(), Serdes.Json())
        for line in sent:
            record = json.loads(line)
            payments.pipe_input(record["key"], record["value"])
        out = driver.create_output_topic("payment-counts", Serdes.String(), Serdes.Long())
        consumed = [json.dumps({"key": kv.key, "value": kv.value}) for kv in out.read_key_values_to_list()]
    sent_file = str(tmp_path / "payments.jsonl")
    checked = _script(tmp_path, "check-script", sent_file, stdin="\n".join(consumed))
    assert checked.splitlines() == ["50 cards, 2000 payments sent, 2000 counted", "every count exact"]
    short = _script(tmp_path, "check-script", sent_file, stdin="\n".join(consumed[:-1]))
    assert "1 cards differ (counted, sent)" in short  # a lost update is caught


CHECKS: dict[str, Callable[..., None]] = {
    "word-count": check_word_count,
    "words-per-minute": check_words_per_minute,
    "in-memory-runtime": check_in_memory_runtime,
    "foreign-key-join": check_foreign_key_join,
    "more-dsl": check_more_dsl,
    "greetings-module": check_greetings_module,
    "greetings-test": check_greetings_test,
    "spend-module": check_spend_module,
    "spend-test": check_spend_test,
    "counts-module": check_counts_module,
    "payments-script": check_payments_script,
    "check-script": check_check_script,
}


def test_every_marked_block_has_its_check_and_every_check_its_block() -> None:
    assert len(BLOCKS) >= len(CHECKS)
    assert set(MARKED) == set(CHECKS)


@pytest.mark.parametrize(
    ("page", "code"), [(page, code) for page, _, code in BLOCKS], ids=lambda v: getattr(v, "name", "")
)
def test_every_python_block_compiles(page: Path, code: str) -> None:
    assert compile(code, str(page), "exec") is not None


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_marked_block_runs_and_gives_what_the_tutorial_says(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the greetings module's directory goes away
    check = CHECKS[name]
    if "tmp_path" in check.__code__.co_varnames[: check.__code__.co_argcount]:
        check(tmp_path)
    else:
        check()
