"""KGroupedStream and KGroupedTable: aggregations into KTables.

Naming and repartitioning follow Kafka Streams exactly. A grouped stream that needs a
repartition (a key change upstream, or ``group_by``) inserts ONE repartition topic named
``<Grouped name or store name>-repartition`` before each aggregation (re-used across
aggregations when the Grouped is named). A grouped table always repartitions (its key
changes) and sends Change(new, old) through the topic so the aggregation can subtract the
old value before adding the new.

Hooks: ``windowed_by`` (later issue) returns a windowed view built on the same repartition
logic (``_repartitioned_parent``) with a window store instead of a key-value store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.cogrouped import CogroupedKStream
from streams_runtime.kstream.internals import aggregate_processors as ap
from streams_runtime.kstream.internals.change import ChangeSerde
from streams_runtime.kstream.internals.dsl_types import DslGrouped, GroupedInternals
from streams_runtime.kstream.internals.functions import check_callable
from streams_runtime.kstream.internals.graph import GraphNode, ProcessorGraphNode, RepartitionNode
from streams_runtime.kstream.internals.repartition import (
    REPARTITION_TOPIC_SUFFIX,
    SINK_NAME,
    SOURCE_NAME,
    create_repartitioned_source,
)
from streams_runtime.kstream.ktable import KTable
from streams_runtime.kstream.options import Materialized
from streams_runtime.kstream.windowed_streams import windowed_by
from streams_runtime.serdes import Serdes

if TYPE_CHECKING:
    from streams_runtime.kstream.internals.build_context import MaterializedInternal
    from streams_runtime.serdes import Serde

KSTREAM_AGGREGATE_NAME = "KSTREAM-AGGREGATE-"
KSTREAM_REDUCE_NAME = "KSTREAM-REDUCE-"
KTABLE_AGGREGATE_NAME = "KTABLE-AGGREGATE-"
KTABLE_REDUCE_NAME = "KTABLE-REDUCE-"


def _count_init() -> int:
    return 0


class _Grouped(DslGrouped):
    """The aggregations' common steps of a grouped stream and a grouped table."""

    def _materialize(
        self, materialized: Materialized | None, prefix: str, value_serde: Serde | None
    ) -> MaterializedInternal:
        """The aggregation's store: ``materialized`` resolved, keyed by this grouping's key serde."""
        return self._internal.materialize(
            materialized, prefix, key_serde=self.key_serde, value_serde=value_serde
        )

    def _aggregation(
        self,
        parent: GraphNode,
        func_name: str,
        mat: MaterializedInternal,
        factory: Callable[[ap.AggregateSupplier], Any],
    ) -> KTable:
        """The aggregation's node under ``parent`` and the KTable of its results."""
        supplier = ap.AggregateSupplier(mat.store_name, factory)
        node = ProcessorGraphNode(func_name, supplier, materialized=mat)
        self._internal.add_graph_node(parent, node)
        return KTable(
            self._internal, node, mat.key_serde, mat.value_serde, supplier, mat.queryable_store_name
        )


