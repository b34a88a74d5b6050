"""Compares two results of one case (docs/oracle.md, "A result"): the records, in order, and
whether the case failed (the two runtimes' error messages differ by nature; that one failed and
the other did not is a difference); then, when the case asked for them, the task metrics after
each step and the expired-window warnings, each list in order."""

from __future__ import annotations

import json
from typing import Any


def first_difference(case: dict[str, Any], expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """None when ``actual`` (this project) matches ``expected`` (Kafka Streams); otherwise a report:
    the first differing record of each side, the errors, and the case as one JSON line."""
    want, got = expected["records"], actual["records"]
    report = None
    for index, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            report = f"record {index} differs:\n  Kafka Streams: {w}\n  this project:  {g}"
            break
    if report is None and len(want) != len(got):
        index = min(len(want), len(got))
        extra = want[index] if len(want) > index else got[index]
        side = "Kafka Streams" if len(want) > index else "this project"
        report = f"only {side} has record {index} (and {abs(len(want) - len(got))} in all): {extra}"
    if report is None and (expected["error"] is None) != (actual["error"] is None):
        report = "only one side failed"
    for part in ("metrics", "warnings"):
        if report is None and case.get(part):
            report = _list_difference(part, expected.get(part, []), actual.get(part, []))
    if report is None:
        return None
    return (
        f"{report}\n"
        f"  errors: Kafka Streams {expected['error']!r}; this project {actual['error']!r}\n"
        f"  Kafka Streams' records: {want}\n"
        f"  this project's records: {got}\n"
        f"  case: {json.dumps(case)}"
    )


def _list_difference(part: str, want: list[Any], got: list[Any]) -> str | None:
    """The first entry of ``part`` (metrics or warnings) that differs, with both lists."""
    for index, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            return (
                f"{part} entry {index} differs:\n  Kafka Streams: {w}\n  this project:  {g}\n"
                f"  {part}: {want} / {got}"
            )
    if len(want) != len(got):
        index = min(len(want), len(got))
        side, extra = ("Kafka Streams", want[index]) if len(want) > index else ("this project", got[index])
        return f"only {side} has {part} entry {index}: {extra}\n  {part}: {want} / {got}"
    return None
