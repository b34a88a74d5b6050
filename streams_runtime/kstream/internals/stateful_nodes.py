"""StatefulProcessorNode: a processor graph node that owns stores built at topology-build time.

Owner: the DSL (windowed aggregations, joins, suppress). Like ProcessorGraphNode, but
its stores come from factories ``factory(ctx) -> StoreBuilder`` called when the node is
written (so they see the build config, e.g. ``default_dsl_store``), and it can connect stores
owned by other nodes (``store_names``: a join reading a table's store). ``copartition_sources``
lists graph nodes whose source topics must be co-partitioned (join inputs); the builder
resolves them to source node names when writing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals.graph import (
    GraphNode,
    ProcessorGraphNode,
    RepartitionNode,
    StreamSourceNode,
    TableSourceNode,
    walk_upstream,
)
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext


class StatefulProcessorNode(ProcessorGraphNode):
    """See the module docstring."""

    def __init__(
        self,
        name: str,
        supplier: Callable[[], Any],
        *,
        store_factories: tuple[Callable[[Any], Any], ...] = (),
        store_names: tuple[str, ...] | Callable[[], tuple[str, ...]] = (),
    ) -> None:
        super().__init__(name, supplier)
        self.store_factories = tuple(store_factories)
        self.lazy_store_names = store_names
        self.copartition_inputs: list[GraphNode] = []

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_processor(self.name, self.supplier, self.parent_names(), fixed_key=self.fixed_key)
        for factory in self.store_factories:
            store_builder = factory(ctx)
            if store_builder.name in builder.stores:
                builder.connect_processor_and_state_stores(self.name, [store_builder.name])
            else:
                builder.add_state_store(store_builder, [self.name])
        names = self.lazy_store_names() if callable(self.lazy_store_names) else self.lazy_store_names
        if names:
            builder.connect_processor_and_state_stores(self.name, list(names))
        if self.copartition_inputs:
            sources: list[str] = []
            for node in self.copartition_inputs:
                for source in source_node_names(node):
                    if source not in sources:
                        sources.append(source)
            if len(sources) > 1 and sources not in builder.copartition_groups:
                builder.copartition_sources(sources)


def source_node_names(node: GraphNode) -> list[str]:
    """The (non-global) source processors feeding ``node`` within its sub-topology."""
    found: list[str] = []
    for current in walk_upstream(
        node, lambda n: isinstance(n, RepartitionNode | StreamSourceNode | TableSourceNode)
    ):
        if isinstance(current, RepartitionNode | StreamSourceNode):
            found.append(current.name)
        elif isinstance(current, TableSourceNode) and not current.is_global:
            found.append(current.source_name)
    return sorted(found)