class KGroupedStream(_Grouped):
    """A stream grouped by key (``group_by_key``/``group_by``): ``count``, ``reduce``,
    ``aggregate`` into a KTable, ``windowed_by`` for windowed aggregations, ``cogroup``."""

    @property
    def internals(self) -> GroupedInternals:
        """For the DSL's builders (not user code): builder, graph node, grouping, and the node an
        aggregation hangs from (a repartition, or upstream)."""
        return dataclasses.replace(super().internals, repartitioned_parent=self._repartitioned_parent)

    def _repartitioned_parent(self, store_name: str) -> GraphNode:
        """The node the aggregation hangs from: a (possibly shared) repartition node, or upstream."""
        if not self._repartition_required:
            return self._node
        prefix = self._grouped_name if self._grouped_name is not None else store_name
        node = create_repartitioned_source(self._internal, prefix, self.key_serde, self.value_serde)
        if self._repartition_node is None or self._grouped_name is None:
            self._repartition_node = node
        self._internal.add_graph_node(self._node, self._repartition_node)
        return self._repartition_node

    def _build(
        self,
        name: str | None,
        func_prefix: str,
        mat: MaterializedInternal,
        factory: Callable[[ap.AggregateSupplier], Any],
    ) -> KTable:
        func = self._internal.name_or_generate(name, func_prefix)
        return self._aggregation(self._repartitioned_parent(mat.store_name), func, mat, factory)

    def count(self, materialized: Materialized | None = None, *, name: str | None = None) -> KTable:
        """Count records per key (null keys/values skipped); Long values."""
        if materialized is not None and materialized.store_name is None:
            self._internal.new_store_name(KSTREAM_AGGREGATE_NAME)  # Kafka Streams burns one here
        mat = self._materialize(materialized, KSTREAM_AGGREGATE_NAME, Serdes.Long())
        return self._build(name, KSTREAM_AGGREGATE_NAME, mat, ap.KStreamCount)

    def reduce(
        self,
        reducer: Callable[[Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """Combine values per key: ``reducer(aggregate, value)``; the first value is the start."""
        check_callable(reducer, "reducer")
        mat = self._materialize(materialized, KSTREAM_REDUCE_NAME, self.value_serde)
        return self._build(name, KSTREAM_REDUCE_NAME, mat, lambda s: ap.KStreamReduce(s, reducer))

    def aggregate(
        self,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``aggregator(key, value, aggregate)`` starting from ``initializer()`` per key."""
        check_callable(initializer, "initializer")
        check_callable(aggregator, "aggregator")
        mat = self._materialize(materialized, KSTREAM_AGGREGATE_NAME, None)
        return self._build(
            name, KSTREAM_AGGREGATE_NAME, mat, lambda s: ap.KStreamAggregate(s, initializer, aggregator)
        )

    def windowed_by(self, windows: object) -> Any:
        """A windowed view (TimeWindows, SlidingWindows or SessionWindows); see windowed_streams."""
        return windowed_by(self, windows)

    # ------------------------------------------------------------------ cogroup (KIP-150)
    def cogroup(self, aggregator: Callable[[Any, Any, Any], Any]) -> CogroupedKStream:
        """Start a cogroup with this stream's ``aggregator(key, value, aggregate)``; see cogrouped."""
        check_callable(aggregator, "aggregator")
        return CogroupedKStream(self).cogroup(self, aggregator)


class KGroupedTable(_Grouped):
    """A table re-grouped by a new key (``KTable.group_by``): ``count``, ``reduce`` and
    ``aggregate`` with a subtractor, since an update moves a row from its old group to its new one."""

    def _build(
        self,
        name: str | None,
        func_prefix: str,
        mat: MaterializedInternal,
        factory: Callable[[ap.AggregateSupplier], Any],
    ) -> KTable:
        internal = self._internal
        sink = internal.suffix_or_generate(name, "-sink", SINK_NAME)
        source = internal.suffix_or_generate(name, "-source", SOURCE_NAME)
        func = internal.name_or_generate(name, func_prefix)
        topic = (
            self._grouped_name if self._grouped_name is not None else mat.store_name
        ) + REPARTITION_TOPIC_SUFFIX
        if self._repartition_node is None or self._grouped_name is None:
            self._repartition_node = RepartitionNode(
                source, sink, None, topic, self.key_serde, ChangeSerde(self.value_serde)
            )
        internal.add_graph_node(self._node, self._repartition_node)
        return self._aggregation(self._repartition_node, func, mat, factory)

    def count(self, materialized: Materialized | None = None, *, name: str | None = None) -> KTable:
        mat = self._materialize(materialized, KTABLE_AGGREGATE_NAME, Serdes.Long())
        return self._build(
            name,
            KTABLE_AGGREGATE_NAME,
            mat,
            lambda s: ap.KTableAggregate(
                s, _count_init, lambda k, v, agg: agg + 1, lambda k, v, agg: agg - 1
            ),
        )

    def reduce(
        self,
        adder: Callable[[Any, Any], Any],
        subtractor: Callable[[Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``adder(aggregate, new_value)``; ``subtractor(aggregate, old_value)`` runs first."""
        check_callable(adder, "adder")
        check_callable(subtractor, "subtractor")
        mat = self._materialize(materialized, KTABLE_AGGREGATE_NAME, self.value_serde)
        return self._build(name, KTABLE_REDUCE_NAME, mat, lambda s: ap.KTableReduce(s, adder, subtractor))

    def aggregate(
        self,
        initializer: Callable[[], Any],
        adder: Callable[[Any, Any, Any], Any],
        subtractor: Callable[[Any, Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``adder(key, new_value, agg)``; ``subtractor(key, old_value, agg)`` runs first."""
        check_callable(initializer, "initializer")
        check_callable(adder, "adder")
        check_callable(subtractor, "subtractor")
        mat = self._materialize(materialized, KTABLE_AGGREGATE_NAME, None)
        return self._build(
            name, KTABLE_AGGREGATE_NAME, mat, lambda s: ap.KTableAggregate(s, initializer, adder, subtractor)
        )
