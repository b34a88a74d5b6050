"""TimeWindowedKStream and SessionWindowedKStream: ``group_by_key().windowed_by(windows)``.

Owner: the DSL. Each ``count``/``reduce``/``aggregate`` adds one processor with its
window (or session) store after the grouped stream's repartition node (if a key changed
upstream), and returns a KTable keyed by ``Windowed(key, window)``.

Stores (Kafka Streams' WindowStoreMaterializer / SessionStoreMaterializer rules):
* retention = ``Materialized.retention_ms`` if set, else window size + grace (session:
  inactivity gap + grace); a retention below size + grace is a TopologyError;
* type from ``Materialized.store_type`` / ``default_dsl_store`` (rocksdb or in_memory), or the
  Materialized's window/session store supplier;
* changelog ``cleanup.policy=compact,delete`` with ``retention.ms`` = retention + one day
  (done by the state side's window builders); caching and logging as the Materialized says.

Names follow Kafka Streams: ``KSTREAM-AGGREGATE-`` / ``KSTREAM-REDUCE-`` processors and stores;
``count(Materialized)`` without a store name burns one index.

``emit_strategy(EmitStrategy.on_window_close())`` (time, sliding and session windows, as in
Kafka Streams 3.3) applies to the aggregations built after it; it changes neither names nor
``describe()``, and a session store under it is never cached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from streams_runtime.errors import TopologyError
from streams_runtime.kstream.emit_strategy import EmitStrategy, StrategyType, check_emit_strategy
from streams_runtime.kstream.internals import window_aggregate as wa
from streams_runtime.kstream.internals.functions import check_callable
from streams_runtime.kstream.internals.sliding_window_aggregate import KStreamSlidingWindowAggregate
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode
from streams_runtime.kstream.ktable import KTable
from streams_runtime.kstream.windows import SessionWindows, SlidingWindows, TimeWindows
from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores
from streams_runtime.state.internals.window_builders import SessionStoreBuilder, WindowStoreBuilder
from streams_runtime.windowed import WindowedSerdes

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext, MaterializedInternal
    from streams_runtime.kstream.internals.dsl_types import DslGrouped
    from streams_runtime.kstream.options import Materialized
    from streams_runtime.serdes import Serde
    from streams_runtime.windowed import SessionWindowedSerde, TimeWindowedSerde

AGGREGATE_NAME = "KSTREAM-AGGREGATE-"
REDUCE_NAME = "KSTREAM-REDUCE-"


class _WindowStoreFactory:
    """Builds the window/session StoreBuilder of one aggregation at topology-build time."""

    def __init__(
        self, mat: MaterializedInternal, windows: TimeWindows | SlidingWindows | SessionWindows
    ) -> None:
        self.mat = mat
        self.windows = windows
        self.caching_allowed = True

    def __call__(self, ctx: BuildContext) -> SessionStoreBuilder | WindowStoreBuilder:
        m = self.mat.materialized
        config = ctx.config
        store_type = m.store_type or (config.get("default_dsl_store") if config else None) or "rocksdb"
        return self.build(store_type == "in_memory")

    def build(self, in_memory: bool) -> SessionStoreBuilder | WindowStoreBuilder:
        m, name, windows = self.mat.materialized, self.mat.store_name, self.windows
        if isinstance(windows, SlidingWindows):
            return self._build_sliding(windows, in_memory)
        session = isinstance(windows, SessionWindows)
        size = windows.inactivity_gap_ms if isinstance(windows, SessionWindows) else windows.size_ms
        minimum = size + windows.grace_ms
        retention = _retention(
            m,
            minimum,
            f"{'session' if session else 'window'} store {name}",
            "its window size plus the grace period",
            f"size+grace=[{minimum}]",
        )
        supplier = m.store_supplier
        builder: SessionStoreBuilder | WindowStoreBuilder
        if session:
            if supplier is None:
                supplier = (Stores.in_memory_session_store if in_memory else Stores.persistent_session_store)(
                    name, retention
                )
            builder = Stores.session_store_builder(supplier, self.mat.key_serde, self.mat.value_serde)
        else:
            if supplier is None:
                make = (
                    Stores.in_memory_window_store if in_memory else Stores.persistent_timestamped_window_store
                )
                supplier = make(name, retention, size, False)
            builder = Stores.timestamped_window_store_builder(
                supplier, self.mat.key_serde, self.mat.value_serde
            )
        return self._switches(builder)

    def _switches(
        self, builder: SessionStoreBuilder | WindowStoreBuilder
    ) -> SessionStoreBuilder | WindowStoreBuilder:
        m = self.mat.materialized
        builder.with_logging_enabled(
            m.logging_config or {}
        ) if m.logging_enabled else builder.with_logging_disabled()
        cached = m.caching_enabled and self.caching_allowed
        builder.with_caching_enabled() if cached else builder.with_caching_disabled()
        return builder

    def _build_sliding(
        self, windows: SlidingWindows, in_memory: bool
    ) -> SessionStoreBuilder | WindowStoreBuilder:
        """Kafka Streams' sliding-window store: window size = time difference, retention >= 2 * diff + grace.

        A record at ``t`` reads windows starting from ``t - 2 * diff`` (to find the previous record's
        right window), hence the larger minimum retention. As in Kafka Streams, the minimum is only
        enforced when the DSL creates the store (no store supplier given).
        """
        m, name = self.mat.materialized, self.mat.store_name
        diff = windows.time_difference_ms
        supplier = m.store_supplier
        if supplier is None:
            minimum = 2 * diff + windows.grace_ms
            retention = _retention(
                m,
                minimum,
                f"window store {name}",
                "2 * time difference plus the grace period",
                f"time difference=[{diff}], grace=[{windows.grace_ms}]",
            )
            make = Stores.in_memory_window_store if in_memory else Stores.persistent_timestamped_window_store
            supplier = make(name, retention, diff, False)
        builder = Stores.timestamped_window_store_builder(supplier, self.mat.key_serde, self.mat.value_serde)
        return self._switches(builder)


def _retention(m: Materialized, minimum: int, store: str, rule: str, given: str) -> int:
    """The store's retention: ``Materialized.retention_ms`` if set (at least ``minimum``), else
    ``minimum``."""
    retention = m.retention_ms if m.retention_ms is not None else minimum
    if retention < minimum:
        raise TopologyError(
            f"the retention period of the {store} must be no smaller than {rule}; "
            f"got {given}, retention=[{retention}]"
        )
    return retention


W = TypeVar("W", bound=TimeWindows | SlidingWindows | SessionWindows)


class _WindowedKStream(Generic[W]):
    #: the processor of the aggregations: ``(supplier, windows, initializer, aggregator, merger)``
    _processor_class: Callable[..., Any]
    #: ``count()`` without a store name takes (and wastes) one generated name, as Kafka Streams does
    _count_burns_store_name = True

    def __init__(self, grouped: DslGrouped, windows: W) -> None:
        internals = grouped.internals
        if internals.repartitioned_parent is None:
            raise TypeError(f"windowed_by is an operation of a grouped stream, not of {grouped!r}")
        self._repartitioned_parent = internals.repartitioned_parent
        self._internal = internals.builder
        self.windows = windows
        self.key_serde = grouped.key_serde
        self.value_serde = grouped.value_serde
        self._emit_strategy = EmitStrategy.on_window_update()

    def _windowed_key_serde(self, key_serde: Serde) -> Serde:
        raise NotImplementedError

    def _build(
        self, func_name: str, mat: MaterializedInternal, factory: Callable[[wa.WindowAggregateSupplier], Any]
    ) -> KTable:
        internal = self._internal
        supplier = wa.WindowAggregateSupplier(mat.store_name, factory)
        supplier.windows = self.windows
        supplier.emit_on_window_close = self._emit_strategy.type is StrategyType.ON_WINDOW_CLOSE
        parent = self._repartitioned_parent(mat.store_name)
        store_factory = _WindowStoreFactory(mat, self.windows)
        # Kafka Streams never caches a session store whose aggregation emits on window close.
        store_factory.caching_allowed = not (
            supplier.emit_on_window_close and isinstance(self.windows, SessionWindows)
        )
        node = StatefulProcessorNode(func_name, supplier, store_factories=(store_factory,))
        internal.add_graph_node(parent, node)
        key_serde = self._windowed_key_serde(mat.key_serde) if mat.key_serde is not None else None
        return KTable(internal, node, key_serde, mat.value_serde, supplier, mat.queryable_store_name)

    def _materialize(
        self, materialized: Materialized | None, prefix: str, value_serde: object
    ) -> MaterializedInternal:
        return self._internal.materialize(
            materialized, prefix, key_serde=self.key_serde, value_serde=value_serde
        )

    def _count_materialized(self, materialized: Materialized | None) -> MaterializedInternal:
        if self._count_burns_store_name and materialized is not None and materialized.store_name is None:
            self._internal.new_store_name(AGGREGATE_NAME)  # Kafka Streams burns one here
        return self._materialize(materialized, AGGREGATE_NAME, Serdes.Long())

    def _aggregation(
        self,
        name: str | None,
        prefix: str,
        mat: MaterializedInternal,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        merger: Callable[[Any, Any, Any], Any],
    ) -> KTable:
        """The windowed aggregation node (its processor: ``_processor_class``) and its KTable."""
        func = self._internal.name_or_generate(name, prefix)
        return self._build(
            func, mat, lambda s: self._processor_class(s, self.windows, initializer, aggregator, merger)
        )

    def emit_strategy(self, emit_strategy: EmitStrategy) -> Self:
        """When the aggregations built after this call forward their results; returns this stream.

        ``EmitStrategy.on_window_update()`` (the default) forwards every update;
        ``EmitStrategy.on_window_close()`` forwards one final result per window once stream time
        passes window end + grace (for a session: session end + inactivity gap + grace), without a
        suppression buffer (and a session store is then never cached).
        """
        self._emit_strategy = check_emit_strategy(emit_strategy)
        return self

    def _aggregate(
        self,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        merger: Callable[[Any, Any, Any], Any],
        materialized: Materialized | None,
        name: str | None,
    ) -> KTable:
        check_callable(initializer, "initializer")
        check_callable(aggregator, "aggregator")
        check_callable(merger, "session merger")
        mat = self._materialize(materialized, AGGREGATE_NAME, None)
        return self._aggregation(name, AGGREGATE_NAME, mat, initializer, aggregator, merger)

    def count(self, materialized: Materialized | None = None, *, name: str | None = None) -> KTable:
        """Records per key and window (Long values)."""
        mat = self._count_materialized(materialized)
        return self._aggregation(name, AGGREGATE_NAME, mat, _zero, _count, _add_counts)

    def reduce(
        self,
        reducer: Callable[[Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``reducer(aggregate, value)`` per key and window; the first value starts the window."""
        check_callable(reducer, "reducer")
        mat = self._materialize(materialized, REDUCE_NAME, self.value_serde)
        aggregator = _reducing(reducer)
        return self._aggregation(
            name, REDUCE_NAME, mat, _none, aggregator, lambda k, a, b: aggregator(k, b, a)
        )


