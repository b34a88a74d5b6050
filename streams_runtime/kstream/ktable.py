"""KTable and GlobalKTable: changelog streams (latest value per key) and their operations.

Records flowing out of a KTable node carry ``Change(new, old)`` values; ``to_stream()`` turns
them back into plain records (a None value is a tombstone). A KTable is materialized (has a
store) when named with ``Materialized.as_``, or when a downstream operation needs old values
(``group_by``), which forces the source table to materialize, as in Kafka Streams.

Hooks for later issues: joins need ``value_getter`` access to the table's store
(``queryable_store_name`` / the supplier's ``store_name``) and ``suppress`` adds a buffer node
after a KTable node; both attach as ProcessorGraphNodes without changing this class's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals import table_processors as tp
from streams_runtime.kstream.internals import transform_values as tv
from streams_runtime.kstream.internals.dsl_types import DslTable
from streams_runtime.kstream.internals.fk_join_builder import foreign_key_join
from streams_runtime.kstream.internals.functions import check_callable, with_key
from streams_runtime.kstream.internals.graph import ProcessorGraphNode
from streams_runtime.kstream.internals.join_builders import table_table_join
from streams_runtime.kstream.internals.suppress import suppress
from streams_runtime.kstream.options import Grouped, Materialized
from streams_runtime.serdes import Serde

if TYPE_CHECKING:
    from streams_runtime.kstream.suppressed import Suppressed

FILTER_NAME = "KTABLE-FILTER-"
MAPVALUES_NAME = "KTABLE-MAPVALUES-"
TOSTREAM_NAME = "KTABLE-TOSTREAM-"
SELECT_NAME = "KTABLE-SELECT-"
SOURCE_NAME = "KTABLE-SOURCE-"


class KTable(DslTable):
    """A changelog stream: the latest value per key (see the module docstring). Made by
    ``StreamsBuilder.table``, aggregations and ``to_table``; ``to_stream()`` turns it back into a
    stream of its updates."""

    @property
    def queryable_store_name(self) -> str | None:
        """The store name when this table is queryable (named with Materialized.as_), else None."""
        return self._queryable_store_name

    def _materialized_node(
        self,
        prefix: str,
        name: str | None,
        materialized: Materialized | None,
        make_supplier: Callable[[str | None], Any],
        value_serde: Serde | None,
        store_names: tuple[str, ...] = (),
    ) -> KTable:
        internal = self._internal
        mat = None
        if materialized is not None:
            mat = internal.materialize(
                materialized, prefix, key_serde=self.key_serde, value_serde=value_serde
            )
        node_name = internal.name_or_generate(name, prefix)
        queryable = mat.queryable_store_name if mat is not None else None
        supplier = make_supplier(queryable)
        node = ProcessorGraphNode(
            node_name, supplier, store_names=store_names, materialized=mat if queryable else None
        )
        internal.add_graph_node(self._node, node)
        key_serde = mat.key_serde if mat is not None else self.key_serde
        out_value_serde = mat.value_serde if mat is not None else value_serde
        return KTable(internal, node, key_serde, out_value_serde, supplier, queryable)

    def filter(
        self,
        predicate: Callable[[Any, Any], bool],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """Keep entries matching ``predicate(key, value)``; others become deletes downstream."""
        return self._filter(predicate, False, materialized, name)

    def filter_not(
        self,
        predicate: Callable[[Any, Any], bool],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        return self._filter(predicate, True, materialized, name)

    def _filter(
        self,
        predicate: Callable[[Any, Any], bool],
        negate: bool,
        materialized: Materialized | None,
        name: str | None,
    ) -> KTable:
        check_callable(predicate, "predicate")
        return self._materialized_node(
            FILTER_NAME,
            name,
            materialized,
            lambda q: tp.KTableFilterSupplier(self._supplier, predicate, negate, q),
            self.value_serde,
        )

    def map_values(
        self, mapper: Callable[..., Any], materialized: Materialized | None = None, *, name: str | None = None
    ) -> KTable:
        """Map each value (``mapper(value)`` or ``mapper(key, value)``); deletes stay deletes."""
        fn = with_key(mapper)
        return self._materialized_node(
            MAPVALUES_NAME,
            name,
            materialized,
            lambda q: tp.KTableMapValuesSupplier(self._supplier, fn, q),
            None,
        )

    def to_stream(self, mapper: Callable[[Any, Any], Any] | None = None, *, name: str | None = None) -> Any:
        """The table's update stream; with ``mapper(key, value)`` the key is re-selected."""
        node = ProcessorGraphNode(self._internal.name_or_generate(name, TOSTREAM_NAME), tp.KTableToStream)
        self._internal.add_graph_node(self._node, node)
        # KStream sits above KTable in the DSL's layers: the StreamsBuilder hands its class in
        stream = self._internal.stream_type(self._internal, node, self.key_serde, self.value_serde, False)
        return stream.select_key(mapper) if mapper is not None else stream

    def group_by(self, selector: Callable[[Any, Any], Any], grouped: Grouped | None = None) -> Any:
        """Re-key the table: ``selector(key, value) -> (new_key, new_value)``; then aggregate."""
        check_callable(selector, "selector")
        g = grouped or Grouped()
        select_name = self._internal.name_or_generate(g.name, SELECT_NAME)
        supplier = tp.KTableRepartitionMapSupplier(self._supplier, selector)
        node = ProcessorGraphNode(select_name, supplier)
        self._internal.add_graph_node(self._node, node)
        self.enable_sending_old_values(True)
        return self._internal.grouped_table_type(self._internal, node, g.key_serde, g.value_serde, g.name)

    # ------------------------------------------------------------------ joins, suppress
    def join(
        self,
        other: KTable,
        joiner: Callable[..., Any],
        materialized: Materialized | Callable[..., Any] | None = None,
        *args: object,
        name: str | None = None,
        **kwargs: object,
    ) -> KTable:
        """Inner table-table join: ``joiner(v1, v2)`` (or ``(key, v1, v2)``); deletes propagate.

        ``join(other, foreign_key_extractor, joiner[, TableJoined][, Materialized])`` is a
        foreign-key join: the extractor maps this table's ``value`` (or ``key, value``) to
        ``other``'s key.
        """
        return self._join("inner", other, joiner, materialized, args, name, kwargs)

    def left_join(
        self,
        other: KTable,
        joiner: Callable[..., Any],
        materialized: Materialized | Callable[..., Any] | None = None,
        *args: object,
        name: str | None = None,
        **kwargs: object,
    ) -> KTable:
        """Left table-table join; ``left_join(other, foreign_key_extractor, joiner, ...)`` is a
        foreign-key left join."""
        return self._join("left", other, joiner, materialized, args, name, kwargs)

    def outer_join(
        self,
        other: KTable,
        joiner: Callable[..., Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        return self._join("outer", other, joiner, materialized, (), name, {})

    def _join(
        self,
        kind: str,
        other: KTable,
        joiner: Callable[..., Any],
        materialized: Materialized | Callable[..., Any] | None,
        args: tuple[Any, ...],
        name: str | None,
        kwargs: dict[str, Any],
    ) -> KTable:
        """A table-table join of ``kind`` (inner, left or outer), or an inner or left foreign-key
        join when the third argument is the joiner (``materialized`` holds the extractor's joiner)."""
        if callable(materialized):  # join(other, extractor, joiner, ...): a foreign-key join
            if kind == "outer":
                raise TypeError("outer_join has no foreign-key form (join and left_join have)")
            if name is not None:
                kwargs = {**kwargs, "name": name}
            return foreign_key_join(self, other, joiner, materialized, kind == "left", args, kwargs)
        if args or kwargs:
            raise TypeError(
                f"unexpected arguments {list(args)} {sorted(kwargs)} for a table-table join; a foreign-key "
                "join is join(other, foreign_key_extractor, joiner[, TableJoined][, Materialized])"
            )
        return table_table_join(self, other, joiner, kind, name, materialized)

    def suppress(self, suppressed: Suppressed) -> KTable:
        """Hold updates back: ``Suppressed.until_window_closes(...)`` or ``until_time_limit(...)``."""
        return suppress(self, suppressed)

    # ------------------------------------------------------------------ transform_values
    def transform_values(
        self,
        transformer_supplier: Callable[[], Any],
        *store_names: str,
        materialized: Materialized | None = None,
        name: str | None = None,
    ) -> KTable:
        """Transform each value with a stateful transformer (``transform(key, value)``, optional
        ``init(context)``/``close()``) that may read ``store_names``; see internals/transform_values."""
        check_callable(transformer_supplier, "transformer supplier")
        return self._materialized_node(
            tv.TRANSFORMVALUES_NAME,
            name,
            materialized,
            lambda q: tv.KTableTransformValuesSupplier(self._supplier, transformer_supplier, q),
            None,
            store_names,
        )

    def __repr__(self) -> str:
        return f"KTable({self.name})"


class GlobalKTable:
    """A table replicated in full on every instance; readable by its store name (joins later)."""

    def __init__(self, store_name: str, queryable_store_name: str | None) -> None:
        self.store_name = store_name
        self.queryable_store_name = queryable_store_name

    def __repr__(self) -> str:
        return f"GlobalKTable({self.store_name})"
