"""Join wiring: DSL join calls -> graph nodes, repartition topics, stores and co-partitioning.

Owner: the DSL. ``KStream.join/left_join/outer_join`` and ``KTable.join/...``
delegate here. The builders never import those classes: a result is made with the class of
its input (``type(stream)``, ``type(table)``), so the classes import the builders, not the other
way round. Naming, index burning and repartitioning follow Kafka Streams:

* stream-stream: a side whose key changed upstream is repartitioned first through
  ``<name>-left-repartition`` / ``<name>-right-repartition`` (StreamJoined name) or
  ``<upstream processor>-repartition``; then ``KSTREAM-WINDOWED-`` x2,
  ``KSTREAM-JOINTHIS-``/``OUTERTHIS-``, ``KSTREAM-JOINOTHER-``/``OUTEROTHER-``,
  ``KSTREAM-MERGE-``; window stores ``<join processor>-store`` (or
  ``<store_name>-this-join-store``), the outer store ``KSTREAM-OUTERSHARED-<n>-store``.
* stream-table: repartition the stream if needed (``<Joined name or upstream>-repartition``),
  then ``KSTREAM-JOIN-``/``KSTREAM-LEFTJOIN-``; the table is forced to materialize.
* table-table: ``KTABLE-MERGE-``, ``KTABLE-JOINTHIS-``, ``KTABLE-JOINOTHER-``.
* The inputs of every join except the GlobalKTable one form a co-partition group (their source
  or repartition topics must have equal partition counts; checked where counts are known).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals import stream_joins as sj
from streams_runtime.kstream.internals import table_joins as tj
from streams_runtime.kstream.internals.dsl_types import DslGlobalTable, DslStream, DslTable, S, T
from streams_runtime.kstream.internals.functions import check_callable, positional_arity
from streams_runtime.kstream.internals.graph import GraphNode, ProcessorGraphNode
from streams_runtime.kstream.internals.repartition import create_repartitioned_source
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode, source_node_names
from streams_runtime.kstream.internals.stream_processors import PassThrough
from streams_runtime.kstream.internals.stream_table_grace_wiring import grace_join_node
from streams_runtime.kstream.join_options import Joined, StreamJoined
from streams_runtime.kstream.options import Materialized
from streams_runtime.kstream.windows import JoinWindows
from streams_runtime.processor.api import ProcessorContext
from streams_runtime.serdes import Serde
from streams_runtime.state import Stores

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
    from streams_runtime.state.internals.builders import KeyValueStoreBuilder
    from streams_runtime.state.internals.window_builders import WindowStoreBuilder


def with_key_joiner(joiner: Callable[..., Any]) -> Callable[[Any, Any, Any], Any]:
    """``joiner(v1, v2)`` or ``joiner(key, v1, v2)`` as a three-argument function."""
    check_callable(joiner, "joiner")
    if positional_arity(joiner) == 3:
        return joiner
    return lambda key, left, right: joiner(left, right)


def _reversed(joiner: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    return lambda key, this, other: joiner(key, other, this)


def _repartition_for_join(stream: S, prefix: str, key_serde: Serde | None, value_serde: Serde | None) -> S:
    internal = stream.internals.builder
    key_serde = key_serde if key_serde is not None else stream.key_serde
    value_serde = value_serde if value_serde is not None else stream.value_serde
    # burns indexes either way
    node: GraphNode = create_repartitioned_source(internal, prefix, key_serde, value_serde)
    # Kafka Streams re-uses a stream's join repartition when its topic prefix is the stream's own name.
    cache = internal.join_repartition_nodes
    cached = cache.get(id(stream.internals.node))
    if cached is not None and prefix == stream.name:
        node = cached
    else:
        internal.add_graph_node(stream.internals.node, node)
        if prefix == stream.name:
            cache[id(stream.internals.node)] = node
    return type(stream)(internal, node, key_serde, value_serde, False)


class _StreamStreamJoinNode(GraphNode):
    """Writes both join processors, the merge, and the three stores (Kafka's StreamStreamJoinNode)."""

    def __init__(
        self,
        merge_name: str,
        this_name: str,
        other_name: str,
        this_supplier: Callable[[], sj.KStreamKStreamJoinSide],
        other_supplier: Callable[[], sj.KStreamKStreamJoinSide],
        this_windowed: str,
        other_windowed: str,
        store_factories: list[Callable[[BuildContext], WindowStoreBuilder]],
        outer_factory: Callable[[BuildContext], KeyValueStoreBuilder] | None,
        inputs: list[GraphNode],
    ) -> None:
        super().__init__(merge_name)
        self.this_name, self.other_name = this_name, other_name
        self.this_supplier, self.other_supplier = this_supplier, other_supplier
        self.this_windowed, self.other_windowed = this_windowed, other_windowed
        self.store_factories = store_factories
        self.outer_factory = outer_factory
        self.inputs = inputs

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_processor(self.this_name, self.this_supplier, [self.this_windowed])
        builder.add_processor(self.other_name, self.other_supplier, [self.other_windowed])
        builder.add_processor(self.name, PassThrough, [self.this_name, self.other_name])
        this_store, other_store = (factory(ctx) for factory in self.store_factories)
        builder.add_state_store(this_store, [self.this_windowed, self.other_name])
        builder.add_state_store(other_store, [self.other_windowed, self.this_name])
        if self.outer_factory is not None:
            builder.add_state_store(self.outer_factory(ctx), [self.this_name, self.other_name])
        sources = sorted({s for node in self.inputs for s in source_node_names(node)})
        if len(sources) > 1:
            builder.copartition_sources(sources)


def _store_type(ctx: BuildContext, explicit: str | None) -> str:
    config = ctx.config
    return explicit or (config.get("default_dsl_store") if config else None) or "rocksdb"


def stream_stream_join(
    left: S,
    right: DslStream,
    joiner: Callable[..., Any],
    windows: JoinWindows,
    stream_joined: StreamJoined | None,
    left_outer: bool,
    right_outer: bool,
) -> S:
    stream_type = type(left)
    joiner3 = with_key_joiner(joiner)
    sj_opts = stream_joined or StreamJoined()
    internal = left.internals.builder
    name = sj_opts.name
    if left.repartition_required:
        left = _repartition_for_join(
            left, name + "-left" if name else left.name, sj_opts.key_serde, sj_opts.value_serde
        )
    if right.repartition_required:
        right = _repartition_for_join(
            right, name + "-right" if name else right.name, sj_opts.key_serde, sj_opts.other_value_serde
        )
    key_serde = sj_opts.key_serde if sj_opts.key_serde is not None else left.key_serde
    this_serde = sj_opts.value_serde if sj_opts.value_serde is not None else left.value_serde
    other_serde = sj_opts.other_value_serde if sj_opts.other_value_serde is not None else right.value_serde
    this_suffix = "-outer-this-join" if right_outer else "-this-join"
    other_suffix = "-outer-other-join" if left_outer else "-other-join"
    this_windowed = internal.suffix_or_generate(name, "-this-windowed", "KSTREAM-WINDOWED-")
    other_windowed = internal.suffix_or_generate(name, "-other-windowed", "KSTREAM-WINDOWED-")
    this_generated = internal.new_processor_name("KSTREAM-OUTERTHIS-" if right_outer else "KSTREAM-JOINTHIS-")
    other_generated = internal.new_processor_name(
        "KSTREAM-OUTEROTHER-" if left_outer else "KSTREAM-JOINOTHER-"
    )
    this_join = name + this_suffix if name else this_generated
    other_join = name + other_suffix if name else other_generated
    merge_name = internal.suffix_or_generate(name, "-merge", "KSTREAM-MERGE-")
    base = sj_opts.store_name
    this_store = (base + this_suffix if base else this_generated) + "-store"
    other_store = (base + other_suffix if base else other_generated) + "-store"
    retention = windows.size() + windows.grace_ms

    def window_store(
        store_name: str, value_serde: Serde | None
    ) -> Callable[[BuildContext], WindowStoreBuilder]:
        def make(ctx: BuildContext) -> WindowStoreBuilder:
            in_memory = _store_type(ctx, sj_opts.store_type) == "in_memory"
            supplier = (Stores.in_memory_window_store if in_memory else Stores.persistent_window_store)(
                store_name, retention, windows.size(), True
            )
            builder = Stores.window_store_builder(supplier, key_serde, value_serde)
            if sj_opts.logging_enabled:
                return builder.with_logging_enabled(sj_opts.logging_config or {})
            return builder.with_logging_disabled()

        return make

    outer_factory = None
    outer_name = None
    key_ser = sj.OuterKeySerde(key_serde)
    list_ser = sj.LeftOrRightListSerde(this_serde, other_serde)
    if left_outer:
        suffix = "-outer-shared-join" if right_outer else "-left-shared-join"
        if base:
            outer_name = base + suffix + "-store"
        else:
            outer_name = "KSTREAM-OUTERSHARED-" + this_generated[-10:] + "-store"

        def outer_factory(ctx: BuildContext) -> KeyValueStoreBuilder:
            in_memory = _store_type(ctx, sj_opts.store_type) == "in_memory"
            supplier = (Stores.in_memory_key_value_store if in_memory else Stores.persistent_key_value_store)(
                outer_name
            )
            builder = Stores.key_value_store_builder(supplier, key_ser, list_ser)
            if sj_opts.logging_enabled:
                return builder.with_logging_enabled(sj_opts.logging_config or {})
            return builder.with_logging_disabled()

    def bind_serdes(context: ProcessorContext) -> None:
        config = context.app_configs
        if key_ser.inner is None:
            key_ser.inner = config.default_serde("key")
        if list_ser.left is None:
            list_ser.left = config.default_serde("value")
        if list_ser.right is None:
            list_ser.right = config.default_serde("value")

    trackers = sj.TimeTrackerSupplier()
    this_node = ProcessorGraphNode(this_windowed, lambda: sj.KStreamJoinWindow(this_store))
    other_node = ProcessorGraphNode(other_windowed, lambda: sj.KStreamJoinWindow(other_store))
    internal.add_graph_node(left.internals.node, this_node)
    internal.add_graph_node(right.internals.node, other_node)
    this_supplier = lambda: sj.KStreamKStreamJoinSide(  # noqa: E731
        other_store, True, windows, joiner3, left_outer, outer_name, trackers, bind_serdes
    )
    other_supplier = lambda: sj.KStreamKStreamJoinSide(  # noqa: E731
        this_store, False, windows, _reversed(joiner3), right_outer, outer_name, trackers, bind_serdes
    )
    node = _StreamStreamJoinNode(
        merge_name,
        this_join,
        other_join,
        this_supplier,
        other_supplier,
        this_windowed,
        other_windowed,
        [window_store(this_store, this_serde), window_store(other_store, other_serde)],
        outer_factory,
        [left.internals.node, right.internals.node],
    )
    internal.add_graph_node([this_node, other_node], node)
    if left_outer or right_outer:
        for join_node in (this_node, other_node, node):
            join_node.null_key_relaxed_join = True
    return stream_type(internal, node, key_serde, None, False)


def stream_table_join(
    stream: S, table: DslTable, joiner: Callable[..., Any], joined: Joined | None, left: bool
) -> S:
    joiner3 = with_key_joiner(joiner)
    j = joined or Joined()
    internal = stream.internals.builder
    if stream.repartition_required:
        stream = _repartition_for_join(
            stream, j.name if j.name is not None else stream.name, j.key_serde, j.value_serde
        )
    name = internal.name_or_generate(j.name, "KSTREAM-LEFTJOIN-" if left else "KSTREAM-JOIN-")
    getter = tj.value_getter_supplier(table.internals.supplier)
    if j.grace_period_ms is not None:
        node = grace_join_node(stream, table, name, getter, joiner3, left, j, j.grace_period_ms)
    else:
        node = StatefulProcessorNode(
            name,
            lambda: tj.KStreamKTableJoin(getter, joiner3, left),
            store_names=lambda: tuple(getter.store_names),
        )
    node.copartition_inputs = [stream.internals.node, table.internals.node]
    node.null_key_relaxed_join = left
    internal.add_graph_node(stream.internals.node, node)
    return type(stream)(internal, node, stream.key_serde, None, False)


def stream_global_table_join(
    stream: S,
    global_table: DslGlobalTable,
    key_selector: Callable[[Any, Any], Any],
    joiner: Callable[..., Any],
    left: bool,
    name: str | None,
) -> S:
    check_callable(key_selector, "key selector")
    joiner3 = with_key_joiner(joiner)
    internal = stream.internals.builder
    node_name = internal.name_or_generate(name, "KSTREAM-LEFTJOIN-" if left else "KSTREAM-JOIN-")
    store = global_table.store_name
    getter = tj.ValueGetterSupplier(lambda: tj.StoreValueGetter(store), [])
    node = ProcessorGraphNode(node_name, lambda: tj.KStreamKTableJoin(getter, joiner3, left, key_selector))
    node.null_key_relaxed_join = left
    internal.add_graph_node(stream.internals.node, node)
    return type(stream)(internal, node, stream.key_serde, None, stream.repartition_required)


def table_table_join(
    this: T,
    other: DslTable,
    joiner: Callable[..., Any],
    kind: str,
    name: str | None,
    materialized: Materialized | None,
) -> T:
    joiner3 = with_key_joiner(joiner)
    internal = this.internals.builder
    mat = None
    if materialized is not None:
        mat = internal.materialize(materialized, "KTABLE-MERGE-", key_serde=this.key_serde)
    merge_name = internal.name_or_generate(name, "KTABLE-MERGE-")
    if kind in ("left", "outer"):
        this.enable_sending_old_values(True)
    if kind == "outer":
        other.enable_sending_old_values(True)
    this_getter = tj.value_getter_supplier(this.internals.supplier)
    other_getter = tj.value_getter_supplier(other.internals.supplier)
    this_kind, other_kind = {
        "inner": ("inner", "inner"),
        "left": ("left", "right"),
        "outer": ("outer", "outer"),
    }[kind]
    this_supplier = tj.KTableKTableJoinSupplier(this_kind, this.internals.supplier, other_getter, joiner3)
    other_supplier = tj.KTableKTableJoinSupplier(
        other_kind, other.internals.supplier, this_getter, _reversed(joiner3)
    )
    this_name = internal.suffix_or_generate(name, "-join-this", "KTABLE-JOINTHIS-")
    other_name = internal.suffix_or_generate(name, "-join-other", "KTABLE-JOINOTHER-")
    this_node = StatefulProcessorNode(
        this_name, this_supplier, store_names=lambda: tuple(other_getter.store_names)
    )
    other_node = StatefulProcessorNode(
        other_name, other_supplier, store_names=lambda: tuple(this_getter.store_names)
    )
    this_node.copartition_inputs = [this.internals.node, other.internals.node]
    internal.add_graph_node(this.internals.node, this_node)
    internal.add_graph_node(other.internals.node, other_node)
    result_getter = tj.joined_value_getter(kind, this_getter, other_getter, joiner3)
    store_name = mat.queryable_store_name if mat is not None else None
    merger = tj.KTableKTableJoinMergerSupplier(this_supplier, other_supplier, store_name, result_getter)
    merge_node = ProcessorGraphNode(merge_name, merger, materialized=mat if store_name else None)
    internal.add_graph_node([this_node, other_node], merge_node)
    key_serde = mat.key_serde if mat is not None else this.key_serde
    value_serde = mat.value_serde if mat is not None else None
    return type(this)(internal, merge_node, key_serde, value_serde, merger, store_name)
