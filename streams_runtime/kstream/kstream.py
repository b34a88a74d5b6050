"""KStream: a record stream, and the DSL operations on it.

Every operation adds one graph node and returns a new KStream (or KTable / KGroupedStream);
``name=`` names the processor (Kafka Streams' ``Named``). Key-changing operations (``map``,
``flat_map``, ``select_key``, ``process``) mark the result as needing a repartition: the next
stateful operation (aggregation, ``to_table``) inserts exactly one repartition topic first.
``map_values``/``flat_map_values``/``process_values`` keep the key and never repartition.

Value mappers may take ``(value)`` or ``(key, value)``; predicates, key selectors, mappers and
actions take ``(key, value)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams_runtime.kstream.branched import BranchedKStream
from streams_runtime.kstream.grouped import KGroupedStream
from streams_runtime.kstream.internals import stream_processors as sp
from streams_runtime.kstream.internals.dsl_types import DslStream
from streams_runtime.kstream.internals.functions import check_callable, with_key
from streams_runtime.kstream.internals.graph import GraphNode, ProcessorGraphNode, StreamSinkNode
from streams_runtime.kstream.internals.join_builders import (
    stream_global_table_join,
    stream_stream_join,
    stream_table_join,
)
from streams_runtime.kstream.internals.printing import print_supplier
from streams_runtime.kstream.internals.repartition import FILTER_NAME, SINK_NAME, create_repartitioned_source
from streams_runtime.kstream.internals.table_processors import KTableSourceSupplier
from streams_runtime.kstream.join_options import Joined, StreamJoined
from streams_runtime.kstream.ktable import GlobalKTable, KTable
from streams_runtime.kstream.options import Grouped, Materialized, Produced, Repartitioned
from streams_runtime.kstream.printed import Printed
from streams_runtime.kstream.windows import JoinWindows
from streams_runtime.serdes import Serde

PEEK_NAME = "KSTREAM-PEEK-"
FOREACH_NAME = "KSTREAM-FOREACH-"
MAP_NAME = "KSTREAM-MAP-"
MAPVALUES_NAME = "KSTREAM-MAPVALUES-"
FLATMAP_NAME = "KSTREAM-FLATMAP-"
FLATMAPVALUES_NAME = "KSTREAM-FLATMAPVALUES-"
KEY_SELECT_NAME = "KSTREAM-KEY-SELECT-"
MERGE_NAME = "KSTREAM-MERGE-"
BRANCH_NAME = "KSTREAM-BRANCH-"
PROCESSOR_NAME = "KSTREAM-PROCESSOR-"
PROCESSVALUES_NAME = "KSTREAM-PROCESSVALUES-"
REPARTITION_NAME = "KSTREAM-REPARTITION-"
TO_KTABLE_NAME = "KSTREAM-TOTABLE-"
PRINTING_NAME = "KSTREAM-PRINTER-"


class KStream(DslStream):
    """See the module docstring."""

    def _add(
        self, node: GraphNode, key_serde: Serde | None, value_serde: Serde | None, repartition: bool
    ) -> KStream:
        self._internal.add_graph_node(self._node, node)
        return KStream(self._internal, node, key_serde, value_serde, repartition)

    def _processor(self, prefix: str, name: str | None, supplier: Callable[[], Any]) -> ProcessorGraphNode:
        return ProcessorGraphNode(self._internal.name_or_generate(name, prefix), supplier)

    def _key_keeping(
        self, prefix: str, name: str | None, supplier: Callable[[], Any], value_serde: Serde | None
    ) -> KStream:
        """A stateless operation that keeps the key: the key serde and repartition flag carry over."""
        node = self._processor(prefix, name, supplier)
        return self._add(node, self.key_serde, value_serde, self.repartition_required)

    def _key_changing(
        self, prefix: str, name: str | None, supplier: Callable[[], Any], value_serde: Serde | None = None
    ) -> KStream:
        """A stateless operation that may change the key: the next stateful one repartitions."""
        node = self._processor(prefix, name, supplier)
        node.key_changing = True
        return self._add(node, None, value_serde, True)

    # ------------------------------------------------------------------ stateless
    def filter(self, predicate: Callable[[Any, Any], bool], *, name: str | None = None) -> KStream:
        check_callable(predicate, "predicate")
        return self._key_keeping(
            FILTER_NAME, name, lambda: sp.KStreamFilter(predicate, False), self.value_serde
        )

    def filter_not(self, predicate: Callable[[Any, Any], bool], *, name: str | None = None) -> KStream:
        check_callable(predicate, "predicate")
        return self._key_keeping(
            FILTER_NAME, name, lambda: sp.KStreamFilter(predicate, True), self.value_serde
        )

    def select_key(self, selector: Callable[[Any, Any], Any], *, name: str | None = None) -> KStream:
        check_callable(selector, "key selector")
        return self._key_changing(
            KEY_SELECT_NAME, name, lambda: sp.KStreamSelectKey(selector), self.value_serde
        )

    def map(self, mapper: Callable[[Any, Any], Any], *, name: str | None = None) -> KStream:
        check_callable(mapper, "mapper")
        return self._key_changing(MAP_NAME, name, lambda: sp.KStreamMap(mapper))

    def map_values(self, mapper: Callable[..., Any], *, name: str | None = None) -> KStream:
        fn = with_key(mapper)
        return self._key_keeping(MAPVALUES_NAME, name, lambda: sp.KStreamMapValues(fn), None)

    def flat_map(self, mapper: Callable[[Any, Any], Any], *, name: str | None = None) -> KStream:
        check_callable(mapper, "mapper")
        return self._key_changing(FLATMAP_NAME, name, lambda: sp.KStreamFlatMap(mapper))

    def flat_map_values(self, mapper: Callable[..., Any], *, name: str | None = None) -> KStream:
        fn = with_key(mapper)
        return self._key_keeping(FLATMAPVALUES_NAME, name, lambda: sp.KStreamFlatMapValues(fn), None)

    def peek(self, action: Callable[[Any, Any], None], *, name: str | None = None) -> KStream:
        check_callable(action, "action")
        return self._key_keeping(PEEK_NAME, name, lambda: sp.KStreamPeek(action, True), self.value_serde)

    def foreach(self, action: Callable[[Any, Any], None], *, name: str | None = None) -> None:
        check_callable(action, "action")
        node = self._processor(FOREACH_NAME, name, lambda: sp.KStreamPeek(action, False))
        self._internal.add_graph_node(self._node, node)

    def merge(self, other: KStream, *, name: str | None = None) -> KStream:
        node = ProcessorGraphNode(self._internal.name_or_generate(name, MERGE_NAME), sp.PassThrough)
        node.merge_node = True
        self._internal.add_graph_node([self._node, other._node], node)
        return KStream(
            self._internal, node, None, None, self.repartition_required or other.repartition_required
        )

    def split(self, *, name: str | None = None) -> BranchedKStream:
        """Branch by predicates: ``split().branch(p1).branch(p2).default_branch()`` -> dict."""
        return BranchedKStream(self, self._internal.name_or_generate(name, BRANCH_NAME))

    # ------------------------------------------------------------------ Processor API inside the DSL
    def process(self, supplier: Callable[[], Any], *store_names: str, name: str | None = None) -> KStream:
        """Run a Processor (``supplier()`` makes one per task) with access to ``store_names``."""
        check_callable(supplier, "processor supplier")
        # A user name burns no index here (unlike most operations), as in Kafka Streams.
        node_name = name if name is not None else self._internal.new_processor_name(PROCESSOR_NAME)
        node = ProcessorGraphNode(node_name, supplier, store_names=store_names)
        node.key_changing = True
        return self._add(node, None, None, True)

    def process_values(
        self, supplier: Callable[[], Any], *store_names: str, name: str | None = None
    ) -> KStream:
        """Like ``process`` but the processor may not change keys (no repartition needed)."""
        check_callable(supplier, "processor supplier")
        node_name = name if name is not None else self._internal.new_processor_name(PROCESSVALUES_NAME)

        def make() -> sp.FixedKeyProcessorAdapter:
            return sp.FixedKeyProcessorAdapter(supplier())

        if callable(getattr(supplier, "stores", None)) and not isinstance(supplier, type):
            make.stores = supplier.stores  # type: ignore[attr-defined]
        node = ProcessorGraphNode(node_name, make, store_names=store_names, fixed_key=True)
        return self._add(node, self.key_serde, None, self.repartition_required)

    # ------------------------------------------------------------------ repartition, sinks, tables
    def repartition(self, repartitioned: Repartitioned | None = None) -> KStream:
        """Always repartition through ``<name>-repartition`` (a new sub-topology reads it)."""
        r = repartitioned or Repartitioned()
        prefix = r.name if r.name is not None else self._internal.new_processor_name(REPARTITION_NAME)
        key_serde = r.key_serde if r.key_serde is not None else self.key_serde
        value_serde = r.value_serde if r.value_serde is not None else self.value_serde
        node = create_repartitioned_source(
            self._internal,
            prefix,
            key_serde,
            value_serde,
            partitioner=r.partitioner,
            number_of_partitions=r.number_of_partitions,
        )
        return self._add(node, key_serde, value_serde, False)

    def to(
        self, topic: str | Callable[..., str], produced: Produced | None = None, *, name: str | None = None
    ) -> None:
        """Write to ``topic``, or to ``topic(key, value, record_context)`` chosen per record."""
        p = produced or Produced()
        p = p.replace(
            key_serde=p.key_serde if p.key_serde is not None else self.key_serde,
            value_serde=p.value_serde if p.value_serde is not None else self.value_serde,
        )
        sink_name = self._internal.name_or_generate(name if name is not None else p.name, SINK_NAME)
        self._internal.add_graph_node(self._node, StreamSinkNode(sink_name, topic, p))

    def to_table(self, materialized: Materialized | None = None, *, name: str | None = None) -> KTable:
        """This stream as a changelog: each record upserts (a None value deletes) its key."""
        internal = self._internal
        node_name = internal.name_or_generate(name, TO_KTABLE_NAME)
        mat = internal.materialize(
            materialized, TO_KTABLE_NAME, key_serde=self.key_serde, value_serde=self.value_serde
        )
        parent = self._node
        if self.repartition_required:
            repartition = create_repartitioned_source(internal, node_name, mat.key_serde, mat.value_serde)
            internal.add_graph_node(parent, repartition)
            parent = repartition
        supplier = KTableSourceSupplier(mat.store_name, mat.queryable_store_name)
        node = ProcessorGraphNode(node_name, supplier, materialized=mat, materialize_if=supplier.materialized)
        internal.add_graph_node(parent, node)
        return KTable(internal, node, mat.key_serde, mat.value_serde, supplier, mat.queryable_store_name)

    # ------------------------------------------------------------------ grouping
    def group_by_key(self, grouped: Grouped | None = None) -> KGroupedStream:
        g = grouped or Grouped()
        key_serde = g.key_serde if g.key_serde is not None else self.key_serde
        value_serde = g.value_serde if g.value_serde is not None else self.value_serde
        return KGroupedStream(
            self._internal, self._node, key_serde, value_serde, g.name, self.repartition_required
        )

    def group_by(self, selector: Callable[[Any, Any], Any], grouped: Grouped | None = None) -> KGroupedStream:
        check_callable(selector, "key selector")
        g = grouped or Grouped()
        node = self._processor(KEY_SELECT_NAME, g.name, lambda: sp.KStreamSelectKey(selector))
        node.key_changing = True
        self._internal.add_graph_node(self._node, node)
        value_serde = g.value_serde if g.value_serde is not None else self.value_serde
        return KGroupedStream(self._internal, node, g.key_serde, value_serde, g.name, True)

    # ------------------------------------------------------------------ joins (see internals/join_builders)
    def join(self, other: KStream | KTable | GlobalKTable, *args: Any, **kwargs: Any) -> KStream:
        """Inner join with a KStream ``(joiner, JoinWindows[, StreamJoined])``, a KTable
        ``(joiner[, Joined])`` or a GlobalKTable ``(key_selector, joiner)``; ``name=`` optional."""
        return dispatch_stream_join(self, other, args, kwargs, "inner")

    def left_join(self, other: KStream | KTable | GlobalKTable, *args: Any, **kwargs: Any) -> KStream:
        """Left join (same arguments as ``join``): unmatched records join with None."""
        return dispatch_stream_join(self, other, args, kwargs, "left")

    def outer_join(self, other: KStream, *args: object, **kwargs: object) -> KStream:
        """Outer join with a KStream ``(joiner, JoinWindows[, StreamJoined])``."""
        return dispatch_stream_join(self, other, args, kwargs, "outer")

    # ------------------------------------------------------------------ print
    def print(self, printed: object = None) -> None:
        """Print each record as ``[label]: key, value`` (``Printed.to_sys_out()`` by default)."""
        p = printed if printed is not None else Printed.to_sys_out()
        if not isinstance(p, Printed):
            raise TypeError(f"print takes a Printed, got {printed!r}")
        node_name = self._internal.name_or_generate(p.name, PRINTING_NAME)
        node = ProcessorGraphNode(node_name, print_supplier(p, self.name))
        self._internal.add_graph_node(self._node, node)

    def __repr__(self) -> str:
        return f"KStream({self.name})"


# ------------------------------------------------------------------ joins (see internals/join_builders)
def dispatch_stream_join(
    stream: KStream,
    other: KStream | KTable | GlobalKTable,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    kind: str,
) -> KStream:
    """``KStream.join/left_join/outer_join(other, ...)``: pick the join by the type of ``other``.

    * KStream: ``(joiner, windows[, stream_joined])`` (or ``windows=``, ``stream_joined=``);
    * KTable: ``(joiner[, joined])`` (or ``joined=``); not for outer joins;
    * GlobalKTable: ``(key_selector, joiner)``; not for outer joins.
    ``name=`` names the join (StreamJoined / Joined name).
    """
    name = kwargs.pop("name", None)
    if isinstance(other, KStream):
        joiner = args[0] if args else kwargs.pop("joiner")
        windows = kwargs.pop("windows", None)
        opts = kwargs.pop("stream_joined", None)
        for arg in args[1:]:
            if isinstance(arg, JoinWindows):
                windows = arg
            elif isinstance(arg, StreamJoined):
                opts = arg
            else:
                raise TypeError(f"unexpected argument {arg!r} for a stream-stream join")
        _no_more(kwargs)
        if not isinstance(windows, JoinWindows):
            raise TypeError("a stream-stream join needs JoinWindows (windows=JoinWindows.of_...)")
        if name is not None:
            opts = (opts or StreamJoined()).with_name(name)
        return stream_stream_join(
            stream, other, joiner, windows, opts, kind in ("left", "outer"), kind == "outer"
        )
    if kind == "outer":
        raise TypeError("outer_join is only defined between two KStreams (or two KTables)")
    if isinstance(other, KTable):
        joiner = args[0] if args else kwargs.pop("joiner")
        joined = kwargs.pop("joined", None)
        for arg in args[1:]:
            if not isinstance(arg, Joined):
                raise TypeError(f"unexpected argument {arg!r} for a stream-table join")
            joined = arg
        _no_more(kwargs)
        if name is not None:
            joined = (joined or Joined()).with_name(name)
        return stream_table_join(stream, other, joiner, joined, kind == "left")
    if isinstance(other, GlobalKTable):
        key_selector = args[0] if args else kwargs.pop("key_selector")
        joiner = args[1] if len(args) > 1 else kwargs.pop("joiner")
        _no_more(kwargs)
        return stream_global_table_join(stream, other, key_selector, joiner, kind == "left", name)
    raise TypeError(f"cannot join a KStream with {other!r}")


def _no_more(kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"unexpected keyword arguments: {sorted(kwargs)}")
