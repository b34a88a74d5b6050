"""The documentation site (mkdocs.yml): it builds with --strict, its configuration reference lists
every StreamsConfig key, and its pages load nothing from the network (no Google Fonts, no CDN)."""

from __future__ import annotations

import argparse
import html
import os
import pathlib
import re
import subprocess
import sys

import pytest

import streams_runtime  # noqa: F401 - its modules may declare keys of their own
from streams_runtime.config import _DEFINITIONS

ROOT = pathlib.Path(__file__).resolve().parents[2]
# <script src="http..."> or <link ... href="http..."> (stylesheets, fonts, preconnects)
REMOTE_ASSET = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(ROOT / "mkdocs.yml")]
    subprocess.run(
        [*build, "-d", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    return out


def test_configuration_reference_lists_every_key(site: pathlib.Path) -> None:
    page = (site / "reference" / "configuration.html").read_text()
    headings = set(re.findall(r'<h3 id="([a-z0-9_]+)"', page))
    assert headings == set(_DEFINITIONS), {
        "missing": sorted(set(_DEFINITIONS) - headings),
        "unknown": sorted(headings - set(_DEFINITIONS)),
    }
    for name in _DEFINITIONS:
        assert f"<code>{name}</code>" in page
    # each key's section shows its Python type, the one mypy gives config.<name>
    sections = dict(re.findall(r'<h3 id="([a-z0-9_]+)"(.*?)(?=<h3 |\Z)', page, re.S))
    for name, spec in _DEFINITIONS.items():
        shown = html.escape(spec.type_name(), quote=False)
        assert f"<strong>Type:</strong> <code>{shown}</code>" in sections[name], name
    assert "<strong>Type:</strong> <code>int</code>" in sections["num_stream_threads"]
    assert "<strong>Type:</strong> <code>str | None</code>" in sections["application_id"]


#: the classes a topology is written, run and tested with: each has its section in the API reference
API_CLASSES = (
    "StreamsBuilder Topology KStream KTable GlobalKTable KGroupedStream KGroupedTable CogroupedKStream "
    "BranchedKStream TimeWindows SlidingWindows SessionWindows JoinWindows TimeWindowedKStream "
    "SessionWindowedKStream Windowed EmitStrategy Suppressed Consumed Produced Grouped Materialized "
    "Joined StreamJoined TableJoined Repartitioned Branched Printed KeyValue Serdes Serde WindowedSerdes "
    "Processor FixedKeyProcessor ProcessorContext Record PunctuationType Stores KafkaStreams StreamsConfig "
    "TopologyTestDriver TestInputTopic TestOutputTopic StreamsError"
).split()


def test_api_reference_documents_every_class_a_topology_is_written_with(site: pathlib.Path) -> None:
    page = (site / "reference" / "api.html").read_text()
    documented = {name.rsplit(".", 1)[-1] for name in re.findall(r'<h2 id="(streams_runtime[\w.]*)"', page)}
    assert set(API_CLASSES) <= documented, sorted(set(API_CLASSES) - documented)
    for name in API_CLASSES:
        assert name in streams_runtime.__all__, f"{name} is documented but not exported by the package"
    # members without a docstring are listed too (a window's factory methods, for one)
    assert "of_size_and_grace" in page and "flat_map_values" in page


def test_pages_load_nothing_from_the_network(site: pathlib.Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        html = page.read_text()
        assert "fonts.googleapis.com" not in html, page
        assert "fonts.gstatic.com" not in html, page
        assert not REMOTE_ASSET.findall(html), (page, REMOTE_ASSET.findall(html)[:3])


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command line of ``streams-runtime`` (``streams-runtime topics create``), from its parser."""
    from streams_runtime.cli import build_parser

    found = []

    def walk(path: str, parser: argparse.ArgumentParser) -> None:
        found.append((path, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(f"{path} {name}", child)

    walk("streams-runtime", build_parser())
    return found


def test_cli_reference_lists_every_command_and_option(site: pathlib.Path) -> None:
    page = (site / "reference" / "cli.html").read_text()
    commands = _commands()
    assert len(commands) > 10  # broker start|stop|status, topics create|list|describe, worker, ...
    for path, parser in commands:
        anchor = path.replace(" ", "-")
        heading = re.search(rf'<h3 id="{anchor}">(.*?)</h3>', page, re.S)
        assert heading and f"<code>{path}</code>" in heading.group(1), path
        end = page.find("<h3", heading.end())
        section = page[heading.end() : end if end != -1 else len(page)]
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"<code>{flag}" in section or f", {flag}" in section, (path, flag)
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                assert f"<code>{action.metavar or action.dest}" in section, (path, action.dest)
