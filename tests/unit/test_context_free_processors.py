"""Every DSL processor that says it is ``context_free`` keeps its word: after ``init`` its
``process`` reads nothing of the context and forwards only through the forwarders it bound,
handing a child's error to ``child_failed``. The runtime calls such a processor without making
its node and record current (the light edge of ``processor/internals/forwarders.py``), so a
processor that read the context would see its parent's node and record."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest

import streams_runtime.kstream.internals as dsl_internals
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import InternalProcessor
from streams_runtime.kstream.internals.stream_processors import (
    KStreamFilter,
    KStreamFlatMap,
    KStreamFlatMapValues,
    KStreamMap,
    KStreamMapValues,
    KStreamPeek,
    KStreamSelectKey,
)
from streams_runtime.kstream.internals.table_processors import KTableToStream
from streams_runtime.processor.api import Record
from streams_runtime.processor.internals.forwarders import Forward

#: each context-free processor, made to forward the record it is given, and that record
CASES: dict[type, tuple[Any, Record]] = {
    KStreamFilter: (lambda: KStreamFilter(lambda k, v: True, False), Record("k", 1, 5, ())),
    KStreamMap: (lambda: KStreamMap(lambda k, v: (k, v)), Record("k", 1, 5, ())),
    KStreamMapValues: (lambda: KStreamMapValues(lambda k, v: v), Record("k", 1, 5, ())),
    KStreamSelectKey: (lambda: KStreamSelectKey(lambda k, v: k), Record("k", 1, 5, ())),
    KStreamFlatMap: (lambda: KStreamFlatMap(lambda k, v: [(k, v)]), Record("k", 1, 5, ())),
    KStreamFlatMapValues: (lambda: KStreamFlatMapValues(lambda k, v: [v]), Record("k", 1, 5, ())),
    KStreamPeek: (lambda: KStreamPeek(lambda k, v: None, True), Record("k", 1, 5, ())),
    KTableToStream: (lambda: KTableToStream(), Record("k", Change(1, None), 5, ())),
}


def _context_free_classes() -> set[type]:
    for module in pkgutil.iter_modules(dsl_internals.__path__):
        importlib.import_module(f"{dsl_internals.__name__}.{module.name}")
    found, todo = set(), [InternalProcessor]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if getattr(sub, "context_free", False):
                found.add(sub)
    return found


class _Context:
    """A context whose every attribute read fails once ``armed`` (after the processor's init)."""

    def __init__(self, forward: Forward) -> None:
        self.armed = False
        self.forward_made = forward

    def __getattribute__(self, name: str) -> Any:
        if object.__getattribute__(self, "armed"):
            raise AssertionError(f"a context-free processor read context.{name} while processing")
        return object.__getattribute__(self, name)

    def forward_of(self, node: Any) -> Forward:
        return self.forward_made

    current_node = None


def test_every_context_free_processor_has_a_case():
    assert _context_free_classes() == set(CASES)


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_a_context_free_processor_reads_nothing_of_the_context(cls: type) -> None:
    make, record = CASES[cls]
    delivered: list[Any] = []
    failed: list[tuple[Exception, Any]] = []
    fail = {"on": False}

    def child(out: Record) -> None:
        if fail["on"]:
            raise ValueError("child failed")
        delivered.append(out.value)

    def light_forward(out: Record, child_name: str | None = None) -> None:  # as the runtime makes it
        assert child_name is None
        try:
            child(out)
        except Exception as exc:
            failed.append((exc, out.value))

    context = _Context(light_forward)
    processor = make()
    processor.init(context)
    context.armed = True
    processor.process(record)
    assert len(delivered) == 1  # forwarded through the bound forward, the context untouched
    fail["on"] = True
    processor.process(record)
    assert len(failed) == 1 and isinstance(failed[0][0], ValueError)  # the edge's rule decides
