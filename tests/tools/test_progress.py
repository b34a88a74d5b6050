"""Restore progress (bars on a terminal, lines otherwise) and the demo's phase bars."""

from __future__ import annotations

import io

from rich.console import Console

from streams_runtime.tools.progress import LINE_THRESHOLD, RestoreProgressDisplay, phase


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=120), out


def test_should_draw_a_bar_per_changelog_partition_on_a_terminal():
    console, out = _terminal()
    display = RestoreProgressDisplay(bars=True, console=console)
    display.on_restore_start(("app-store-changelog", 0), "store", 100, 20_100)
    display.on_restore_start(("app-store-changelog", 1), "store", 0, 50)
    display.on_batch_restored(("app-store-changelog", 0), "store", 10_099, 10_000)
    display.on_restore_end(("app-store-changelog", 1), "store", 50)
    display.on_batch_restored(("app-store-changelog", 0), "store", 20_099, 10_000)
    display.on_restore_end(("app-store-changelog", 0), "store", 20_000)
    text = out.getvalue()
    assert "restore store (app-store-changelog-0)" in text and "20000/20000" in text
    assert "restore store (app-store-changelog-1)" in text and "50/50" in text


def test_should_print_lines_for_long_restores_only_off_a_terminal():
    lines: list[str] = []
    display = RestoreProgressDisplay(bars=False, say=lines.append)
    display.on_restore_start(("log", 0), "small", 0, 10)
    display.on_restore_end(("log", 0), "small", 10)
    assert lines == []
    display.on_restore_start(("log", 1), "big", 0, LINE_THRESHOLD * 2)
    display.on_batch_restored(("log", 1), "big", LINE_THRESHOLD * 2 - 1, LINE_THRESHOLD * 2)
    display.on_restore_end(("log", 1), "big", LINE_THRESHOLD * 2)
    assert lines[0] == f"restore big (log-1): {LINE_THRESHOLD * 2} records to replay"
    assert lines[-1].startswith(f"restore big (log-1): {LINE_THRESHOLD * 2} records in ")


def test_should_show_a_phase_bar_on_a_terminal_and_nothing_elsewhere():
    console, out = _terminal()
    with phase("payments reflected", 40, console=console) as bar:
        assert bar is not None
        bar(40)
    assert "payments reflected" in out.getvalue() and "40/40" in out.getvalue()
    plain = io.StringIO()
    with phase("payments reflected", 40, console=Console(file=plain, force_terminal=False)) as bar:
        assert bar is None
    assert plain.getvalue() == ""
