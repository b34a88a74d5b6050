"""StreamsBuilder: the entry point of the DSL. ``build()`` returns a Topology (a pure description).

builder = StreamsBuilder()
counts = (builder.stream("text-input", Consumed.with_(Serdes.String(), Serdes.String()))
          .flat_map_values(lambda line: line.lower().split())
          .group_by(lambda key, word: word)
          .count(Materialized.as_("word-count-store")))
counts.to_stream().to("wordcount-output", Produced.with_(Serdes.String(), Serdes.Long()))
topology = builder.build()
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.config import StreamsConfig
from streams_runtime.errors import TopologyError
from streams_runtime.kstream.grouped import KGroupedTable
from streams_runtime.kstream.internals.build_context import MaterializedInternal
from streams_runtime.kstream.internals.builder import InternalStreamsBuilder
from streams_runtime.kstream.internals.graph import (
    GraphNode,
    StreamSourceNode,
    TableSourceNode,
    write_global_store,
)
from streams_runtime.kstream.internals.repartition import SOURCE_NAME as KSTREAM_SOURCE_NAME
from streams_runtime.kstream.internals.table_processors import KTableSourceSupplier
from streams_runtime.kstream.kstream import KStream
from streams_runtime.kstream.ktable import SOURCE_NAME as KTABLE_SOURCE_NAME
from streams_runtime.kstream.ktable import GlobalKTable, KTable
from streams_runtime.kstream.options import Consumed, Materialized
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
from streams_runtime.processor.topology import Topology

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext
    from streams_runtime.state.interfaces import StoreBuilder


class _StateStoreNode(GraphNode):
    """``StreamsBuilder.add_state_store``: a store processors connect to by name."""

    def __init__(self, store_builder: StoreBuilder) -> None:
        super().__init__(store_builder.name)
        self.store_builder = store_builder

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_state_store(self.store_builder)


@dataclass(eq=False, repr=False)
class _GlobalStoreNode(GraphNode):
    """``StreamsBuilder.add_global_store``: a global store with the processor that updates it."""

    store_builder: StoreBuilder
    source_name: str
    topic: str
    consumed: Consumed
    processor_name: str
    supplier: Callable[[], Any]

    def __post_init__(self) -> None:
        super().__init__(self.processor_name)

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        write_global_store(
            builder,
            self.store_builder,
            self.source_name,
            self.topic,
            self.processor_name,
            self.supplier,
            self.consumed,
        )


def _split_options(args: tuple[Any, ...], *types: type) -> tuple[list[Any], list[Any]]:
    plain: list[Any] = []
    options: list[Any] = []
    for arg in args:
        (options if isinstance(arg, types) else plain).append(arg)
    return plain, options


class StreamsBuilder:
    """See the module docstring."""

    def __init__(self, config: StreamsConfig | Mapping[str, Any] | None = None) -> None:
        self.config = config
        self._internal = InternalStreamsBuilder(stream_type=KStream, grouped_table_type=KGroupedTable)
        self._built: Topology | None = None

    # ------------------------------------------------------------------ sources
    def stream(self, *topics: object, consumed: Consumed | None = None) -> KStream:
        """A KStream over topics: ``stream("a")``, ``stream("a", "b")``, ``stream(["a", "b"])``, or every
        topic matching a pattern: ``stream(re.compile("orders-.*"))``."""
        names, options = _split_options(topics, Consumed)
        if options:
            consumed = options[0]
        if len(names) == 1 and isinstance(names[0], re.Pattern):
            return self._pattern_stream(names[0], consumed)
        flat: list[str] = []
        for item in names:
            flat.extend([item] if isinstance(item, str) else list(item))
        if not flat:
            raise TopologyError("stream() needs at least one topic")
        c = consumed or Consumed()
        name = self._internal.name_or_generate(c.name, KSTREAM_SOURCE_NAME)
        node = StreamSourceNode(name, flat, c)
        self._internal.add_graph_node(self._internal.root, node)
        return KStream(self._internal, node, c.key_serde, c.value_serde, False)

    def _pattern_stream(self, pattern: re.Pattern[str], consumed: Consumed | None) -> KStream:
        """``stream(re.compile("orders-.*"))``: every topic whose whole name matches (see
        processor/internals/pattern_sources)."""
        c = consumed or Consumed()
        name = self._internal.name_or_generate(c.name, KSTREAM_SOURCE_NAME)
        node = StreamSourceNode(name, [], c, pattern=pattern)
        self._internal.add_graph_node(self._internal.root, node)
        return KStream(self._internal, node, c.key_serde, c.value_serde, False)

    def table(
        self,
        topic: str,
        *options: object,
        consumed: Consumed | None = None,
        materialized: Materialized | None = None,
    ) -> KTable:
        """A KTable over ``topic`` (a changelog: latest value per key; a None value deletes)."""
        c, mat = self._table_options(topic, options, consumed, materialized)
        if c.key_serde is None and mat.key_serde is not None:
            c = c.replace(key_serde=mat.key_serde)
        if c.value_serde is None and mat.value_serde is not None:
            c = c.replace(value_serde=mat.value_serde)
        source_name = self._internal.suffix_or_generate(c.name, "-source", KSTREAM_SOURCE_NAME)
        table_name = self._internal.name_or_generate(c.name, KTABLE_SOURCE_NAME)
        supplier = KTableSourceSupplier(mat.store_name, mat.queryable_store_name)
        supplier.versioned = (
            getattr(mat.materialized.store_supplier, "history_retention_ms", None) is not None
        )
        node = TableSourceNode(table_name, source_name, topic, c, supplier, mat)
        self._internal.add_graph_node(self._internal.root, node)
        return KTable(self._internal, node, c.key_serde, c.value_serde, supplier, mat.queryable_store_name)

    def _table_options(
        self,
        topic: str,
        options: tuple[Any, ...],
        consumed: Consumed | None,
        materialized: Materialized | None,
    ) -> tuple[Consumed, MaterializedInternal]:
        """The Consumed and the materialization of ``table``/``global_table`` (positional options
        win over the keywords)."""
        _, opts = _split_options(options, Consumed, Materialized)
        for opt in opts:
            if isinstance(opt, Consumed):
                consumed = opt
            else:
                materialized = opt
        c = consumed or Consumed()
        mat = self._internal.materialize(
            materialized, topic + "-", key_serde=c.key_serde, value_serde=c.value_serde
        )
        return c, mat

    def global_table(
        self,
        topic: str,
        *options: object,
        consumed: Consumed | None = None,
        materialized: Materialized | None = None,
    ) -> GlobalKTable:
        """A table fully replicated on every instance (always materialized, never logged)."""
        c, mat = self._table_options(topic, options, consumed, materialized)
        mat.materialized = mat.materialized.with_logging_disabled()
        if getattr(mat.materialized.store_supplier, "history_retention_ms", None) is not None:
            raise TopologyError(
                f"global table {topic}: a GlobalKTable cannot be materialized on a versioned store"
            )
        source_name = self._internal.suffix_or_generate(c.name, "-source", KSTREAM_SOURCE_NAME)
        processor_name = self._internal.name_or_generate(c.name, KTABLE_SOURCE_NAME)
        supplier = KTableSourceSupplier(mat.store_name, mat.store_name)
        node = TableSourceNode(processor_name, source_name, topic, c, supplier, mat, is_global=True)
        self._internal.add_graph_node(self._internal.root, node)
        return GlobalKTable(mat.store_name, mat.queryable_store_name)

    # ------------------------------------------------------------------ stores
    def add_state_store(self, store_builder: StoreBuilder) -> StreamsBuilder:
        """Add a store that ``process(..., "store-name")`` operations connect to."""
        self._internal.add_graph_node(self._internal.root, _StateStoreNode(store_builder))
        return self

    def add_global_store(
        self,
        store_builder: StoreBuilder,
        topic: str,
        state_update_supplier: Callable[[], Any],
        consumed: Consumed | None = None,
    ) -> StreamsBuilder:
        c = consumed or Consumed()
        source_name = self._internal.name_or_generate(None, KSTREAM_SOURCE_NAME)
        processor_name = self._internal.name_or_generate(None, "KTABLE-SOURCE-")
        node = _GlobalStoreNode(store_builder, source_name, topic, c, processor_name, state_update_supplier)
        self._internal.add_graph_node(self._internal.root, node)
        return self

    # ------------------------------------------------------------------ build
    def build(self, config: StreamsConfig | Mapping[str, Any] | None = None) -> Topology:
        """Translate the DSL graph into a Topology (once; later calls return the same one)."""
        if self._built is not None:
            return self._built
        config = config if config is not None else self.config
        topology = Topology(config)
        self._internal.build(topology.internal_builder, config)
        topology.internal_builder.validate()
        self._built = topology
        return topology
