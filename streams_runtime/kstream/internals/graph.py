"""The DSL's logical graph: one GraphNode per DSL operation, written to an InternalTopologyBuilder
at ``StreamsBuilder.build()`` in creation order (Kafka Streams' build priority).

Node kinds and what they write:
- StreamSourceNode: a source over one or more topics;
- TableSourceNode: a source + the KTable source processor (+ its store if materialized), or a
  global store;
- ProcessorGraphNode: one processor with every parent's output name as parent; it may carry
  stores to add (``store_factories``) and existing stores to connect (``store_names``) -- this
  is also the shape later stateful operators (windowed aggregations, joins, suppress) take;
- RepartitionNode: [filter ->] sink -> topic -> source, and the repartition topic's config;
- StreamSinkNode: a sink to a fixed topic or a topic chooser.

``output_name`` is the processor name downstream nodes attach to. Multi-parent nodes (merge,
joins) list several parents. ``copartition_with`` on a node asks the builder to co-partition
the sources feeding it (joins).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.processor.internals.internal_topics import InternalTopicConfig
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder

if TYPE_CHECKING:  # the builder module imports the graph nodes
    import re

    from streams_runtime.kstream.internals.build_context import BuildContext, MaterializedInternal
    from streams_runtime.kstream.internals.table_processors import KTableSourceSupplier
    from streams_runtime.kstream.options import Consumed, Partitioner, Produced
    from streams_runtime.serdes import Serde
    from streams_runtime.state.interfaces import StoreBuilder


class GraphNode:
    def __init__(self, name: str) -> None:
        self.name = name
        self.parents: list[GraphNode] = []
        self.children: list[GraphNode] = []
        self.build_priority = -1
        self.key_changing = False
        self.merge_node = False
        self.written = False
        # a left or outer join, which passes null keys on: the repartitions upstream of it keep
        # null-key records (Kafka Streams' NULL_KEY_RELAXED_JOIN label)
        self.null_key_relaxed_join = False

    @property
    def output_name(self) -> str:
        return self.name

    def parent_names(self) -> list[str]:
        return [p.output_name for p in self.parents]

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        """Add this node's pieces to ``builder``; ``ctx`` is the build context (config, stores)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class RootNode(GraphNode):
    def __init__(self) -> None:
        super().__init__("root")
        self.written = True


class StreamSourceNode(GraphNode):
    def __init__(
        self, name: str, topics: list[str], consumed: Consumed, pattern: re.Pattern[str] | None = None
    ) -> None:
        super().__init__(name)
        self.topics = topics
        self.consumed = consumed
        self.pattern = pattern  # a compiled regular expression (a source by topic pattern)

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        _add_source(builder, self.name, self.topics, self.consumed, self.pattern)


def _add_source(
    builder: InternalTopologyBuilder,
    name: str,
    topics: list[str],
    consumed: Consumed,
    pattern: re.Pattern[str] | None = None,
) -> None:
    """A source reading ``topics`` (or the topics ``pattern`` matches) as ``consumed`` says."""
    builder.add_source(
        name,
        topics,
        key_serde=consumed.key_serde,
        value_serde=consumed.value_serde,
        timestamp_extractor=consumed.timestamp_extractor,
        offset_reset=consumed.offset_reset,
        pattern=pattern,
    )


def write_global_store(
    builder: InternalTopologyBuilder,
    store_builder: StoreBuilder,
    source_name: str,
    topic: str,
    processor_name: str,
    supplier: Callable[[], object],
    consumed: Consumed,
) -> None:
    """A global store (never logged: its topic is its changelog) read from ``topic`` as ``consumed``
    says, and the processor that updates it."""
    builder.add_global_store(
        store_builder.with_logging_disabled(),
        source_name,
        topic,
        processor_name,
        supplier,
        key_serde=consumed.key_serde,
        value_serde=consumed.value_serde,
        timestamp_extractor=consumed.timestamp_extractor,
    )


