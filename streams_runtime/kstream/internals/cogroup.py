"""How a cogroup (KIP-150) is written into the DSL graph, as Kafka Streams' CogroupedStreamAggregateBuilder.

One aggregation over several grouped streams, each with its own aggregator, into ONE store:

* each grouped stream that needs a repartition gets its own repartition topic, named after its
  ``Grouped`` name or else the store (``<store>-repartition``); a grouped stream cogrouped again
  by the same CogroupedKStream re-uses its repartition node (the indexes are burned either way);
* one aggregate processor per input (``COGROUPKSTREAM-AGGREGATE-<n>``, or ``<name>-cogroup-agg-<i>``
  with ``name=``), all connected to the store, the first one adding it;
* one pass-through merge processor (``COGROUPKSTREAM-MERGE-<n>`` or ``<name>-cogroup-merge``) that
  every aggregate forwards to; the resulting KTable hangs from it and reads the store for lookups;
* the sources feeding the aggregates are co-partitioned.

Names are generated in Kafka's order: the store name first (when unnamed), then the repartition
nodes, the aggregate processors, the merge processor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals.graph import GraphNode, ProcessorGraphNode
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
)
from streams_runtime.kstream.internals.repartition import create_repartitioned_source
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode
from streams_runtime.kstream.internals.table_joins import StoreValueGetter, ValueGetterSupplier
from streams_runtime.processor.api import Processor, Record

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.builder import InternalStreamsBuilder

AGGREGATE_NAME = "COGROUPKSTREAM-AGGREGATE-"
MERGE_NAME = "COGROUPKSTREAM-MERGE-"


class CogroupPassThroughSupplier:
    """The merge node's supplier (Kafka's KTablePassThrough): forwards what the aggregates send and
    stands for the table towards downstream operators (old values, value lookups)."""

    def __init__(self, parents: list[Any], store_name: str, queryable_name: str | None) -> None:
        self.parents = parents
        self.store_name = store_name
        self.queryable_name = store_name
        self.user_queryable_name = queryable_name
        self.send_old_values = False
        windows = [getattr(p, "windows", None) for p in parents]
        self.windows = windows[0] if windows else None

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        for parent in self.parents:
            parent.enable_sending_old_values(force_materialization)
        self.send_old_values = True
        return True

    def value_getter_supplier(self) -> ValueGetterSupplier:
        name = self.store_name
        return ValueGetterSupplier(lambda: StoreValueGetter(name), [name])

    def __call__(self) -> Processor:
        return _PassThrough()


class _PassThrough(InternalProcessor):
    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.forward = context.forward

    def process(self, record: Record) -> None:
        self.forward(record)


class CogroupAggregateBuilder:
    """Per CogroupedKStream: the repartition node of each grouped stream, shared by its aggregations."""

    def __init__(self, internal: InternalStreamsBuilder) -> None:
        self.internal = internal
        self.parent_nodes: dict[int, GraphNode] = {}

    def _parents(self, patterns: list[tuple[Any, Callable[..., Any]]], store_name: str) -> list[GraphNode]:
        parents: list[GraphNode] = []
        for grouped, _ in patterns:
            key = id(grouped)
            if grouped.internals.repartition_required:
                prefix = (
                    grouped.internals.grouped_name
                    if grouped.internals.grouped_name is not None
                    else store_name
                )
                node = create_repartitioned_source(
                    self.internal, prefix, grouped.key_serde, grouped.value_serde
                )
                if key not in self.parent_nodes:
                    self.internal.add_graph_node(grouped.internals.node, node)
                    self.parent_nodes[key] = node
            else:
                self.parent_nodes[key] = grouped.internals.node
            parents.append(self.parent_nodes[key])
        return parents

    def build(
        self,
        patterns: list[tuple[Any, Callable[..., Any]]],
        name: str | None,
        store_name: str,
        queryable_name: str | None,
        make_supplier: Callable[[Callable[..., Any]], Any],
        store_factory: Callable[[Any], Any],
    ) -> tuple[GraphNode, CogroupPassThroughSupplier]:
        """Write the aggregate and merge nodes; returns the merge node and its supplier.

        ``make_supplier(aggregator)`` makes one input's processor supplier; ``store_factory(ctx)`` the
        store builder (called by every aggregate node; only the first adds the store).
        """
        internal = self.internal
        parents = self._parents(patterns, store_name)
        suppliers, nodes = [], []
        for index, ((_, aggregator), parent) in enumerate(zip(patterns, parents, strict=True)):
            node_name = internal.suffix_or_generate(name, f"-cogroup-agg-{index}", AGGREGATE_NAME)
            supplier = make_supplier(aggregator)
            node = StatefulProcessorNode(node_name, supplier, store_factories=(store_factory,))
            internal.add_graph_node(parent, node)
            suppliers.append(supplier)
            nodes.append(node)
        distinct = list({id(p): p for p in parents}.values())
        if len(distinct) > 1:
            nodes[0].copartition_inputs = distinct
        merge_name = internal.suffix_or_generate(name, "-cogroup-merge", MERGE_NAME)
        merge_supplier = CogroupPassThroughSupplier(suppliers, store_name, queryable_name)
        merge = ProcessorGraphNode(merge_name, merge_supplier)
        internal.add_graph_node([*nodes], merge)  # a list of GraphNode
        return merge, merge_supplier
