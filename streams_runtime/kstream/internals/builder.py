"""InternalStreamsBuilder: positional naming, the logical graph, and its translation to a Topology.

Owned by one StreamsBuilder. Names follow Kafka Streams exactly: one counter shared by
processors and stores; ``PREFIX-0000000007`` for processors and ``PREFIX-STATE-STORE-0000000007``
for stores. Some operations burn an index without using it (kept for identical numbering).

``build()`` writes the graph nodes in creation order (their build priority), merging stream
sources that read the same topics, then warns once per internal topic or store whose name was
generated: those names change when the topology changes, which breaks state and repartition
topics on upgrade, so users should name them (``Materialized.as_``, ``Grouped.as_``, ...).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import TopologyError
from streams_runtime.kstream.internals.build_context import BuildContext, MaterializedInternal
from streams_runtime.kstream.internals.graph import GraphNode, RootNode, StreamSourceNode
from streams_runtime.kstream.internals.repartition import filter_null_keys_at_repartitions
from streams_runtime.kstream.options import Materialized
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig
    from streams_runtime.kstream.internals.dsl_types import DslGrouped
    from streams_runtime.serdes import Serde

    #: the KStream class: a layer above the KTable that calls it (its result is a KStream)
    StreamClass = Callable[["InternalStreamsBuilder", GraphNode, Serde | None, Serde | None, bool], Any]

log = logging.getLogger("streams_runtime.kstream")

GENERATED = re.compile(r".*-\d{10}(-repartition|-changelog)?$")


class InternalStreamsBuilder:
    """See the module docstring."""

    def __init__(self, stream_type: StreamClass, grouped_table_type: type[DslGrouped]) -> None:
        #: the KStream and KGroupedTable classes, given by the StreamsBuilder: a KTable makes its
        #: update stream and its regrouping with them, as KTable sits below both in the DSL's layers
        self.stream_type = stream_type
        self.grouped_table_type = grouped_table_type
        self.index = 0
        self.root = RootNode()
        self.nodes: list[GraphNode] = []
        self.table_source_count = 0
        #: join repartition node per stream graph node, so a re-keyed stream joined twice
        #: writes one repartition topic (as Kafka Streams' KStreamImpl.repartitionNode does)
        self.join_repartition_nodes: dict[int, GraphNode] = {}

    # ------------------------------------------------------------------ naming
    def new_processor_name(self, prefix: str) -> str:
        name = f"{prefix}{self.index:010d}"
        self.index += 1
        return name

    def new_store_name(self, prefix: str) -> str:
        name = f"{prefix}STATE-STORE-{self.index:010d}"
        self.index += 1
        return name

    def name_or_generate(self, name: str | None, prefix: str) -> str:
        """The user's name, or a generated one; an index is burned either way (as Kafka does)."""
        generated = self.new_processor_name(prefix)
        if name is not None:
            _check_user_name(name)
            return name
        return generated

    def suffix_or_generate(self, name: str | None, suffix: str, prefix: str) -> str:
        generated = self.new_processor_name(prefix)
        if name is not None:
            _check_user_name(name + suffix)
            return name + suffix
        return generated

    def materialize(
        self,
        materialized: Materialized | None,
        generated_prefix: str,
        *,
        key_serde: object = None,
        value_serde: object = None,
    ) -> MaterializedInternal:
        """Resolve a Materialized: a user store name, or a generated one (burns an index)."""
        mat = materialized or Materialized()
        if mat.store_name is not None:
            _check_user_name(mat.store_name)
            name, queryable = mat.store_name, True
        else:
            name, queryable = self.new_store_name(generated_prefix), False
        return MaterializedInternal(
            mat,
            name,
            queryable,
            mat.key_serde if mat.key_serde is not None else key_serde,
            mat.value_serde if mat.value_serde is not None else value_serde,
        )

    # ------------------------------------------------------------------ graph
    def add_graph_node(self, parents: GraphNode | list[GraphNode], child: GraphNode) -> None:
        for parent in parents if isinstance(parents, list) else [parents]:
            if child not in parent.children:
                parent.children.append(child)
            if parent not in child.parents:
                child.parents.append(parent)
        if child.build_priority < 0:
            child.build_priority = len(self.nodes)
            self.nodes.append(child)

    def build(
        self, topology_builder: InternalTopologyBuilder, config: StreamsConfig | Mapping[str, Any] | None
    ) -> None:
        """Write every node (creation order) to ``topology_builder``."""
        self._merge_duplicate_sources()
        filter_null_keys_at_repartitions(self.nodes)
        ctx = BuildContext(config, self)
        for node in self.nodes:
            if node.written or not node.parents:
                continue
            node.write(topology_builder, ctx)
            node.written = True
        self._warn_unnamed(topology_builder)

    def _merge_duplicate_sources(self) -> None:
        by_topics: dict[tuple[str, ...], StreamSourceNode] = {}
        seen_topics: dict[str, tuple[str, ...]] = {}
        for node in list(self.root.children):
            if not isinstance(node, StreamSourceNode) or node.written or node.pattern is not None:
                continue
            key = tuple(sorted(node.topics))
            main = by_topics.get(key)
            if main is None:
                for topic in key:
                    if topic in seen_topics:
                        raise TopologyError(
                            f"two source nodes are subscribed to overlapping but not equal input topics: "
                            f"{list(seen_topics[topic])} and {list(key)} (source {node.name})"
                        )
                    seen_topics[topic] = key
                by_topics[key] = node
                continue
            # Re-parent the duplicate's children onto the first source; drop the duplicate.
            for child in node.children:
                child.parents = [main if p is node else p for p in child.parents]
                main.children.append(child)
            self.root.children.remove(node)
            node.parents = []
            node.written = True

    @staticmethod
    def _warn_unnamed(builder: InternalTopologyBuilder) -> None:
        for topic in builder.internal_topics:
            if GENERATED.match(topic):
                log.warning(
                    "Repartition topic %s has a generated name; name it so it stays stable across "
                    "topology changes, with the option of the operation that repartitions: "
                    "Grouped.as_ (group_by, group_by_key), Joined.as_ (a stream-table join), "
                    "StreamJoined.with_name (a stream-stream join), Repartitioned.as_ (repartition), "
                    "Materialized.as_ (to_table)",
                    topic,
                )
        for store, entry in builder.stores.items():
            if GENERATED.match(store):
                kind = (
                    "with changelog topic " + store + "-changelog"
                    if entry.logging_enabled
                    else "(no changelog)"
                )
                log.warning(
                    "State store %s %s has a generated name; name it with Materialized.as_ so it "
                    "stays stable across topology changes",
                    store,
                    kind,
                )


def _check_user_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise TopologyError(f"name must be a non-empty string, got {name!r}")
    if len(name) > 249:
        raise TopologyError(f"name is illegal, it can't be longer than 249 characters: {name[:40]}...")
    if not re.fullmatch(r"[a-zA-Z0-9._-]+", name):
        raise TopologyError(
            f'name "{name}" is illegal, it contains a character other than '
            f"ASCII alphanumerics, '.', '_' and '-'"
        )
