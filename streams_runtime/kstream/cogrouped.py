"""CogroupedKStream (KIP-150): one aggregation over several grouped streams, into one store.

    totals = (
        clicks.group_by_key().cogroup(lambda key, click, agg: agg + 1)
        .cogroup(purchases.group_by_key(), lambda key, purchase, agg: agg + 10)
        .aggregate(lambda: 0, Materialized.as_("activity"))
    )

``KGroupedStream.cogroup(aggregator)`` starts it; ``cogroup(grouped, aggregator)`` adds an input;
``aggregate(initializer[, materialized][, name=])`` builds the KTable. ``windowed_by`` takes
TimeWindows, SlidingWindows or SessionWindows (session aggregations also take a merger); windowed
cogroups always emit on window update, as in Kafka Streams. Each aggregator is
``aggregator(key, value, aggregate)``. Naming, repartitioning and ``describe()`` follow Kafka
Streams (see ``internals/cogroup.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from streams_runtime.kstream.internals import aggregate_processors as ap
from streams_runtime.kstream.internals import window_aggregate as wa
from streams_runtime.kstream.internals.cogroup import AGGREGATE_NAME, CogroupAggregateBuilder
from streams_runtime.kstream.internals.functions import check_callable
from streams_runtime.kstream.internals.sliding_window_aggregate import KStreamSlidingWindowAggregate
from streams_runtime.kstream.ktable import KTable
from streams_runtime.kstream.options import Materialized
from streams_runtime.kstream.windowed_streams import _WindowStoreFactory
from streams_runtime.kstream.windows import SessionWindows, SlidingWindows, TimeWindows
from streams_runtime.windowed import WindowedSerdes

if TYPE_CHECKING:
    from streams_runtime.kstream.internals.dsl_types import DslGrouped
    from streams_runtime.kstream.internals.window_aggregate import WindowAggregateSupplier
    from streams_runtime.processor.api import Processor
    from streams_runtime.serdes import Serde

__all__ = ["CogroupedKStream", "SessionWindowedCogroupedKStream", "TimeWindowedCogroupedKStream"]


def _materialized(materialized: object) -> Materialized | None:
    """The ``materialized`` argument of ``aggregate``: a Materialized or None."""
    if materialized is None or isinstance(materialized, Materialized):
        return materialized
    raise TypeError(f"aggregate takes a Materialized, got {materialized!r}")


class CogroupedKStream:
    """See the module docstring."""

    def __init__(self, grouped: DslGrouped) -> None:
        self._internal = grouped.internals.builder
        #: KGroupedStream, the class of the stream that started this cogroup (it imports this module)
        self._grouped_type = type(grouped)
        self._patterns: list[tuple[DslGrouped, Callable[..., Any]]] = []
        self._builder = CogroupAggregateBuilder(self._internal)

    def cogroup(self, grouped: object, aggregator: Callable[[Any, Any, Any], Any]) -> CogroupedKStream:
        """Add ``grouped`` (a KGroupedStream) with its ``aggregator(key, value, aggregate)``."""
        if not isinstance(grouped, self._grouped_type):
            raise TypeError(f"cogroup takes a KGroupedStream, got {grouped!r}")
        check_callable(aggregator, "aggregator")
        for i, (existing, _) in enumerate(self._patterns):
            if existing is grouped:
                self._patterns[i] = (grouped, aggregator)
                return self
        self._patterns.append((grouped, aggregator))
        return self

    def _key_serde(self) -> Serde | None:
        return self._patterns[0][0].key_serde

    def aggregate(
        self, initializer: Callable[[], Any], materialized: object = None, *, name: str | None = None
    ) -> KTable:
        """The aggregated KTable; ``initializer()`` starts each key's aggregate."""
        check_callable(initializer, "initializer")
        internal = self._internal
        mat = internal.materialize(_materialized(materialized), AGGREGATE_NAME, key_serde=self._key_serde())
        node, supplier = self._builder.build(
            self._patterns,
            name,
            mat.store_name,
            mat.queryable_store_name,
            lambda aggregator: ap.AggregateSupplier(
                mat.store_name, lambda s: ap.KStreamAggregate(s, initializer, aggregator)
            ),
            lambda ctx: ctx.store_builder(mat),
        )
        return KTable(internal, node, mat.key_serde, mat.value_serde, supplier, mat.queryable_store_name)

    def windowed_by(self, windows: object) -> Any:
        """A windowed cogroup (TimeWindows, SlidingWindows or SessionWindows)."""
        if isinstance(windows, SessionWindows):
            return SessionWindowedCogroupedKStream(self, windows)
        if isinstance(windows, (TimeWindows, SlidingWindows)):
            return TimeWindowedCogroupedKStream(self, windows)
        raise TypeError(f"windowed_by takes TimeWindows, SlidingWindows or SessionWindows, got {windows!r}")


