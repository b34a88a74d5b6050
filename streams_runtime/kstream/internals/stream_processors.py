"""Stateless KStream processors: filter, map, map_values, flat_map, flat_map_values, peek,
foreach, the split (branch) router and pass-through nodes.

User functions are already adapted to ``(key, value)`` (see functions.with_key). Each
processor binds its node's forward in ``init`` (``node_forward``: made once per node, with the
edge's error rule in it), so ``process`` is one call and one forward.
The ones whose ``process`` uses nothing of the context but that bound forward say so with
``context_free`` (see :class:`InternalProcessor`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from streams_runtime.kstream.internals.functions import value_only
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
    node_forward,
)
from streams_runtime.processor.api import FixedKeyRecord, Record
from streams_runtime.processor.fixed_key import FixedKeyProcessorContext


class _Forwarding(InternalProcessor):
    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.forward = node_forward(context)


class _Mapping(_Forwarding):
    """A processor of the user's ``mapper(key, value)``."""

    def __init__(self, mapper: Callable[[Any, Any], Any]) -> None:
        self.mapper = mapper


class PassThrough(_Forwarding):
    def process(self, record: Record) -> None:
        self.forward(record)


class KStreamFilter(_Forwarding):
    context_free = True

    def __init__(self, predicate: Callable[[Any, Any], bool], filter_not: bool) -> None:
        self.predicate = predicate
        self.filter_not = filter_not

    def process(self, record: Record) -> None:
        if bool(self.predicate(record.key, record.value)) is not self.filter_not:
            self.forward(record)


class KStreamMap(_Mapping):
    context_free = True

    def process(self, record: Record) -> None:
        result = self.mapper(record.key, record.value)
        if result is None:
            raise TypeError("the map() mapper returned None; it must return a (key, value) pair")
        key, value = result
        out = Record(key, value, record.timestamp, record.headers)
        self.forward(out)


class KStreamMapValues(_Mapping):
    context_free = True

    def __init__(self, mapper: Callable[[Any, Any], Any]) -> None:
        super().__init__(mapper)
        self.value_mapper = value_only(mapper)  # a value-only user function, called directly

    def process(self, record: Record) -> None:
        value_mapper = self.value_mapper
        if value_mapper is not None:
            value = value_mapper(record.value)
        else:
            value = self.mapper(record.key, record.value)
        if type(record) is Record:  # the copy with_value makes, without its call
            out = Record(record.key, value, record.timestamp, record.headers)
        else:
            out = record.with_value(value)
        self.forward(out)


class KStreamSelectKey(_Forwarding):
    context_free = True

    def __init__(self, selector: Callable[[Any, Any], Any]) -> None:
        self.selector = selector

    def process(self, record: Record) -> None:
        out = Record(self.selector(record.key, record.value), record.value, record.timestamp, record.headers)
        self.forward(out)


class KStreamFlatMap(_Mapping):
    context_free = True

    def process(self, record: Record) -> None:
        pairs = self.mapper(record.key, record.value)
        if pairs is None:
            raise TypeError("the flat_map() mapper returned None; it must return an iterable of (key, value)")
        ts, headers, forward = record.timestamp, record.headers, self.forward
        for key, value in pairs:
            out = Record(key, value, ts, headers)
            forward(out)


class KStreamFlatMapValues(_Mapping):
    context_free = True

    def process(self, record: Record) -> None:
        values = self.mapper(record.key, record.value)
        if values is None:
            raise TypeError("the flat_map_values() mapper returned None; it must return an iterable")
        key, ts, headers, forward = record.key, record.timestamp, record.headers, self.forward
        for value in values:
            out = Record(key, value, ts, headers)
            forward(out)


class KStreamPeek(_Forwarding):
    """peek (forwards) and foreach (terminal: forwards nothing)."""

    context_free = True

    def __init__(self, action: Callable[[Any, Any], None], forward: bool) -> None:
        self.action = action
        self.forward_downstream = forward

    def process(self, record: Record) -> None:
        self.action(record.key, record.value)
        if self.forward_downstream:
            self.forward(record)


class KStreamBranch(_Forwarding):
    """Routes each record to the first branch whose predicate matches, else the default branch.

    ``predicates`` and ``child_names`` are shared lists filled as branches are declared; a
    default branch exists when there is one more child than predicates. Unmatched records with
    no default branch are dropped (by design of split, not an error).
    """

    def __init__(self, predicates: list[Callable[[Any, Any], bool]], child_names: list[str]) -> None:
        self.predicates = predicates
        self.child_names = child_names

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        for i, predicate in enumerate(self.predicates):
            if predicate(key, value):
                self.forward(record, self.child_names[i])
                return
        if len(self.child_names) > len(self.predicates):
            self.forward(record, self.child_names[-1])


class FixedKeyProcessing(Protocol):
    """The user's processor of ``process_values``: a FixedKeyProcessor, or any object with its
    ``process`` (``init`` and ``close`` are optional)."""

    def process(self, record: FixedKeyRecord) -> None: ...


class FixedKeyProcessorAdapter(InternalProcessor):
    """Runs a user processor for ``process_values``: it gets FixedKeyRecords (key unchangeable)."""

    def __init__(self, inner: FixedKeyProcessing) -> None:
        self.inner = inner

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        init = getattr(self.inner, "init", None)
        if init is not None:
            init(FixedKeyProcessorContext(context))

    def process(self, record: Record) -> None:
        self.inner.process(FixedKeyRecord(record.key, record.value, record.timestamp, record.headers))

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