@dataclass(eq=False, repr=False)
class TableSourceNode(GraphNode):
    """``name`` is the KTable source processor; ``source_name`` the source node before it."""

    name: str
    source_name: str
    topic: str
    consumed: Consumed
    supplier: KTableSourceSupplier
    materialized: MaterializedInternal
    is_global: bool = False

    def __post_init__(self) -> None:
        super().__init__(self.name)

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        c = self.consumed
        store = ctx.store_builder(self.materialized)
        if self.is_global:
            write_global_store(builder, store, self.source_name, self.topic, self.name, self.supplier, c)
            return
        _add_source(builder, self.source_name, [self.topic], c)
        builder.add_processor(self.name, self.supplier, [self.source_name])
        if self.supplier.materialized():
            builder.add_state_store(store, [self.name])


class ProcessorGraphNode(GraphNode):
    def __init__(
        self,
        name: str,
        supplier: Callable[[], Any],
        *,
        store_names: tuple[str, ...] = (),
        materialized: MaterializedInternal | None = None,
        materialize_if: Callable[[], bool] | None = None,
        fixed_key: bool = False,
    ) -> None:
        super().__init__(name)
        self.supplier = supplier
        self.store_names = tuple(store_names)
        self.materialized = materialized  # MaterializedInternal of a store this node owns
        self.materialize_if = materialize_if
        self.fixed_key = fixed_key
        self.copartition_with: list[GraphNode] = []

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_processor(self.name, self.supplier, self.parent_names(), fixed_key=self.fixed_key)
        if self.materialized is not None and (self.materialize_if is None or self.materialize_if()):
            builder.add_state_store(ctx.store_builder(self.materialized), [self.name])
        provided = getattr(self.supplier, "stores", None)
        if callable(provided) and not isinstance(self.supplier, type):
            for store_builder in provided() or ():
                builder.add_state_store(store_builder, [self.name])
        if self.store_names:
            builder.connect_processor_and_state_stores(self.name, self.store_names)


@dataclass(eq=False, repr=False)
class RepartitionNode(GraphNode):
    """A repartition through ``topic``: ``[filter_name ->] sink_name -> topic -> source_name``.

    The node's name (and output) is the source name, as in Kafka Streams.
    """

    source_name: str
    sink_name: str
    filter_name: str | None
    topic: str
    key_serde: Serde | None
    value_serde: Serde | None
    _: KW_ONLY
    partitioner: Partitioner | None = None
    number_of_partitions: int | None = None
    filter_supplier: Callable[[], object] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.source_name)

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_internal_topic(
            InternalTopicConfig(self.topic, "repartition", number_of_partitions=self.number_of_partitions)
        )
        sink_parents = self.parent_names()
        if self.filter_name is not None and self.filter_supplier is not None:
            builder.add_processor(self.filter_name, self.filter_supplier, sink_parents)
            sink_parents = [self.filter_name]
        builder.add_sink(
            self.sink_name,
            self.topic,
            sink_parents,
            key_serde=self.key_serde,
            value_serde=self.value_serde,
            partitioner=self.partitioner,
        )
        builder.add_source(self.name, [self.topic], key_serde=self.key_serde, value_serde=self.value_serde)


class StreamSinkNode(GraphNode):
    def __init__(self, name: str, topic: str | Callable[..., str], produced: Produced) -> None:
        super().__init__(name)
        self.topic = topic
        self.produced = produced

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        p = self.produced
        builder.add_sink(
            self.name,
            self.topic,
            self.parent_names(),
            key_serde=p.key_serde,
            value_serde=p.value_serde,
            partitioner=p.partitioner,
        )


def walk_upstream(node: GraphNode, stop: Callable[[GraphNode], bool]) -> Iterator[GraphNode]:
    """``node`` and the nodes above it, each once, depth first; the parents of a node for which
    ``stop(node)`` is true are not walked."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if not stop(current):
            stack.extend(current.parents)
