"""What the DSL's builders (joins, foreign-key joins, suppress) use of the KStream and KTable
they extend: the package-private fields of Kafka Streams' AbstractStream, and the constructor
they make a result with (``type(stream)(...)``: the builders never import the classes above them).

``KStream`` and ``KTable`` match these protocols; a builder typed ``(stream: S) -> S`` returns a
stream of its input's class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from streams_runtime.kstream.internals.builder import InternalStreamsBuilder
    from streams_runtime.kstream.internals.graph import GraphNode
    from streams_runtime.kstream.internals.table_processors import TableUpdatesSupplier
    from streams_runtime.serdes import Serde


class DslStream(Protocol):
    """A KStream as the builders see it."""

    _internal: InternalStreamsBuilder
    _node: GraphNode
    key_serde: Serde | None
    value_serde: Serde | None
    repartition_required: bool

    def __init__(
        self,
        internal: InternalStreamsBuilder,
        node: GraphNode,
        key_serde: Serde | None,
        value_serde: Serde | None,
        repartition_required: bool,
    ) -> None: ...

    @property
    def name(self) -> str: ...


class DslTable(Protocol):
    """A KTable as the builders see it."""

    _internal: InternalStreamsBuilder
    _node: GraphNode
    key_serde: Serde | None
    value_serde: Serde | None
    _supplier: TableUpdatesSupplier

    def __init__(
        self,
        internal: InternalStreamsBuilder,
        node: GraphNode,
        key_serde: Serde | None,
        value_serde: Serde | None,
        supplier: TableUpdatesSupplier,
        queryable_store_name: str | None = None,
    ) -> None: ...

    @property
    def name(self) -> str: ...

    def enable_sending_old_values(self, force_materialization: bool) -> bool: ...


class DslGlobalTable(Protocol):
    """A GlobalKTable as the builders see it: the store a join reads."""

    @property
    def store_name(self) -> str: ...


S = TypeVar("S", bound=DslStream)
T = TypeVar("T", bound=DslTable)
