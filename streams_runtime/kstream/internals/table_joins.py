"""Table lookups for joins: KTable value getters, KStream-KTable / KStream-GlobalKTable join
processors, and KTable-KTable join processors (inner, left, outer) with their merger.

Owner: the DSL; wired by :mod:`join_builders`. Kafka Streams' semantics:

* A value getter reads a table's current ``ValueAndTimestamp`` for a key: a materialized table
  reads its store (a source table is forced to materialize); an unmaterialized filter or
  map_values computes from its parent's getter; a table-table join result joins its parents'.
* KStream-KTable join: each stream record looks the table up (``key_mapper(key, value)`` for a
  GlobalKTable); inner joins emit only on a match, left joins always; output timestamp = the
  stream record's. Table updates never trigger output. A null value (or a null mapped key)
  is dropped and counted; a left join forwards a null-key record as ``joiner(value, None)``.
* KTable-KTable join: an update of either side is joined with the other side's current value;
  output ``Change(new, old)`` at max(both timestamps); a delete on either side propagates as a
  tombstone (new = None) when the join result existed (inner) or as ``joiner(left, None)``
  (left/outer). Nothing is emitted when neither the update nor the other side has a value.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from streams_runtime.kstream.internals import table_processors as tp
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
    join_null_input,
    skip_null,
)
from streams_runtime.kstream.internals.table_processors import TableUpdatesSupplier, TupleForwarder
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.state.interfaces import TimestampedKeyValueStore
from streams_runtime.state.internals.versioned_store import VersionedKeyValueStore, VersionedRecord

log = logging.getLogger("streams_runtime.kstream")

UNKNOWN = -1


# ---------------------------------------------------------------------------- value getters
class StoreValueGetter:
    def __init__(self, store_name: str) -> None:
        self.store_name = store_name

    def init(self, context: ProcessorContext) -> None:
        store = context.get_state_store(self.store_name)
        self.store: TimestampedKeyValueStore[Any] | VersionedKeyValueStore = store
        self.versioned = bool(getattr(store, "versioned", False))
        self.versioned_store: VersionedKeyValueStore | None = store if self.versioned else None

    def get(self, key: object, as_of: int | None = None) -> ValueAndTimestamp | VersionedRecord | None:
        if as_of is not None and self.versioned_store is not None:
            return self.versioned_store.get(key, as_of)  # the version valid at ``as_of`` (KIP-914)
        return self.store.get(key)


class ValueGetter(Protocol):
    """A table's value getter, made per task by a :class:`ValueGetterSupplier`."""

    def init(self, context: ProcessorContext) -> None: ...

    def get(self, key: object, as_of: int | None = None) -> ValueAndTimestamp | None: ...


@dataclass(eq=False, repr=False)
class _DerivedGetter:
    parent: ValueGetter
    compute: Callable[[Any, ValueAndTimestamp], ValueAndTimestamp | None]

    def init(self, context: ProcessorContext) -> None:
        self.parent.init(context)

    @property
    def versioned(self) -> bool:
        return bool(getattr(self.parent, "versioned", False))

    def get(self, key: object, as_of: int | None = None) -> ValueAndTimestamp | None:
        found = self.parent.get(key) if as_of is None else self.parent.get(key, as_of)
        return None if found is None else self.compute(key, found)


class ValueGetterSupplier:
    """Makes a table's value getter per task; ``store_names`` are the stores it reads."""

    def __init__(self, make: Callable[[], Any], store_names: list[str]) -> None:
        self._make = make
        self.store_names = store_names

    def get(self) -> Any:
        return self._make()


