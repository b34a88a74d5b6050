"""scripts/any_share.py, the gate of ``make typecheck``: an explicit ``Any`` outside the allow-list,
a stale allow-list entry or too large a share of ``Any`` parameters fails it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "any_share.py"

TYPED = """
from __future__ import annotations


def scale(value: object, factor: int) -> object:
    return value


class Store:
    def put(self, key: bytes, value: bytes) -> None: ...
"""


@pytest.fixture(scope="module")
def any_share() -> ModuleType:
    spec = importlib.util.spec_from_file_location("any_share_gate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _package(tmp_path: Path, source: str) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(source)
    return package


def test_a_typed_package_passes(any_share: ModuleType, tmp_path: Path) -> None:
    failed, lines = any_share.check(_package(tmp_path, TYPED), boundaries={}, untyped=frozenset())
    assert not failed, lines
    assert lines[0].startswith("Any parameters: 0 of 4 (0.0%")


def test_a_new_explicit_any_fails(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: Any) -> None: ...\n"
    failed, lines = any_share.check(
        _package(tmp_path, source), boundaries={}, max_share=1.0, untyped=frozenset()
    )
    assert failed
    assert (
        "1 explicit Any outside the allow-list (scripts/any_share.py BOUNDARIES) "
        "and not on the not-yet-typed list (scripts/any_share_untyped.txt)"
    ) in lines
    assert "  pkg.mod:load raw" in lines


def test_an_any_return_outside_the_allow_list_fails(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: bytes) -> typing.Any: ...\n"
    failed, lines = any_share.check(_package(tmp_path, source), boundaries={}, untyped=frozenset())
    assert failed
    assert "  pkg.mod:load return" in lines


def test_an_any_on_the_allow_list_passes(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: Any) -> None: ...\n"
    boundaries = {"pkg.mod:load raw": "a JSON document"}
    failed, lines = any_share.check(
        _package(tmp_path, source), boundaries=boundaries, max_share=1.0, untyped=frozenset()
    )
    assert not failed, lines
    assert lines[0].startswith("Any parameters: 1 of 5 (20.0%")


def test_too_large_a_share_fails_even_on_the_allow_list(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: Any) -> None: ...\n"
    boundaries = {"pkg.mod:load raw": "a JSON document"}
    failed, lines = any_share.check(
        _package(tmp_path, source), boundaries=boundaries, max_share=0.10, untyped=frozenset()
    )
    assert failed
    assert lines[-1] == "the share of Any parameters 20.0% exceeds 10%"


def test_a_stale_allow_list_entry_fails(any_share: ModuleType, tmp_path: Path) -> None:
    boundaries = {"pkg.mod:load raw": "a JSON document"}
    failed, lines = any_share.check(_package(tmp_path, TYPED), boundaries=boundaries, untyped=frozenset())
    assert failed
    assert lines[-1] == "allow-list entries that match no Any any more (remove them): pkg.mod:load raw"


def test_an_any_on_the_not_yet_typed_list_passes(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: Any) -> None: ...\n"
    failed, lines = any_share.check(
        _package(tmp_path, source), boundaries={}, max_share=1.0, untyped=frozenset({"pkg.mod:load raw"})
    )
    assert not failed, lines
    assert "1 explicit Any not yet typed (scripts/any_share_untyped.txt)" in lines


def test_a_new_any_beside_the_not_yet_typed_list_fails(any_share: ModuleType, tmp_path: Path) -> None:
    source = TYPED + "\n\ndef load(raw: Any, mode: Any) -> None: ...\n"
    failed, lines = any_share.check(
        _package(tmp_path, source), boundaries={}, max_share=1.0, untyped=frozenset({"pkg.mod:load raw"})
    )
    assert failed
    assert "  pkg.mod:load mode" in lines
    assert "  pkg.mod:load raw" not in lines


def test_a_typed_entry_left_on_the_not_yet_typed_list_fails(any_share: ModuleType, tmp_path: Path) -> None:
    failed, lines = any_share.check(
        _package(tmp_path, TYPED), boundaries={}, untyped=frozenset({"pkg.mod:scale value"})
    )
    assert failed
    assert lines[-1] == (
        "not-yet-typed entries whose Any is gone (delete them from scripts/any_share_untyped.txt): "
        "pkg.mod:scale value"
    )


def test_the_untyped_list_file_skips_comments_and_blank_lines(any_share: ModuleType, tmp_path: Path) -> None:
    listed = tmp_path / "untyped.txt"
    listed.write_text("# why\n\npkg.mod:load raw\n  pkg.mod:load return  \n")
    assert any_share._untyped(listed) == frozenset({"pkg.mod:load raw", "pkg.mod:load return"})


def test_the_package_passes_its_gate(any_share: ModuleType) -> None:
    """What ``make typecheck`` runs: the package within its share, every Any accounted for."""
    failed, lines = any_share.check()
    assert not failed, "\n".join(lines)


def test_pruning_deletes_only_the_entries_whose_any_is_gone(any_share: ModuleType, tmp_path: Path) -> None:
    package = _package(tmp_path, TYPED + "\n\ndef load(raw: Any) -> None: ...\n")
    listed = tmp_path / "untyped.txt"
    listed.write_text("# why\npkg.mod:load raw\npkg.mod:scale value\n")
    assert any_share.prune_untyped(package, listed) == ["pkg.mod:scale value"]
    assert listed.read_text() == "# why\npkg.mod:load raw\n"
