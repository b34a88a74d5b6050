"""Aggregation processors: KGroupedStream count/reduce/aggregate and KGroupedTable
count/reduce/aggregate (adder and subtractor).

Rules (Kafka Streams'):
- stream aggregations skip records with a null key or a null value (logged, counted);
- the output timestamp is the max of the record's and the previous aggregate's timestamp;
- table aggregations first apply the subtractor to the old value, then the adder to the new
  one; a missing aggregate is initialized before adding; a null key is an error;
- updates go through the store's TupleForwarder (cache flush or direct), with the old
  aggregate when old values are requested. A stream aggregate's "old" value is the initializer
  result when there was no aggregate yet, as in Kafka Streams.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NoReturn, Self

from streams_runtime.errors import StreamsError
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
    skip_null,
)
from streams_runtime.kstream.internals.table_processors import TupleForwarder
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp

log = logging.getLogger("streams_runtime.kstream")


class AggregateSupplier:
    """A stateful KTable-producing supplier: always materialized, so old values are free."""

    def __init__(self, store_name: str, factory: Callable[[Self], Processor]) -> None:
        self.store_name = store_name
        self.queryable_name = store_name
        self.send_old_values = False
        self._factory: Callable[[Self], Processor] = factory

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        self.send_old_values = True
        return True

    def __call__(self: Self) -> Processor:
        return self._factory(self)


class _AggregateProcessor(InternalProcessor):
    def __init__(self, supplier: AggregateSupplier) -> None:
        self.store_name = supplier.store_name
        self.send_old_values = supplier.send_old_values

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.store = context.get_state_store(self.store_name)
        self.forwarder = TupleForwarder(self.store, context, self.send_old_values)
        self.cached = self.forwarder.cached
        self.forward = self.forwarder.forward
        self.dropped = context.metrics.dropped_records(context.task_id)

    def skip(self, record: Record) -> bool:
        if record.key is None or record.value is None:
            skip_null(self.context, self.dropped, "key or value")
            return True
        return False

    def put_and_forward(self, record: Record, new_agg: object, old_agg: object, timestamp: int) -> None:
        self.store.put(record.key, None if new_agg is None else ValueAndTimestamp(new_agg, timestamp))
        if self.cached:
            # The cache flush forwards (TupleForwarder.maybe_forward would drop the record).
            return
        # what TupleForwarder.maybe_forward sends, built once
        self.forward(
            Record(
                record.key,
                Change(new_agg, old_agg if self.send_old_values else None),
                timestamp,
                record.headers,
            )
        )


class KStreamAggregate(_AggregateProcessor):
    #: ``count()`` (:class:`KStreamCount`): ``agg + 1`` inline, no call of the aggregator per record
    _counts = False

    def __init__(
        self,
        supplier: AggregateSupplier,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
    ) -> None:
        super().__init__(supplier)
        self.initializer = initializer
        self.aggregator = aggregator

    def process(self, record: Record) -> None:
        key = record.key
        value = record.value
        if (key is None or value is None) and self.skip(record):
            return
        store = self.store
        old = store.get(key)
        timestamp = record.timestamp
        if old is None:
            old_agg = self.initializer()
        else:
            old_agg = old.value
            if old.timestamp > timestamp:
                timestamp = old.timestamp
        new_agg = old_agg + 1 if self._counts else self.aggregator(key, value, old_agg)
        # put_and_forward, inlined (the hot path of every stream aggregation)
        store.put(key, None if new_agg is None else ValueAndTimestamp(new_agg, timestamp))
        if self.cached:
            return
        out = Record(
            key, Change(new_agg, old_agg if self.send_old_values else None), timestamp, record.headers
        )
        self.forward(out)


class KStreamCount(KStreamAggregate):
    """``count()``: KStreamAggregate with the initializer ``0`` and the aggregator ``agg + 1``
    applied inline (no call of the aggregator per record)."""

    _counts = True

    def __init__(self, supplier: AggregateSupplier) -> None:
        super().__init__(supplier, _zero, _plus_one)


def _zero() -> int:
    return 0


def _plus_one(key: object, value: object, count: int) -> int:
    return count + 1


class KStreamReduce(_AggregateProcessor):
    def __init__(self, supplier: AggregateSupplier, reducer: Callable[[Any, Any], Any]) -> None:
        super().__init__(supplier)
        self.reducer = reducer

    def process(self, record: Record) -> None:
        if self.skip(record):
            return
        old = self.store.get(record.key)
        if old is None:
            self.put_and_forward(record, record.value, None, record.timestamp)
        else:
            self.put_and_forward(
                record, self.reducer(old.value, record.value), old.value, max(record.timestamp, old.timestamp)
            )


class KTableAggregate(_AggregateProcessor):
    #: ``reduce()`` (:class:`KTableReduce`): no initializer (the first value is the aggregate)
    #: and the adder and subtractor take ``(agg, value)``
    _reduces = False

    def __init__(
        self,
        supplier: AggregateSupplier,
        initializer: Callable[[], Any],
        adder: Callable[..., Any],
        subtractor: Callable[..., Any],
    ) -> None:
        super().__init__(supplier)
        self.initializer = initializer
        self.adder = adder
        self.subtractor = subtractor

    def process(self, record: Record) -> None:
        key = record.key
        if key is None:
            operator = "reduce" if self._reduces else "aggregate"
            raise StreamsError(
                f"record key for KTable {operator} operator with state {self.store_name} should not be null"
            )
        change = record.value
        old = self.store.get(key)
        old_agg = None if old is None else old.value
        timestamp = record.timestamp
        # Step 1: remove the old value
        if change.old_value is not None and old_agg is not None:
            if self._reduces:
                agg = self.subtractor(old_agg, change.old_value)
            else:
                agg = self.subtractor(key, change.old_value, old_agg)
            timestamp = max(record.timestamp, old.timestamp)
        else:
            agg = old_agg
        # Step 2: add the new value (an aggregate only comes from a stored one: ``old`` is set)
        if change.new_value is not None:
            if not self._reduces:
                agg = self.adder(key, change.new_value, self.initializer() if agg is None else agg)
            elif agg is None:
                agg = change.new_value
            else:
                agg = self.adder(agg, change.new_value)
            if old is not None:
                timestamp = max(record.timestamp, old.timestamp)
        self.put_and_forward(record, agg, old_agg, timestamp)


class KTableReduce(KTableAggregate):
    """``reduce(adder, subtractor)``: :class:`KTableAggregate` without an initializer."""

    _reduces = True

    def __init__(
        self,
        supplier: AggregateSupplier,
        adder: Callable[[Any, Any], Any],
        subtractor: Callable[[Any, Any], Any],
    ) -> None:
        super().__init__(supplier, _no_initializer, adder, subtractor)


def _no_initializer() -> NoReturn:
    raise AssertionError("a reduce has no initializer")