def value_getter_supplier(table_supplier: object) -> ValueGetterSupplier:
    """The value getter of the KTable produced by ``table_supplier`` (see the module docstring)."""
    own: Callable[[], ValueGetterSupplier] | None = getattr(table_supplier, "value_getter_supplier", None)
    if callable(own):
        return own()
    if isinstance(table_supplier, tp.KTableSourceSupplier):
        table_supplier.materialize()
        name = table_supplier.store_name
        return ValueGetterSupplier(lambda: StoreValueGetter(name), [name])
    queryable = getattr(table_supplier, "queryable_name", None)
    if queryable is not None:
        return ValueGetterSupplier(lambda: StoreValueGetter(queryable), [queryable])
    if isinstance(table_supplier, tp.KTableFilterSupplier):
        parent = value_getter_supplier(table_supplier.parent)
        predicate, negate = table_supplier.predicate, table_supplier.filter_not

        def keep(key: object, vat: ValueAndTimestamp) -> ValueAndTimestamp | None:
            return vat if bool(predicate(key, vat.value)) is not negate else None

        return ValueGetterSupplier(lambda: _DerivedGetter(parent.get(), keep), parent.store_names)
    if isinstance(table_supplier, tp.KTableMapValuesSupplier):
        parent = value_getter_supplier(table_supplier.parent)
        mapper = table_supplier.mapper

        def mapped(key: object, vat: ValueAndTimestamp) -> ValueAndTimestamp | None:
            return ValueAndTimestamp.make(mapper(key, vat.value), vat.timestamp)

        return ValueGetterSupplier(lambda: _DerivedGetter(parent.get(), mapped), parent.store_names)
    raise TypeError(f"cannot look up values of a table produced by {type(table_supplier).__name__}")


class _LookupJoin(InternalProcessor):
    """A join processor that looks the other side up through ``getter_supplier``."""

    getter_supplier: ValueGetterSupplier

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.forward = context.forward
        self.getter = self.getter_supplier.get()
        self.getter.init(context)
        self.dropped = context.metrics.dropped_records(context.task_id)


