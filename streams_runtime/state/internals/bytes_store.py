"""The shared half of the inner (bytes -> bytes) key-value stores.

Owner: the state side. :class:`RocksDBStore` and :class:`InMemoryKeyValueStore` extend
:class:`AbstractBytesStore`, which owns the parts that do not depend on the storage engine:
argument checks, ``put_if_absent``, ``put_all``, ``delete`` and ``prefix_scan``. Its base,
:class:`AbstractInnerStore`, owns the open/closed state, tracking of open iterators and the
registration with the task's state manager; the inner window and session stores
(:mod:`.segmented_store`) extend it too.

Invariants:

* Keys are ``bytes`` and never ``None``; values are ``bytes`` or ``None`` (a delete).
* Every operation on a store that is not open raises :class:`InvalidStateStoreError`.
* :meth:`close` closes the iterators still open on the store.
* ``init`` registers the store with ``context.register(root, self.restore_batch,
  changelog_topic=None)``; a change-logging wrapper above fills in the changelog topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Self

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.state.internals.iterators import StoreIterator, prefix_upper_bound

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.state.interfaces import StateStore, StateStoreContext
    from streams_runtime.state.internals.wrapped_store import FlushListener

__all__ = [
    "AbstractBytesStore",
    "AbstractInnerStore",
    "RangeScans",
    "check_key",
    "check_value",
    "validate_retention",
]


def check_key(key: Any) -> bytes:
    """Return ``key`` as ``bytes`` (exactly: a subclass is copied); reject ``None`` and
    non-bytes keys."""
    if key is None:
        raise TypeError("key cannot be None")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)  # the key itself when it is bytes
    raise TypeError(f"inner stores take bytes keys, got {type(key).__name__}")


def validate_retention(name: str, retention_period_ms: int) -> int:
    """``retention_period_ms`` as an int; raise naming the store when it is negative."""
    if retention_period_ms < 0:
        raise ValueError(
            f"retention_period_ms of store {name!r} cannot be negative, got {retention_period_ms}"
        )
    return int(retention_period_ms)


def check_value(value: Any) -> bytes | None:
    """Return ``value`` as ``bytes`` (exactly: a subclass is copied) or ``None``; reject other
    types."""
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"inner stores take bytes values, got {type(value).__name__}")


class AbstractInnerStore:
    """The lifecycle of an inner store of any kind: open state, open iterators, registration.

    Subclasses implement ``_open_store``, ``_close_store`` and ``restore_batch``.

    :param name: the store name (also the changelog topic suffix and the directory name).
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._open = False
        self._iterators: set[StoreIterator] = set()
        self.context: Any = None

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The store name."""
        return self._name

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Open the store and register it with the task's state manager.

        :param context: the :class:`StateStoreContext` of the task.
        :param root: the outermost store of the stack (registered instead of this one).
        """
        self.context = context
        self._open_store(context)
        self._open = True
        context.register(root if root is not None else self, self.restore_batch, changelog_topic=None)

    def is_open(self) -> bool:
        """Whether the store is initialized and not closed."""
        return self._open

    def close(self) -> None:
        """Close open iterators, then the store; idempotent."""
        if not self._open:
            return
        for iterator in list(self._iterators):
            iterator.close()
        self._open = False
        self._close_store()

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool = False) -> bool:
        """Inner stores do not cache: nothing to listen to. Returns ``False``."""
        return False

    def inner(self) -> Self:
        """The innermost store of a stack: this store."""
        return self

    def _track(self, source: Iterable[Any]) -> StoreIterator:
        iterator: StoreIterator

        def forget() -> None:
            self._iterators.discard(iterator)

        iterator = StoreIterator(source, on_close=forget)
        self._iterators.add(iterator)
        return iterator

    def _check_open(self) -> None:
        if not self._open:
            raise InvalidStateStoreError(f"store {self._name} is not open")

    # -- engine hooks ------------------------------------------------------------------------

    @property
    def persistent(self) -> bool:
        """Whether the store keeps data across restarts (each kind says)."""
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def _open_store(self, context: StateStoreContext) -> None:
        raise NotImplementedError

    def _close_store(self) -> None:
        raise NotImplementedError

    def restore_batch(self, records: Iterable[tuple[Any, ...]], changelog_offset: int | None = None) -> None:
        raise NotImplementedError


