"""Read-only views of a store over this client's local replicas (what ``KafkaStreams.store`` returns).

Kafka Streams' ``ReadOnlyKeyValueStore`` / ``ReadOnlyWindowStore`` / ``ReadOnlySessionStore``
faces of a store name across the client's tasks. Key lookups go to the one partition owning the
key and raise (never answer wrongly) when it is not queryable here; scans cover every partition
hosted here (or the one given as ``partition``) and raise when one of them is migrating. Scans
return lists of :class:`~streams_runtime.state.KeyValue` (materialized under the owning thread's
lock; see :mod:`.local_stores`), in store order within a partition, partitions in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from streams_runtime.errors import InvalidStateStorePartitionError
from streams_runtime.query.local_stores import LocalStores
from streams_runtime.state.interfaces import KeyValue, KeyValueIterator

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.state.internals.versioned_store import VersionedRecord

T = TypeVar("T")


def _drain(iterator: KeyValueIterator) -> list[KeyValue]:
    with iterator as it:
        return list(it)


class _VersionedReads(Protocol):
    """The reads only a versioned key-value store answers."""

    def get(self, key: object, as_of_timestamp: int | None = None, /) -> VersionedRecord | None: ...

    def versions(
        self, key: object, from_time: int | None, to_time: int | None, ascending: bool, /
    ) -> list[VersionedRecord]: ...


def _versioned(store: object, refusal: str) -> _VersionedReads:
    """``store`` when it is a versioned store (its ``versioned`` flag), else TypeError(``refusal``)."""
    if not getattr(store, "versioned", False):
        raise TypeError(refusal)
    return cast(_VersionedReads, store)


class _StoreView:
    def __init__(self, stores: LocalStores, name: str, allow_stale: bool, partition: int | None) -> None:
        self._stores = stores
        self.name = name
        self.allow_stale = allow_stale
        self.partition = partition

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"{kind}({self.name!r}, allow_stale={self.allow_stale}, partition={self.partition})"

    def _key_read(self, key: object, fn: Callable[[Any], T]) -> T:
        partition = self._stores.partition_of(self.name, key)
        if self.partition is not None and partition != self.partition:
            raise InvalidStateStorePartitionError(
                f"store {self.name}: the key is in partition {partition}, this view reads partition "
                f"{self.partition} only"
            )
        return self._stores.read(self.name, partition, fn, allow_stale=self.allow_stale)

    def _scan(self, fn: Callable[[Any], list[T]]) -> list[T]:
        partitions = None if self.partition is None else [self.partition]
        found = self._stores.read_all(self.name, fn, partitions=partitions, allow_stale=self.allow_stale)
        return [entry for p in sorted(found) for entry in found[p]]

    def partitions(self) -> list[int]:
        """The partitions this view reads in a scan (hosted here, or the one it is limited to)."""
        if self.partition is not None:
            return [self.partition]
        return sorted(self._stores.local_partitions(self.name, standby=self.allow_stale))


class ReadOnlyKeyValueView(_StoreView):
    """``get``, ``range``, ``reverse_range``, ``all``, ``prefix_scan``, ``approximate_num_entries``."""

    def get(self, key: object, as_of_timestamp: int | None = None) -> Any:
        """The value of ``key``; a versioned store answers a ``VersionedRecord`` and, with
        ``as_of_timestamp``, the version valid at that time."""
        if as_of_timestamp is None:
            return self._key_read(key, lambda store: store.get(key))

        def as_of(store: object) -> Any:
            versioned = _versioned(
                store, f"store {self.name} is not versioned: as_of_timestamp is not supported"
            )
            return versioned.get(key, as_of_timestamp)

        return self._key_read(key, as_of)

    def versions(
        self, key: object, from_time: int | None = None, to_time: int | None = None, ascending: bool = False
    ) -> list[Any]:
        """A versioned store's versions of ``key`` valid in ``[from_time, to_time]`` (Kafka's
        ``MultiVersionedKeyQuery``), newest first unless ``ascending``."""

        def read(store: object) -> Any:
            versioned = _versioned(
                store, f"store {self.name} is not versioned: versions() needs a versioned store"
            )
            return versioned.versions(key, from_time, to_time, ascending)

        return self._key_read(key, read)

    def range(self, from_key: Any = None, to_key: Any = None) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.range(from_key, to_key)))

    def reverse_range(self, from_key: Any = None, to_key: Any = None) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.reverse_range(from_key, to_key)))

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.prefix_scan(prefix, prefix_key_serde)))

    def all(self) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.all()))

    def approximate_num_entries(self) -> int:
        return sum(self._scan(lambda store: [store.approximate_num_entries()]))


class ReadOnlyWindowView(_StoreView):
    """``fetch(key, window_start)`` -> value; ``fetch(key, time_from, time_to)`` ->
    ``[KeyValue(window_start, value)]``; ``fetch_range(key_from, key_to, time_from, time_to)``,
    ``fetch_all(time_from, time_to)``, ``all()`` -> ``[KeyValue(Windowed, value)]``."""

    def fetch(self, key: object, *times: int) -> Any:
        if len(times) == 1:
            return self._key_read(key, lambda store: store.fetch(key, times[0]))
        if len(times) != 2:
            raise TypeError("fetch(key, window_start) or fetch(key, time_from, time_to)")
        return self._key_read(key, lambda store: _drain(store.fetch(key, times[0], times[1])))

    def fetch_range(self, key_from: object, key_to: object, time_from: int, time_to: int) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.fetch(key_from, key_to, time_from, time_to)))

    def fetch_all(self, time_from: int, time_to: int) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.fetch_all(time_from, time_to)))

    def all(self) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.all()))


class ReadOnlySessionView(_StoreView):
    """``fetch(key)`` / ``find_sessions(key, earliest_end, latest_start)`` ->
    ``[KeyValue(Windowed(key, SessionWindow), value)]``; ``fetch_session(key, start, end)`` -> value;
    ``fetch_range(key_from, key_to)`` over every local partition."""

    def fetch(self, key: object) -> list[KeyValue]:
        return self._key_read(key, lambda store: _drain(store.fetch(key))) or []

    def find_sessions(
        self, key: object, earliest_session_end: int, latest_session_start: int
    ) -> list[KeyValue]:
        return (
            self._key_read(
                key,
                lambda store: _drain(store.find_sessions(key, earliest_session_end, latest_session_start)),
            )
            or []
        )

    def fetch_session(self, key: object, session_start: int, session_end: int) -> Any:
        return self._key_read(key, lambda store: store.fetch_session(key, session_start, session_end))

    def fetch_range(self, key_from: object, key_to: object) -> list[KeyValue]:
        return self._scan(lambda store: _drain(store.fetch(key_from, key_to)))