W = TypeVar("W", bound=TimeWindows | SlidingWindows | SessionWindows)


class _WindowedCogroup(Generic[W]):
    def __init__(self, cogrouped: CogroupedKStream, windows: W) -> None:
        self._cogrouped = cogrouped
        self._internal = cogrouped._internal  # noqa: SLF001  (this module's own class)
        self.windows = windows

    def _build(
        self,
        materialized: object,
        name: str | None,
        make_processor: Callable[[WindowAggregateSupplier, Callable[..., Any]], Processor],
        key_serde_of: Callable[[Serde], Serde],
    ) -> KTable:
        internal, windows = self._internal, self.windows
        mat = internal.materialize(
            _materialized(materialized),
            AGGREGATE_NAME,
            key_serde=self._cogrouped._key_serde(),  # noqa: SLF001
        )
        store_factory = _WindowStoreFactory(mat, windows)

        def make_supplier(aggregator: Callable[..., Any]) -> WindowAggregateSupplier:
            supplier = wa.WindowAggregateSupplier(mat.store_name, lambda s: make_processor(s, aggregator))
            supplier.windows = windows
            return supplier

        node, supplier = self._cogrouped._builder.build(  # noqa: SLF001
            self._cogrouped._patterns,  # noqa: SLF001
            name,
            mat.store_name,
            mat.queryable_store_name,
            make_supplier,
            store_factory,
        )
        key_serde = key_serde_of(mat.key_serde) if mat.key_serde is not None else None
        return KTable(internal, node, key_serde, mat.value_serde, supplier, mat.queryable_store_name)


class TimeWindowedCogroupedKStream(_WindowedCogroup[TimeWindows | SlidingWindows]):
    """A cogroup windowed by TimeWindows (tumbling, hopping) or SlidingWindows."""

    def aggregate(
        self, initializer: Callable[[], Any], materialized: object = None, *, name: str | None = None
    ) -> KTable:
        """The windowed KTable (keys ``Windowed(key, TimeWindow)``)."""
        check_callable(initializer, "initializer")
        windows = self.windows
        if isinstance(windows, SlidingWindows):
            size = windows.time_difference_ms

            def make(s: WindowAggregateSupplier, aggregator: Callable[..., Any]) -> Processor:
                return KStreamSlidingWindowAggregate(s, windows, initializer, aggregator)
        else:
            size = windows.size_ms

            def make(s: WindowAggregateSupplier, aggregator: Callable[..., Any]) -> Processor:
                return wa.KStreamWindowAggregate(s, windows, initializer, aggregator)

        return self._build(
            materialized, name, make, lambda serde: WindowedSerdes.time_windowed(serde, max(size, 1))
        )


class SessionWindowedCogroupedKStream(_WindowedCogroup[SessionWindows]):
    """A cogroup windowed by SessionWindows."""

    def aggregate(
        self,
        initializer: Callable[[], Any],
        merger: Callable[[Any, Any, Any], Any],
        materialized: object = None,
        *,
        name: str | None = None,
    ) -> KTable:
        """The session KTable; ``merger(key, agg1, agg2)`` combines sessions a record bridges."""
        check_callable(initializer, "initializer")
        check_callable(merger, "session merger")
        windows = self.windows

        def make(s: WindowAggregateSupplier, aggregator: Callable[..., Any]) -> Processor:
            return wa.KStreamSessionWindowAggregate(s, windows, initializer, aggregator, merger)

        return self._build(materialized, name, make, WindowedSerdes.session_windowed)