class RangeScans:
    """``range``, ``reverse_range``, ``all`` and ``reverse_all`` of a key-value bytes store, each
    one call of the store's ``_range(from_key, to_key, reverse=...)``."""

    def _range(self, from_key: bytes | None, to_key: bytes | None, *, reverse: bool) -> StoreIterator:
        raise NotImplementedError

    def range(self, from_key: bytes | None = None, to_key: bytes | None = None) -> StoreIterator:
        """Entries with ``from_key <= key <= to_key`` in ascending order (``None`` = open)."""
        return self._range(from_key, to_key, reverse=False)

    def reverse_range(self, from_key: bytes | None = None, to_key: bytes | None = None) -> StoreIterator:
        """Entries with ``from_key <= key <= to_key`` in descending order."""
        return self._range(from_key, to_key, reverse=True)

    def all(self) -> StoreIterator:
        """Every entry in ascending key order."""
        return self._range(None, None, reverse=False)

    def reverse_all(self) -> StoreIterator:
        """Every entry in descending key order."""
        return self._range(None, None, reverse=True)


class AbstractBytesStore(RangeScans, AbstractInnerStore):
    """Engine-independent behaviour of an inner bytes store.

    Subclasses implement ``_open_store``, ``_close_store``, ``_get``, ``_put``, ``_write_all``,
    ``_scan`` and ``approximate_num_entries``.

    :param name: the store name (also the changelog topic suffix and the directory name).
    """

    persistent = False

    def flush(self) -> None:
        """Make written data durable (no-op for memory stores)."""
        self._check_open()

    # -- writes ------------------------------------------------------------------------------

    def put(self, key: bytes, value: bytes | None) -> None:
        """Write ``value`` under ``key``; ``None`` deletes the key."""
        if not self._open:
            self._check_open()
        if type(key) is not bytes:
            key = check_key(key)
        if value is not None and type(value) is not bytes:
            value = check_value(value)
        self._put(key, value)

    def put_if_absent(self, key: bytes, value: bytes | None) -> bytes | None:
        """Write only when ``key`` has no value; return the existing value (or ``None``)."""
        self._check_open()
        key = check_key(key)
        existing = self._get(key)
        if existing is None:
            self._put(key, check_value(value))
        return existing

    def put_all(self, entries: Sequence[tuple[bytes, bytes | None]]) -> None:
        """Write all ``(key, value)`` pairs as one batch."""
        self._check_open()
        self._write_all([(check_key(k), check_value(v)) for k, v in entries])

    def delete(self, key: bytes) -> bytes | None:
        """Delete ``key``; return the value it had (or ``None``)."""
        self._check_open()
        key = check_key(key)
        old = self._get(key)
        if old is not None:
            self._put(key, None)
        return old

    def restore_batch(
        self,
        records: Iterable[tuple[Any, ...]],
        changelog_offset: int | None = None,
    ) -> None:
        """Apply changelog records: ``(key, value_or_None)`` or ``(key, value, timestamp)``.

        Values must already be in the store's format (a timestamped stack converts them first,
        see :func:`streams_runtime.state.internals.timestamped.record_converter_for`).

        :param records: the records, in changelog order.
        :param changelog_offset: the offset of the last record (kept by persistent stores).
        """
        self._check_open()
        self._write_all([(check_key(r[0]), check_value(r[1])) for r in records], changelog_offset)

    def committed_offset(self) -> int | None:
        """The changelog offset stored with the data; ``None`` for memory stores."""
        return None

    # -- reads -------------------------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key``, or ``None``."""
        if not self._open:
            self._check_open()
        if type(key) is not bytes:
            key = check_key(key)
        return self._get(key)

    def prefix_scan(self, prefix: bytes, prefix_key_serde: Serde | None = None) -> StoreIterator:
        """Entries whose key starts with ``prefix``, ascending (the serde is unused here)."""
        self._check_open()
        prefix = check_key(prefix)
        return self._track(self._scan(prefix, prefix_upper_bound(prefix), False, False))

    def _range(self, from_key: bytes | None, to_key: bytes | None, *, reverse: bool) -> StoreIterator:
        self._check_open()
        lower = None if from_key is None else check_key(from_key)
        upper = None if to_key is None else check_key(to_key)
        if lower is not None and upper is not None and lower > upper:
            return StoreIterator(())
        return self._track(self._scan(lower, upper, True, reverse))

    # -- engine hooks ------------------------------------------------------------------------

    def _get(self, key: bytes) -> bytes | None:
        raise NotImplementedError

    def _put(self, key: bytes, value: bytes | None) -> None:
        raise NotImplementedError

    def _write_all(
        self, entries: list[tuple[bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None:
        raise NotImplementedError

    def _scan(
        self, lower: bytes | None, upper: bytes | None, upper_inclusive: bool, reverse: bool
    ) -> Iterable[tuple[bytes, bytes]]:
        raise NotImplementedError

    def approximate_num_entries(self) -> int:
        """An estimate of the number of keys (exact for memory stores)."""
        raise NotImplementedError
