"""Graph wiring of a stream-table join with a grace period (see :mod:`stream_table_grace`).

The join node owns the buffer store ``<join name>-Buffer``; when it is written the joined
table's store must be versioned with a history retention of at least the grace period (Kafka's
checks and messages). A table whose own node says it is not versioned fails at join time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import TopologyError
from streams_runtime.kstream.internals import table_joins as tj
from streams_runtime.kstream.internals.build_context import BuildContext
from streams_runtime.kstream.internals.graph import TableSourceNode
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode
from streams_runtime.kstream.internals.stream_table_grace import (
    NOT_VERSIONED,
    KStreamKTableJoinWithGrace,
    check_versioned_store,
)
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores

if TYPE_CHECKING:
    from streams_runtime.kstream.internals.dsl_types import DslStream, DslTable
    from streams_runtime.kstream.internals.table_joins import ValueGetterSupplier
    from streams_runtime.kstream.join_options import Joined
    from streams_runtime.state.internals.builders import KeyValueStoreBuilder


class _GraceJoinNode(StatefulProcessorNode):
    def __init__(
        self,
        name: str,
        supplier: Callable[[], KStreamKTableJoinWithGrace],
        getter: ValueGetterSupplier,
        grace_ms: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, supplier, **kwargs)
        self.getter = getter
        self.grace_ms = grace_ms

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        for store in self.getter.store_names:
            entry = builder.stores.get(store)
            if entry is not None:
                check_versioned_store(entry.builder, self.grace_ms)
        super().write(builder, ctx)


def _direct_supplier(node: object) -> object:
    materialized = getattr(node, "materialized", None)
    if materialized is None:
        return None
    return materialized.materialized.store_supplier


def grace_join_node(
    stream: DslStream,
    table: DslTable,
    name: str,
    getter: ValueGetterSupplier,
    joiner3: Callable[[Any, Any, Any], Any],
    left: bool,
    joined: Joined,
    grace: int,
) -> StatefulProcessorNode:
    """The join node of ``stream`` with ``table`` holding stream records for ``grace`` ms (the
    Joined's grace period)."""
    node = table.internals.node
    if isinstance(node, TableSourceNode) or getattr(node, "materialized", None) is not None:
        source_supplier = _direct_supplier(node)
        if getattr(source_supplier, "history_retention_ms", None) is None:
            raise TopologyError(NOT_VERSIONED)
    buffer_name = name + "-Buffer"
    key_serde = joined.key_serde if joined.key_serde is not None else stream.key_serde
    value_serde = joined.value_serde if joined.value_serde is not None else stream.value_serde

    def buffer_store(ctx: BuildContext) -> KeyValueStoreBuilder:
        config = ctx.config
        in_memory = (config.get("default_dsl_store") if config else None) == "in_memory"
        make = Stores.in_memory_key_value_store if in_memory else Stores.persistent_key_value_store
        return Stores.key_value_store_builder(make(buffer_name), Serdes.Bytes(), Serdes.Bytes())

    def supplier() -> KStreamKTableJoinWithGrace:
        inner = tj.KStreamKTableJoin(getter, joiner3, left)
        return KStreamKTableJoinWithGrace(inner, buffer_name, grace, key_serde, value_serde)

    return _GraceJoinNode(
        name,
        supplier,
        getter,
        grace,
        store_factories=(buffer_store,),
        store_names=lambda: tuple(getter.store_names),
    )
