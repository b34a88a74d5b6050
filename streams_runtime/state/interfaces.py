"""The public store contracts: what processors, the DSL and the runtime may rely on.

Owner: the state side. Implementations live in :mod:`streams_runtime.state.internals`; nothing
outside ``state`` should import them except the store builders' users through :class:`Stores`.

Invariants every key-value store keeps:

* Keys are ordered by unsigned lexicographic order of their serialized bytes; ``range`` and
  ``all`` iterate in that order, ``reverse_*`` in the opposite order.
* ``range(from_key, to_key)`` includes both bounds; either bound may be ``None`` (open).
  A range whose lower bound is above its upper bound is empty (never an error).
* A ``None`` value is a tombstone: ``put(k, None)`` deletes ``k``; a store never yields ``None``
  values from its iterators.
* Iterators yield :class:`KeyValue` tuples and must be closed (they are context managers);
  closing a store closes the iterators it still has open.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from streams_runtime.state.value_and_timestamp import ValueAndTimestamp

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.state.internals.record_cache import ThreadCache
    from streams_runtime.windowed import Windowed

__all__ = [
    "KeyValue",
    "KeyValueIterator",
    "KeyValueStore",
    "ReadOnlyKeyValueStore",
    "ReadOnlySessionStore",
    "ReadOnlyWindowStore",
    "RecordContext",
    "SessionStore",
    "StateStore",
    "StateStoreContext",
    "StoreBuilder",
    "StoreSupplier",
    "TimestampedKeyValueStore",
    "TimestampedWindowStore",
    "WindowStore",
]


# A store's key and value types, as Kafka Streams' KeyValueStore<K, V>. Keys only go into a store
# (its iterators yield KeyValue entries), so the key type is contravariant; a read-only view only
# hands values out, so its value type is covariant; the window and session stores' typed part is
# what goes in (their reads have several forms, untyped), so theirs is contravariant.
K = TypeVar("K", contravariant=True)
V = TypeVar("V")
V_co = TypeVar("V_co", covariant=True)
V_contra = TypeVar("V_contra", contravariant=True)


class KeyValue(NamedTuple):
    """One entry of a store or one record of a stream: ``key`` and ``value``."""

    key: Any
    value: Any


@runtime_checkable
class KeyValueIterator(Protocol):
    """An iterator of :class:`KeyValue` that holds resources until :meth:`close`."""

    def __iter__(self) -> Iterator[KeyValue]: ...

    def __next__(self) -> KeyValue: ...

    def has_next(self) -> bool:
        """Whether another entry is available."""
        ...

    def peek_next_key(self) -> Any:
        """The key the next ``next()`` returns; raises ``StopIteration`` when exhausted."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> KeyValueIterator: ...

    def __exit__(self, *exc_info: object) -> None: ...


class RecordContext(Protocol):
    """The metadata of the record being processed (implemented by the runtime)."""

    topic: str | None
    partition: int
    offset: int
    timestamp: int
    headers: Any


class StateStoreContext(Protocol):
    """All a store sees of the runtime (implemented by the DSL/runtime side).

    Besides the contract's members, caching stores need :meth:`set_record_context`: a cache
    flush replays each dirty entry under the record context it was written with, so that the
    changelog record and the forwarded record carry that record's timestamp and headers.
    """

    application_id: str
    task_id: Any
    state_dir: pathlib.Path
    app_configs: Any
    metrics: Any

    def register(
        self,
        store: StateStore,
        restore_callback: Callable[..., None],
        *,
        changelog_topic: str | None,
    ) -> None: ...

    def log_change(
        self,
        store_name: str,
        key: bytes,
        value: bytes | None,
        timestamp: int,
        headers: object = None,
    ) -> None: ...

    def record_context(self) -> RecordContext | None: ...

    def set_record_context(self, record_context: RecordContext | None) -> None: ...

    def cache(self) -> ThreadCache | None: ...


@runtime_checkable
class StateStore(Protocol):
    """Lifecycle of every store: init -> (use, flush)* -> close."""

    @property
    def name(self) -> str: ...

    @property
    def persistent(self) -> bool: ...

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def is_open(self) -> bool: ...


