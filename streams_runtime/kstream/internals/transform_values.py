"""KTable.transform_values: a stateful value transformer over a table (Kafka Streams' KTableTransformValues).

A transformer (what the supplier returns, one per task) has ``transform(key, value) -> new value``
and optional ``init(context)`` / ``close()``; it may read the stores it was connected to through
``context.get_state_store`` (``store_names`` of ``transform_values``, or the stores its supplier
provides from ``stores()``). It sees deletes too (``value`` None) and decides what they become.

* Materialized (a queryable store): the new value is stored with the record's timestamp and
  forwarded through the store (cache flush or directly); the old value, when asked for, is the
  stored one, so a stateful transformer is not called twice.
* Not materialized: the old value, when asked for, is the transformer applied to the old value.
* Lookups (joins): the store when materialized, else the parent's value through a transformer of
  its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
)
from streams_runtime.kstream.internals.table_joins import (
    StoreValueGetter,
    ValueGetterSupplier,
    value_getter_supplier,
)
from streams_runtime.kstream.internals.table_processors import KTableProcessorSupplier, TupleForwarder
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp

TRANSFORMVALUES_NAME = "KTABLE-TRANSFORMVALUES-"


@runtime_checkable
class ValueTransformer(Protocol):
    """What a ``transform_values`` supplier returns (``init(context)``/``close()`` optional)."""

    def transform(self, key: Any, value: Any) -> object: ...


class _ValueGetter(Protocol):
    """The parent table's value getter a transforming getter reads through."""

    def init(self, context: ProcessorContext) -> None: ...

    def get(self, key: object) -> ValueAndTimestamp | None: ...


def _make_transformer(supplier: Callable[[], object]) -> ValueTransformer:
    transformer = supplier()
    if not isinstance(transformer, ValueTransformer) or not callable(transformer.transform):
        raise TypeError(
            f"the transform_values supplier must return a new transformer with transform(key, value); "
            f"got {transformer!r}"
        )
    return transformer


class KTableTransformValuesSupplier(KTableProcessorSupplier):
    def __init__(
        self, parent: object, transformer_supplier: Callable[[], Any], queryable_name: str | None
    ) -> None:
        super().__init__(parent, queryable_name)
        self.transformer_supplier = transformer_supplier
        provided = getattr(transformer_supplier, "stores", None)
        if callable(provided) and not isinstance(transformer_supplier, type):
            self.stores = provided

    def value_getter_supplier(self) -> ValueGetterSupplier:
        if self.queryable_name is not None:
            name = self.queryable_name
            return ValueGetterSupplier(lambda: StoreValueGetter(name), [name])
        parent = value_getter_supplier(self.parent)
        make = self.transformer_supplier
        return ValueGetterSupplier(lambda: _TransformingGetter(parent.get(), make), parent.store_names)

    def __call__(self) -> Processor:
        return KTableTransformValuesProcessor(self)


class KTableTransformValuesProcessor(InternalProcessor):
    def __init__(self, supplier: KTableTransformValuesSupplier) -> None:
        self.transformer = _make_transformer(supplier.transformer_supplier)
        self.store_name = supplier.queryable_name
        self.send_old_values = supplier.send_old_values
        self.store = None

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        init = getattr(self.transformer, "init", None)
        if callable(init):
            init(context)
        if self.store_name is not None:
            self.store = context.get_state_store(self.store_name)
            self.forwarder = TupleForwarder(self.store, context, self.send_old_values)

    def process(self, record: Record) -> None:
        change = record.value
        new = self.transformer.transform(record.key, change.new_value)
        if self.store is None:
            old = self.transformer.transform(record.key, change.old_value) if self.send_old_values else None
            self.context.forward(record.with_value(Change(new, old, change.is_latest)))
            return
        previous = self.store.get(record.key) if self.send_old_values else None
        old = None if previous is None else previous.value
        self.store.put(record.key, ValueAndTimestamp.make(new, record.timestamp))
        self.forwarder.maybe_forward(record.with_value(Change(new, old)))

    def close(self) -> None:
        close = getattr(self.transformer, "close", None)
        if callable(close):
            close()


class _TransformingGetter:
    def __init__(self, parent: _ValueGetter, make: Callable[[], object]) -> None:
        self.parent = parent
        self.transformer = _make_transformer(make)

    def init(self, context: ProcessorContext) -> None:
        self.parent.init(context)
        init = getattr(self.transformer, "init", None)
        if callable(init):
            init(context)

    def get(self, key: object) -> ValueAndTimestamp | None:
        found = self.parent.get(key)
        if found is None:
            return None
        return ValueAndTimestamp.make(self.transformer.transform(key, found.value), found.timestamp)
