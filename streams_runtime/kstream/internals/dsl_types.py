"""What the DSL's builders (joins, foreign-key joins, suppress, cogroup, windowed aggregations)
use of the KStream, KTable or grouped stream they extend: its ``internals`` (the package-private
fields of Kafka Streams' AbstractStream, here one small object the builders read instead of the
classes' private fields), and the constructor they make a result with (``type(stream)(...)``: the
builders never import the classes above them).

``KStream`` and ``KTable`` extend ``DslStream`` and ``DslTable`` (which hold their fields); a builder
typed ``(stream: S) -> S`` returns a stream of its input's class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from streams_runtime.kstream.internals.builder import InternalStreamsBuilder
    from streams_runtime.kstream.internals.graph import GraphNode, RepartitionNode
    from streams_runtime.kstream.internals.table_processors import TableUpdatesSupplier
    from streams_runtime.serdes import Serde


@dataclass(frozen=True, slots=True)
class DslInternals:
    """The builder a stream was made by and its node in the graph: where a builder adds the
    nodes of an operation on it."""

    builder: InternalStreamsBuilder
    node: GraphNode


@dataclass(frozen=True, slots=True)
class TableInternals(DslInternals):
    """A KTable's, with the processor supplier of its updates (its value getters' source)."""

    supplier: TableUpdatesSupplier


@dataclass(frozen=True, slots=True)
class GroupedInternals(DslInternals):
    """A grouped stream's or table's, with its grouping name, whether an aggregation repartitions
    first, and (a grouped stream's) the node an aggregation under a store name hangs from."""

    grouped_name: str | None
    repartition_required: bool
    repartitioned_parent: Callable[[str], GraphNode] | None = None


@dataclass(eq=False, repr=False)
class DslObject:
    """What a KStream, KTable or grouped stream holds: the builder it was made by, its node in the
    graph and its serdes (the fields of Kafka Streams' AbstractStream)."""

    _internal: InternalStreamsBuilder
    _node: GraphNode
    key_serde: Serde | None
    value_serde: Serde | None

    @property
    def name(self) -> str:
        return self._node.output_name


@dataclass(eq=False, repr=False)
class DslStream(DslObject):
    """A KStream as the builders see it: whether the next stateful operation repartitions."""

    repartition_required: bool

    @property
    def internals(self) -> DslInternals:
        """For the DSL's builders (not user code): the builder and the graph node of this stream."""
        return DslInternals(self._internal, self._node)


@dataclass(eq=False, repr=False)
class DslTable(DslObject):
    """A KTable as the builders see it: the processor supplier producing its updates, and its
    store name when it is queryable."""

    _supplier: TableUpdatesSupplier
    _queryable_store_name: str | None = None

    @property
    def internals(self) -> TableInternals:
        """For the DSL's builders (not user code): builder, graph node and update supplier."""
        return TableInternals(self._internal, self._node, self._supplier)

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        return self._supplier.enable_sending_old_values(force_materialization)


@dataclass(eq=False, repr=False)
class DslGrouped(DslObject):
    """A grouped stream or table as the builders see it: its grouping name, and whether an
    aggregation repartitions first (always, for a table)."""

    _grouped_name: str | None
    _repartition_required: bool = True
    _repartition_node: RepartitionNode | None = field(default=None, init=False)

    @property
    def internals(self) -> GroupedInternals:
        """For the DSL's builders (not user code): builder, graph node and grouping."""
        return GroupedInternals(self._internal, self._node, self._grouped_name, self._repartition_required)


class DslGlobalTable(Protocol):
    """A GlobalKTable as the builders see it: the store a join reads."""

    @property
    def store_name(self) -> str: ...


S = TypeVar("S", bound=DslStream)
T = TypeVar("T", bound=DslTable)