class TimeWindowedKStream(_WindowedKStream[TimeWindows | SlidingWindows]):
    """A grouped stream windowed by TimeWindows (tumbling/hopping) or SlidingWindows."""

    _processor_class: Callable[..., Any] = wa.KStreamWindowAggregate

    def _windowed_key_serde(self, key_serde: Serde) -> TimeWindowedSerde:
        size = (
            self.windows.size_ms if isinstance(self.windows, TimeWindows) else self.windows.time_difference_ms
        )
        return WindowedSerdes.time_windowed(key_serde, max(size, 1))

    def aggregate(
        self,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``aggregator(key, value, aggregate)`` per key and window, from ``initializer()``."""
        return self._aggregate(initializer, aggregator, wa.no_merger, materialized, name)


class SlidingWindowedKStream(TimeWindowedKStream):
    """A grouped stream windowed by SlidingWindows: windows ``[start, start + time difference]`` (both
    ends inclusive) created by the records (Kafka Streams' KStreamSlidingWindowAggregate); keys are
    ``Windowed(key, TimeWindow(start, start + time difference))``."""

    _processor_class: Callable[..., Any] = KStreamSlidingWindowAggregate
    _count_burns_store_name = False  # unlike time windows, Kafka Streams burns no store name here


class SessionWindowedKStream(_WindowedKStream[SessionWindows]):
    """A grouped stream windowed by SessionWindows (sessions merge as records bridge gaps)."""

    _processor_class: Callable[..., Any] = wa.KStreamSessionWindowAggregate

    def _windowed_key_serde(self, key_serde: Serde) -> SessionWindowedSerde:
        return WindowedSerdes.session_windowed(key_serde)

    def aggregate(
        self,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        merger: Callable[[Any, Any, Any], Any],
        materialized: Materialized | None = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """``aggregator(key, value, agg)``; ``merger(key, agg1, agg2)`` when sessions merge."""
        return self._aggregate(initializer, aggregator, merger, materialized, name)


def windowed_by(grouped: DslGrouped, windows: object) -> Any:
    """What ``KGroupedStream.windowed_by`` returns for ``windows``."""
    if isinstance(windows, SlidingWindows):
        return SlidingWindowedKStream(grouped, windows)
    if isinstance(windows, TimeWindows):
        return TimeWindowedKStream(grouped, windows)
    if isinstance(windows, SessionWindows):
        return SessionWindowedKStream(grouped, windows)
    raise TypeError(f"windowed_by takes TimeWindows, SlidingWindows or SessionWindows, got {windows!r}")


def _zero() -> int:
    return 0


def _none() -> None:
    return None


def _count(key: object, value: object, aggregate: int) -> int:
    return aggregate + 1


def _add_counts(key: Any, count1: int, count2: int) -> int:
    """The merger of two sessions' counts (time windows never merge)."""
    return count1 + count2


def _reducing(reducer: Callable[[Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    def aggregate(key: object, value: object, agg: object) -> object:
        return value if agg is None else reducer(agg, value)

    return aggregate
