"""KTableSuppressProcessor: ``KTable.suppress(...)`` over the changelogged time-ordered buffer.

Owner: the DSL; one processor and one buffer (``InMemoryTimeOrderedKeyValueBuffer``,
state side) per task. Kafka Streams' algorithm, per update:

  1. stream time = max(stream time, record timestamp);
  2. buffer the update under its buffer time: the window end of a windowed key (final
     results) or the record timestamp (time limit); a key keeps only its latest update;
  3. evict, oldest first, every entry whose buffer time <= stream time - wait (wait = the
     upstream windows' grace for final results, ``time_to_wait_ms`` otherwise);
  4. if the buffer is over its bounds: emit the oldest entries early (``emit_early_when_full``)
     or fail the task (``shut_down_when_full`` / final results).

Evicted entries are forwarded with their original record context (timestamp, headers). Final
results never forward tombstones (a window that was deleted was never emitted). The buffer
writes its changelog at commit, so a restarted task resumes with the same pending updates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError, TopologyError
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.dsl_types import T
from streams_runtime.kstream.internals.graph import GraphNode, walk_upstream
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    RecordContext,
    current_node_name,
    internal_context,
)
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode
from streams_runtime.kstream.internals.table_joins import ValueGetterSupplier, value_getter_supplier
from streams_runtime.kstream.internals.table_processors import TableUpdatesSupplier
from streams_runtime.kstream.internals.window_aggregate import AggregationWindows, WindowAggregateSupplier
from streams_runtime.kstream.suppressed import SHUT_DOWN, Suppressed
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.state.internals.time_ordered_buffer import (
    Eviction,
    InMemoryTimeOrderedKeyValueBuffer,
    TimeOrderedKeyValueBufferBuilder,
)
from streams_runtime.windowed import SessionWindowedSerde, TimeWindowedSerde

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext

SUPPRESS_NAME = "KTABLE-SUPPRESS-"
NO_TIMESTAMP = -1


@dataclass(eq=False, repr=False)
class KTableSuppressSupplier:
    """A KTable supplier: suppression is transparent to old values (they pass through)."""

    suppressed: Suppressed
    wait_ms: int
    store_name: str
    parent: TableUpdatesSupplier
    queryable_name: None = field(default=None, init=False)
    send_old_values: bool = field(default=False, init=False)

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        self.send_old_values = self.parent.enable_sending_old_values(force_materialization)
        return self.send_old_values

    def value_getter_supplier(self) -> ValueGetterSupplier:
        """What a join sees of the suppressed table: the value downstream last saw (the buffered
        key's prior value), else the upstream table's value. The timestamp is the upstream
        value's (the buffer does not expose the prior value's own timestamp)."""
        parent = value_getter_supplier(self.parent)
        store_name = self.store_name

        class _SuppressedGetter:
            def init(self, context: ProcessorContext) -> None:
                self.buffer = context.get_state_store(store_name)
                self.parent = parent.get()
                self.parent.init(context)

            def get(self, key: object) -> Any:
                buffered, prior = self.buffer.prior_value_for_buffered(key)
                upstream = self.parent.get(key)
                if not buffered:
                    return upstream
                if prior is None:
                    return None
                return ValueAndTimestamp.make(prior, NO_TIMESTAMP if upstream is None else upstream.timestamp)

        return ValueGetterSupplier(_SuppressedGetter, [store_name, *parent.store_names])

    def __call__(self) -> Processor:
        return KTableSuppressProcessor(self)


class KTableSuppressProcessor(InternalProcessor):
    def __init__(self, supplier: KTableSuppressSupplier) -> None:
        s = supplier.suppressed
        self.store_name = supplier.store_name
        self.final_results = s.final_results
        self.wait_ms = supplier.wait_ms
        self.max_records = s.buffer_config.max_records_
        self.max_bytes = s.buffer_config.max_bytes_
        self.shut_down = s.buffer_config.full_strategy == SHUT_DOWN
        self.send_old_values = supplier.send_old_values
        self.observed_stream_time = NO_TIMESTAMP

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.buffer: InMemoryTimeOrderedKeyValueBuffer = context.get_state_store(self.store_name)
        key_serde = self.buffer.key_serde
        if isinstance(key_serde, (TimeWindowedSerde, SessionWindowedSerde)) and key_serde.inner is None:
            key_serde.inner = context.app_configs.default_serde("key")
        self.emitted = context.metrics.sensor(
            "suppression-emit",
            "stream-processor-node-metrics",
            {"task-id": str(context.task_id), "processor-node-id": current_node_name(context)},
        )

    def process(self, record: Record) -> None:
        if record.timestamp > self.observed_stream_time:
            self.observed_stream_time = record.timestamp
        key = record.key
        buffer_time = key.window.end if self.final_results else record.timestamp
        self.buffer.put(buffer_time, key, record.value, self.context.record_context())
        self._enforce_constraints()

    def _over_capacity(self) -> bool:
        return self.buffer.num_records() > self.max_records or self.buffer.buffer_size() > self.max_bytes

    def _enforce_constraints(self) -> None:
        expiry = self.observed_stream_time - self.wait_ms
        buffer = self.buffer
        buffer.evict_while(lambda: buffer.min_timestamp() <= expiry, self._emit)
        if self._over_capacity():
            if self.shut_down:
                raise StreamsError(
                    f"{self.store_name} buffer exceeded its max capacity. Currently "
                    f"[{buffer.num_records()}/{self.max_records}] records and "
                    f"[{buffer.buffer_size()}/{self.max_bytes}] bytes."
                )
            buffer.evict_while(self._over_capacity, self._emit)

    def _emit(self, eviction: Eviction) -> None:
        if eviction.new_value is None and self.final_results:
            return
        context = self.context
        rc = eviction.record_context
        headers = tuple(rc.headers)
        previous = context.record_context()
        context.set_record_context(RecordContext(rc.topic, rc.partition, rc.offset, rc.timestamp, headers))
        try:
            old = eviction.old_value if self.send_old_values else None
            context.forward(Record(eviction.key, Change(eviction.new_value, old), rc.timestamp, headers))
            self.emitted.record()
        finally:
            context.set_record_context(previous)


def _windows_upstream(node: GraphNode) -> AggregationWindows | None:
    for current in walk_upstream(node, lambda n: False):
        supplier = getattr(current, "supplier", None)
        if isinstance(supplier, WindowAggregateSupplier):
            windows: AggregationWindows | None = supplier.windows
            return windows
    return None


def suppress(table: T, suppressed: Suppressed) -> T:
    """Add the suppress node after ``table``; returns the suppressed KTable."""
    if not isinstance(suppressed, Suppressed):
        raise TypeError(f"suppress takes a Suppressed, got {suppressed!r}")
    internal = table.internals.builder
    key_serde = table.key_serde
    if suppressed.final_results:
        windows = _windows_upstream(table.internals.node)
        if windows is None:
            raise TopologyError(
                "Suppressed.until_window_closes is only valid after a windowed aggregation "
                f"(no windowed aggregation upstream of {table.name})"
            )
        # Kafka Streams: a session can still grow for its inactivity gap, so it closes gap + grace later
        wait = windows.grace_ms + getattr(windows, "inactivity_gap_ms", 0)
        if key_serde is None:
            size = getattr(windows, "size_ms", None) or getattr(windows, "time_difference_ms", None)
            key_serde = SessionWindowedSerde(None) if size is None else TimeWindowedSerde(None, max(size, 1))
    else:
        wait = suppressed.time_to_wait_ms
    name = suppressed.name if suppressed.name is not None else internal.new_processor_name(SUPPRESS_NAME)
    store_name = (
        suppressed.name + "-store" if suppressed.name is not None else internal.new_store_name(SUPPRESS_NAME)
    )
    supplier = KTableSuppressSupplier(suppressed, wait, store_name, table.internals.supplier)
    # as in Kafka Streams, the suppressed table sends old values: the buffer keeps (and sizes)
    # each key's prior value
    table.enable_sending_old_values(True)

    def buffer_builder(ctx: BuildContext) -> TimeOrderedKeyValueBufferBuilder:
        builder = TimeOrderedKeyValueBufferBuilder(store_name, key_serde, table.value_serde)
        if suppressed.logging_enabled:
            return builder.with_logging_enabled(suppressed.logging_config or {})
        return builder.with_logging_disabled()

    node = StatefulProcessorNode(name, supplier, store_factories=(buffer_builder,))
    internal.add_graph_node(table.internals.node, node)
    return type(table)(internal, node, table.key_serde, table.value_serde, supplier, None)
