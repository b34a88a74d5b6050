"""KTable processors: source, filter, map_values, to_stream, the group_by re-keying map, and the
TupleForwarder that emits a materialized KTable's updates.

Suppliers carry the topology-level flags (store name, whether old values are sent); processors
are made per task from them. ``enable_sending_old_values(force_materialization)`` propagates
upstream exactly as in Kafka Streams: a materialized node can always send old values (it reads
them from its store); an unmaterialized one can only if its parent can; a KTable source
materializes itself when forced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from streams_runtime.errors import StreamsError
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    InternalProcessorContext,
    ProcessorContext,
    flushed_timestamp,
    internal_context,
    node_forward,
    skip_null,
)
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.state.internals.versioned_store import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
)

log = logging.getLogger("streams_runtime.kstream")


class FlushForwarder:
    """What the record cache's flush of a materialized KTable's store forwards: each flushed
    update, under the node and record context it was written with (Kafka Streams' cache flush
    listener). ``cached``: the store has a cache (else the processor forwards directly)."""

    #: a session store's updates: plain aggregates, timestamped by the session's end
    session = False

    def __init__(self, store: object, context: InternalProcessorContext, send_old_values: bool) -> None:
        self.context = context
        self.node = context.current_node
        self.send_old_values = send_old_values
        listen = getattr(store, "set_flush_listener", None)
        self.cached = bool(listen(self._on_flush, send_old_values)) if callable(listen) else False

    def _on_flush(self, key: Any, new: Any, old: Any, timestamp: int) -> None:
        context = self.context
        previous = context.current_node
        context.set_current_node(self.node)
        try:
            rc = context.record_context()
            headers = rc.headers if rc is not None else ()
            if self.session:
                ts, new_value, old_value = key.window.end, new, old
            else:
                if new is not None:
                    ts, new_value = new.timestamp, new.value
                else:
                    ts, new_value = (timestamp if timestamp is not None else flushed_timestamp(rc)), None
                old_value = None if old is None else old.value
            change = Change(new_value, old_value if self.send_old_values else None)
            context.forward(Record(key, change, ts, headers))
        finally:
            context.set_current_node(previous)


class TupleForwarder(FlushForwarder):
    """Forwards a materialized KTable's updates: from the cache flush when the store is cached,
    directly otherwise (Kafka Streams' TimestampedTupleForwarder + cache flush listener)."""

    def __init__(self, store: object, context: InternalProcessorContext, send_old_values: bool) -> None:
        super().__init__(store, context, send_old_values)
        self.forward = node_forward(context)

    def maybe_forward(self, record: Record) -> None:
        if self.cached:
            return
        if self.send_old_values:
            self.forward(record)
        else:
            self.forward(record.with_value(Change(record.value.new_value, None, record.value.is_latest)))


@runtime_checkable
class TableUpdatesSupplier(Protocol):
    """What a KTable holds of the processor supplier producing its updates (this module's
    suppliers, and the aggregations' and cogroups' ones): asked to send old values too."""

    def enable_sending_old_values(self, force_materialization: bool) -> bool: ...


def parent_sends_old_values(parent: object, force_materialization: bool) -> bool:
    """Asks the upstream table's supplier ``parent`` (None upstream of a source) to send old values
    too; whether it does."""
    return isinstance(parent, TableUpdatesSupplier) and parent.enable_sending_old_values(
        force_materialization
    )


class KTableProcessorSupplier:
    """Base of KTable suppliers: a parent link for old-value propagation and a store name."""

    def __init__(self, parent: object, queryable_name: str | None) -> None:
        self.parent = parent  # the upstream KTable's supplier (or None)
        self.queryable_name = queryable_name
        self.send_old_values = False

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        if self.queryable_name is not None:
            self.send_old_values = True
            return True
        if parent_sends_old_values(self.parent, force_materialization):
            self.send_old_values = True
        return self.send_old_values


# ---------------------------------------------------------------------------- source
class KTableSourceSupplier(KTableProcessorSupplier):
    """Reads a topic as a table; materialized when named or when downstream needs old values."""

    versioned = False  # StreamsBuilder.table sets it when the table's store is versioned

    def __init__(self, store_name: str, queryable_name: str | None) -> None:
        super().__init__(None, queryable_name)
        self.store_name = store_name

    def materialized(self) -> bool:
        return self.queryable_name is not None

    def materialize(self) -> None:
        self.queryable_name = self.store_name

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        if not force_materialization and not self.materialized():
            return False
        self.send_old_values = True
        self.queryable_name = self.store_name
        return True

    def __call__(self) -> Processor:
        return KTableSourceProcessor(self)


class _MaterializingProcessor(InternalProcessor):
    """Shared init of KTable processors that may own a store (source, filter, map_values)."""

    def __init__(self, supplier: KTableProcessorSupplier) -> None:
        self.store_name = supplier.queryable_name
        self.send_old_values = supplier.send_old_values
        self.store: Any = None  # a timestamped (or versioned) key-value store, when materialized

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        if self.store_name is not None:
            self.store = context.get_state_store(self.store_name)
            self.forwarder = TupleForwarder(self.store, context, self.send_old_values)

    def emit(self, record: Record, new: Any, old: Any) -> None:
        if self.store is not None:
            self.store.put(record.key, ValueAndTimestamp.make(new, record.timestamp))
            self.forwarder.maybe_forward(record.with_value(Change(new, old)))
        else:
            self.context.forward(record.with_value(Change(new, old, record.value.is_latest)))

    def old_from_store(self, key: Any) -> Any:
        vat = self.store.get(key)
        return None if vat is None else vat.value


class KTableSourceProcessor(_MaterializingProcessor):
    def init(self, processor_context: ProcessorContext) -> None:
        super().init(processor_context)
        self.dropped = self.context.metrics.dropped_records(self.context.task_id)

    def process(self, record: Record) -> None:
        if record.key is None:
            skip_null(self.context, self.dropped, "key")
            return
        store = self.store
        if store is None:
            self.context.forward(record.with_value(Change(record.value, None)))
            return
        old = store.get(record.key)
        if old is not None and record.timestamp < old.timestamp:
            meta = self.context.record_metadata()
            if meta is not None:
                log.warning(
                    "Detected out-of-order KTable update for %s, old timestamp=[%s] new timestamp=[%s]. "
                    "topic=[%s] partition=[%s] offset=[%s].",
                    self.store_name,
                    old.timestamp,
                    record.timestamp,
                    meta.topic,
                    meta.partition,
                    meta.offset,
                )
            else:
                log.warning(
                    "Detected out-of-order KTable update for %s, old timestamp=[%s] new timestamp=[%s]. "
                    "Topic, partition and offset not known.",
                    self.store_name,
                    old.timestamp,
                    record.timestamp,
                )
        if getattr(store, "versioned", False):
            self._put_versioned(record, old)
            return
        store.put(record.key, ValueAndTimestamp.make(record.value, record.timestamp))
        self.forwarder.maybe_forward(
            record.with_value(Change(record.value, None if old is None else old.value))
        )

    def _put_versioned(self, record: Record, old: Any) -> None:
        """A versioned table: a put outside history retention is dropped; an out-of-order put
        (not the latest version) is forwarded with ``is_latest=False``, which joins ignore."""
        code = self.store.put(record.key, record.value, record.timestamp)
        if code == PUT_RETURN_CODE_NOT_PUT:
            return
        latest = code == PUT_RETURN_CODE_VALID_TO_UNDEFINED
        change = Change(record.value, None if old is None else old.value, latest)
        if self.send_old_values:
            self.context.forward(record.with_value(change))
        else:
            self.context.forward(record.with_value(Change(record.value, None, latest)))


# ---------------------------------------------------------------------------- filter / map_values
class KTableFilterSupplier(KTableProcessorSupplier):
    def __init__(
        self,
        parent: object,
        predicate: Callable[[Any, Any], bool],
        filter_not: bool,
        queryable_name: str | None,
    ) -> None:
        super().__init__(parent, queryable_name)
        self.predicate = predicate
        self.filter_not = filter_not
        # If upstream is already materialized, send old values to avoid needless tombstones.
        self.send_old_values = parent_sends_old_values(parent, False)

    def __call__(self) -> Processor:
        return KTableFilterProcessor(self)


class KTableFilterProcessor(_MaterializingProcessor):
    def __init__(self, supplier: KTableFilterSupplier) -> None:
        super().__init__(supplier)
        self.predicate = supplier.predicate
        self.filter_not = supplier.filter_not
        # a versioned source table forwards out-of-order updates: repeated tombstones are kept
        self.versioned_upstream = versioned_upstream(supplier.parent)

    def _compute(self, key: object, value: object) -> object:
        if value is not None and bool(self.predicate(key, value)) is not self.filter_not:
            return value
        return None

    def process(self, record: Record) -> None:
        change = record.value
        new = self._compute(record.key, change.new_value)
        old = None
        if self.send_old_values:
            old = (
                self.old_from_store(record.key)
                if self.store is not None
                else self._compute(record.key, change.old_value)
            )
            if old is None and new is None and not self.versioned_upstream:
                return  # nothing changed downstream
        self.emit(record, new, old)


class KTableMapValuesSupplier(KTableProcessorSupplier):
    def __init__(self, parent: object, mapper: Callable[[Any, Any], Any], queryable_name: str | None) -> None:
        super().__init__(parent, queryable_name)
        self.mapper = mapper

    def __call__(self) -> Processor:
        return KTableMapValuesProcessor(self)


class KTableMapValuesProcessor(_MaterializingProcessor):
    def __init__(self, supplier: KTableMapValuesSupplier) -> None:
        super().__init__(supplier)
        self.mapper = supplier.mapper

    def process(self, record: Record) -> None:
        change = record.value
        new = None if change.new_value is None else self.mapper(record.key, change.new_value)
        old = None
        if self.send_old_values:
            if self.store is not None:
                old = self.old_from_store(record.key)
            elif change.old_value is not None:
                old = self.mapper(record.key, change.old_value)
        self.emit(record, new, old)


# ---------------------------------------------------------------------------- to_stream / group_by
class KTableToStream(InternalProcessor):
    context_free = True

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.forward = node_forward(context)

    def process(self, record: Record) -> None:
        if type(record) is Record:  # the copy with_value makes, without its call
            out = Record(record.key, record.value.new_value, record.timestamp, record.headers)
        else:
            out = record.with_value(record.value.new_value)
        self.forward(out)


def versioned_upstream(supplier: object) -> bool:
    """Whether the table ``supplier`` makes has versioned semantics: the nearest table upstream
    that has a store of its own (the source, or a materialized operation) keeps it versioned;
    operations without a store pass their parent's on, as Kafka Streams decides when it builds
    the topology."""
    node = supplier
    while node is not None:
        if getattr(node, "versioned", False):
            return True
        if getattr(node, "queryable_name", None) is not None:
            return False
        node = getattr(node, "parent", None)
    return False


class KTableRepartitionMapSupplier(KTableProcessorSupplier):
    """group_by's re-keying: needs old values from its parent (forces materialization). Of a
    versioned table it drops out-of-order updates (not the latest version of their key), as Kafka
    Streams does: an aggregation sees each key's latest value only."""

    def __init__(self, parent: object, selector: Callable[[Any, Any], Any]) -> None:
        super().__init__(parent, None)
        self.selector = selector

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        raise StreamsError("KTableRepartitionMap should always require sending old values")

    def __call__(self) -> Processor:
        return KTableRepartitionMap(self.selector, versioned_upstream(self.parent))


class KTableRepartitionMap(InternalProcessor):
    """Emits the old pair (as a subtraction) and the new pair (as an addition), old first; one
    combined Change when both map to the same key. Of a ``versioned`` table, an out-of-order
    update is dropped."""

    def __init__(self, selector: Callable[[Any, Any], Any], versioned: bool = False) -> None:
        self.selector = selector
        self.versioned = versioned

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.forward = node_forward(context)

    def process(self, record: Record) -> None:
        if record.key is None:
            raise StreamsError("record key for the grouping KTable should not be null")
        change = record.value
        if self.versioned and not change.is_latest:
            return  # an older version of its key: the aggregate holds the latest one
        # the selector's (key, value) pairs
        new_pair: Any = None if change.new_value is None else self.selector(record.key, change.new_value)
        old_pair: Any = None if change.old_value is None else self.selector(record.key, change.old_value)
        old_ok = old_pair is not None and old_pair[0] is not None and old_pair[1] is not None
        new_ok = new_pair is not None and new_pair[0] is not None and new_pair[1] is not None
        ts, headers = record.timestamp, record.headers
        if old_ok and new_ok and old_pair[0] == new_pair[0]:
            self.forward(Record(old_pair[0], Change(new_pair[1], old_pair[1], change.is_latest), ts, headers))
            return
        if old_ok:
            self.forward(Record(old_pair[0], Change(None, old_pair[1], change.is_latest), ts, headers))
        if new_ok:
            self.forward(Record(new_pair[0], Change(new_pair[1], None, change.is_latest), ts, headers))