# ---------------------------------------------------------------------------- stream-table
class KStreamKTableJoin(_LookupJoin):
    """Stream records look the table up; ``key_mapper`` maps to the table key (GlobalKTable)."""

    def __init__(
        self,
        getter: ValueGetterSupplier,
        joiner: Callable[[Any, Any, Any], Any],
        left: bool,
        key_mapper: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        self.getter_supplier = getter
        self.joiner = joiner
        self.left = left
        self.key_mapper = key_mapper

    def process(self, record: Record) -> None:
        key, value = record.key, record.value
        mapper = self.key_mapper
        table_key = key if mapper is None else mapper(key, value)
        if table_key is None or value is None:
            # a left join keeps a record without a table key (a null key, or one the global
            # table's key selector maps to null): joined with null, as in Kafka Streams
            join_null_input(self, record, table_key, self.left, "join key or value")
            return
        if getattr(self.getter, "versioned", False):
            found = self.getter.get(table_key, record.timestamp)
        else:
            found = self.getter.get(table_key)
        other = None if found is None else found.value
        if self.left or other is not None:
            self.forward(record.with_value(self.joiner(key, value, other)))


# ---------------------------------------------------------------------------- table-table
@dataclass(eq=False, repr=False)
class KTableKTableJoinSupplier:
    """One side of a table-table join; ``kind`` is the processing rule of this side:
    ``inner``, ``left`` (this side is the left of a left join), ``right`` (the right side of a
    left join) or ``outer``; ``parent`` is this side's table's supplier."""

    kind: str
    parent: TableUpdatesSupplier
    other_getter: ValueGetterSupplier
    joiner: Callable[[Any, Any, Any], Any]
    send_old_values: bool = field(default=False, init=False)
    queryable_name: None = field(default=None, init=False)

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        self.parent.enable_sending_old_values(True)
        self.send_old_values = True
        return True

    def __call__(self) -> Processor:
        return KTableKTableJoinProcessor(self)


class KTableKTableJoinProcessor(_LookupJoin):
    def __init__(self, supplier: KTableKTableJoinSupplier) -> None:
        self.kind = supplier.kind
        self.joiner = supplier.joiner
        self.send_old_values = supplier.send_old_values
        self.getter_supplier = supplier.other_getter

    def process(self, record: Record) -> None:
        key, change = record.key, record.value
        if key is None:
            skip_null(self.context, self.dropped, "key")
            return
        if not change.is_latest:  # an out-of-order update of a versioned table joins nothing
            log.info("Skipping out-of-order record from versioned table while performing table-table join.")
            self.dropped.record()  # counted, as in Kafka Streams (KIP-914)
            return
        found = self.getter.get(key)
        other = None if found is None else found.value
        kind, joiner = self.kind, self.joiner
        new_value = old_value = None
        if other is None and (
            kind in ("inner", "right") or (change.new_value is None and change.old_value is None)
        ):
            return
        if kind in ("inner", "left"):
            if change.new_value is not None:
                new_value = joiner(key, change.new_value, other)
            if self.send_old_values and change.old_value is not None:
                old_value = joiner(key, change.old_value, other)
        elif kind == "right":
            new_value = joiner(key, change.new_value, other)
            if self.send_old_values:
                old_value = joiner(key, change.old_value, other)
        else:  # outer
            if other is not None or change.new_value is not None:
                new_value = joiner(key, change.new_value, other)
            if self.send_old_values and (other is not None or change.old_value is not None):
                old_value = joiner(key, change.old_value, other)
        timestamp = record.timestamp if found is None else max(record.timestamp, found.timestamp)
        self.forward(Record(key, Change(new_value, old_value, change.is_latest), timestamp, record.headers))


def joined_value_getter(
    kind: str, left: ValueGetterSupplier, right: ValueGetterSupplier, joiner: Callable[[Any, Any, Any], Any]
) -> ValueGetterSupplier:
    """The value getter of a table-table join result (``kind``: inner, left or outer)."""

    class _JoinedGetter:
        def init(self, context: ProcessorContext) -> None:
            self.left, self.right = left.get(), right.get()
            self.left.init(context)
            self.right.init(context)

        def get(self, key: object) -> ValueAndTimestamp | None:
            lv = self.left.get(key)
            if lv is None and kind != "outer":
                return None
            rv = self.right.get(key)
            if rv is None and (kind == "inner" or lv is None):
                return None
            ts = max(UNKNOWN if lv is None else lv.timestamp, UNKNOWN if rv is None else rv.timestamp)
            return ValueAndTimestamp.make(
                joiner(key, None if lv is None else lv.value, None if rv is None else rv.value), ts
            )

    return ValueGetterSupplier(_JoinedGetter, list(dict.fromkeys(left.store_names + right.store_names)))


@dataclass(eq=False, repr=False)
class KTableKTableJoinMergerSupplier:
    """Merges both join sides into one KTable; materializes it when ``store_name`` is set;
    ``getter`` is the join's value getter when it is not."""

    left: KTableKTableJoinSupplier
    right: KTableKTableJoinSupplier
    store_name: str | None
    getter: ValueGetterSupplier
    send_old_values: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.queryable_name = self.store_name

    def value_getter_supplier(self) -> ValueGetterSupplier:
        if self.queryable_name is not None:
            name = self.queryable_name
            return ValueGetterSupplier(lambda: StoreValueGetter(name), [name])
        return self.getter

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        if self.queryable_name is None:
            self.left.enable_sending_old_values(force_materialization)
            self.right.enable_sending_old_values(force_materialization)
        self.send_old_values = True
        return True

    def __call__(self) -> Processor:
        return KTableKTableJoinMerger(self.queryable_name, self.send_old_values)


@dataclass(eq=False, repr=False)
class KTableKTableJoinMerger(InternalProcessor):
    store_name: str | None
    send_old_values: bool
    store: TimestampedKeyValueStore[Any] | None = field(default=None, init=False)

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        if self.store_name is not None:
            self.store = context.get_state_store(self.store_name)
            self.forwarder = TupleForwarder(self.store, context, self.send_old_values)

    def process(self, record: Record) -> None:
        change = record.value
        if self.store is None:
            if self.send_old_values:
                self.context.forward(record)
            else:
                self.context.forward(record.with_value(Change(change.new_value, None, change.is_latest)))
            return
        old = self.store.get(record.key)
        self.store.put(record.key, ValueAndTimestamp.make(change.new_value, record.timestamp))
        self.forwarder.maybe_forward(
            record.with_value(Change(change.new_value, None if old is None else old.value))
        )