class ReadOnlyKeyValueStore(Protocol[K, V_co]):
    """The read half of a key-value store (what interactive queries see): keys ``K``, values ``V``."""

    def get(self, key: K) -> V_co | None: ...

    def range(self, from_key: K | None = None, to_key: K | None = None) -> KeyValueIterator: ...

    def reverse_range(self, from_key: K | None = None, to_key: K | None = None) -> KeyValueIterator: ...

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> KeyValueIterator:
        """The entries whose serialized key starts with ``prefix`` serialized by ``prefix_key_serde``
        (a prefix is a value of another type than the keys: Kafka's ``<PS, P>``)."""
        ...

    def all(self) -> KeyValueIterator: ...

    def reverse_all(self) -> KeyValueIterator: ...

    def approximate_num_entries(self) -> int: ...


class KeyValueStore(StateStore, ReadOnlyKeyValueStore[K, V], Protocol[K, V]):
    """A read-write key-value store: keys ``K``, values ``V`` (``put(k, None)`` deletes ``k``)."""

    def put(self, key: K, value: V | None) -> None: ...

    def put_if_absent(self, key: K, value: V | None) -> V | None: ...

    def put_all(self, entries: Sequence[tuple[K, V | None]]) -> None: ...

    def delete(self, key: K) -> V | None: ...


class TimestampedKeyValueStore(KeyValueStore[K, ValueAndTimestamp], Protocol[K]):
    """A key-value store whose values are :class:`ValueAndTimestamp` (Kafka's
    ``KeyValueStore<K, ValueAndTimestamp<V>>``; ``ValueAndTimestamp`` is not generic here)."""


class ReadOnlyWindowStore(Protocol):
    """The read half of a window store; keys are plain, results carry ``Windowed`` keys.

    ``fetch(key, window_start)`` -> value or ``None``; ``fetch(key, time_from, time_to)`` ->
    ``KeyValue(window_start, value)`` in start order; ``fetch(key_from, key_to, time_from,
    time_to)``, ``fetch_all(time_from, time_to)``, ``all()`` -> ``KeyValue(Windowed, value)``
    ordered by window start, then key bytes. Time bounds are inclusive window *starts*.
    """

    def fetch(self, *args: object) -> Any: ...

    def backward_fetch(self, *args: object) -> KeyValueIterator: ...

    def fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator: ...

    def backward_fetch_all(self, time_from: int, time_to: int) -> KeyValueIterator: ...

    def all(self) -> KeyValueIterator: ...

    def backward_all(self) -> KeyValueIterator: ...


class WindowStore(StateStore, ReadOnlyWindowStore, Protocol[K, V_contra]):
    """A read-write window store: ``put(key, value, window_start_timestamp)`` (``None`` deletes)."""

    def put(self, key: K, value: V_contra | None, window_start_timestamp: int) -> None: ...


class TimestampedWindowStore(WindowStore[K, ValueAndTimestamp], Protocol[K]):
    """A window store whose values are :class:`ValueAndTimestamp`."""


class ReadOnlySessionStore(Protocol):
    """The read half of a session store; results are ``KeyValue(Windowed(key, SessionWindow), value)``.

    ``find_sessions(key, earliest_session_end_time, latest_session_start_time)`` (or with a key
    range) returns the sessions with ``end >= earliest`` and ``start <= latest``.
    """

    def find_sessions(self, *args: object) -> KeyValueIterator: ...

    def backward_find_sessions(self, *args: object) -> KeyValueIterator: ...

    def fetch(self, *args: object) -> KeyValueIterator: ...

    def backward_fetch(self, *args: object) -> KeyValueIterator: ...

    def fetch_session(self, key: object, session_start: int, session_end: int) -> Any: ...


class SessionStore(StateStore, ReadOnlySessionStore, Protocol[V_contra]):
    """A read-write session store: ``put(Windowed(key, SessionWindow), aggregate)``; aggregates ``V``."""

    def put(self, session: Windowed, value: V_contra | None) -> None: ...

    def remove(self, session: object) -> None: ...


class StoreSupplier(Protocol):
    """Makes new inner (bytes -> bytes) stores of one name."""

    @property
    def name(self) -> str: ...

    def get(self) -> StateStore: ...

    def metrics_scope(self) -> str: ...


class StoreBuilder(Protocol):
    """Composes a store's wrapper stack; one ``build()`` per task."""

    @property
    def name(self) -> str: ...

    @property
    def logging_enabled(self) -> bool: ...

    @property
    def log_config(self) -> dict[str, str]: ...

    def with_caching_enabled(self) -> StoreBuilder: ...

    def with_caching_disabled(self) -> StoreBuilder: ...

    def with_logging_enabled(self, config: dict[str, str] | None = None) -> StoreBuilder: ...

    def with_logging_disabled(self) -> StoreBuilder: ...

    def build(self) -> StateStore: ...
