"""The record cache: ThreadCache (byte-bounded, one per StreamThread) and NamedCache (one per store).

Owner: the StreamThread creates one :class:`ThreadCache` of ``statestore_cache_max_bytes`` and
hands it to every task it runs (``StateStoreContext.cache()``); each caching store of each task
owns one :class:`NamedCache` inside it, named ``"<task_id>-<store_name>"``. Used from the
owning thread only (no locks).

What the cache does (Kafka Streams' semantics):

* Writes are kept as *dirty* entries together with the record context they were written under;
  a later write of the same key replaces the entry, so consecutive updates of a key collapse
  into one. A delete is a dirty entry whose value is ``None`` (a cached tombstone).
* Reads of keys missing from the cache may add *clean* entries (copies of the store's value).
* Dirty keys are flushed in the order they were last written. :meth:`ThreadCache.flush` hands
  every dirty entry of one store to that store's listener (the caching store, which writes them
  to the store below and forwards them); entries become clean and cached tombstones are dropped.
* Eviction: after each put, while the whole ThreadCache holds more than ``max_bytes``, the least
  recently used entry *of the store that was written* is removed; if it was dirty, all dirty
  entries of that store are flushed, the evicted one first.

Byte accounting, per entry: ``len(key) + len(value) + len(topic) + header bytes`` plus
:data:`ENTRY_OVERHEAD_BYTES` (dirty flag, LRU links, timestamp, offset, partition). It is an
estimate of the memory held, used consistently for the bound; ``size_bytes()`` is exact with
respect to it.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from streams_runtime.errors import StreamsError
from streams_runtime.state.internals.iterators import key_slice

__all__ = ["ENTRY_OVERHEAD_BYTES", "DirtyEntry", "LRUCacheEntry", "NamedCache", "ThreadCache"]

# 1 dirty flag + 3 x 8 LRU node links + 8 timestamp + 8 offset + 4 partition
ENTRY_OVERHEAD_BYTES = 1 + 24 + 8 + 8 + 4


def _headers_size(headers: Mapping[str, bytes | None] | Iterable[object]) -> int:
    if not headers:
        return 0
    items = headers.items() if hasattr(headers, "items") else headers
    total = 0
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            name, value = item
            total += len(name) + (len(value) if value is not None else 0)
    return total


@dataclass(slots=True)
class LRUCacheEntry:
    """A cached value with the record context of the write that produced it.

    :param value: the serialized value, ``None`` for a cached delete.
    :param is_dirty: not yet written to the store below.
    :param record_context: the runtime's record context of the write (``None`` for clean reads).
    """

    value: bytes | None
    is_dirty: bool = False
    record_context: Any = None
    # The size charged for this entry (key included) while it is held by a NamedCache; set by
    # NamedCache.put, so an overwrite or a delete never recomputes it.
    charged: int = field(default=0, init=False, repr=False, compare=False)

    def size_bytes(self) -> int:
        """Estimated memory of the value and its context (key excluded)."""
        value = self.value
        size = ENTRY_OVERHEAD_BYTES if value is None else ENTRY_OVERHEAD_BYTES + len(value)
        context = self.record_context
        if context is not None:
            topic = getattr(context, "topic", None)
            if topic:
                size += len(topic)
            headers = getattr(context, "headers", None)
            if headers:
                size += _headers_size(headers)
        return size

    @property
    def timestamp(self) -> int | None:
        """The timestamp of the record that wrote the entry (``None`` when unknown)."""
        return getattr(self.record_context, "timestamp", None)


class DirtyEntry(NamedTuple):
    """One dirty entry handed to a flush listener (immutable; a named tuple because a flush
    builds one per dirty key, and a tuple is the cheapest immutable record to build)."""

    key: bytes
    new_value: bytes | None
    entry: LRUCacheEntry


# Builds a DirtyEntry from a ready (key, new_value, entry) tuple without the keyword-argument
# handling of DirtyEntry(...): the flush loop's constructor.
_new_dirty_entry = tuple.__new__


DirtyEntryFlushListener = Callable[[list[DirtyEntry]], None]


class NamedCache:
    """The entries of one store inside a :class:`ThreadCache`.

    Invariants: ``_lru`` holds every entry, least recently used first; ``_keys`` is the sorted
    list of the same keys; ``_dirty`` holds the dirty keys in last-write order;
    ``_size_bytes`` is the sum of :func:`_node_size` over ``_lru``, each entry's size computed
    once, when it is put, and kept in its ``charged`` field; every change of ``_size_bytes`` is
    applied to the owning :class:`ThreadCache`'s total too, so the bound check after a put is
    O(1) however many stores share the cache.

    :param name: ``"<task_id>-<store_name>"``.
    """

    def __init__(self, name: str, owner: ThreadCache | None = None) -> None:
        self.name = name
        # The ThreadCache whose byte total this cache's size changes are added to.
        self._owner = owner
        self._lru: OrderedDict[bytes, LRUCacheEntry] = OrderedDict()
        self._keys: list[bytes] = []
        self._dirty: dict[bytes, None] = {}
        self._size_bytes = 0
        self.listener: DirtyEntryFlushListener | None = None
        self.hits = self.misses = self.overwrites = self.flushes = 0

    def __len__(self) -> int:
        return len(self._lru)

    def size_bytes(self) -> int:
        """The estimated bytes held by this cache."""
        return self._size_bytes

    def dirty_keys(self) -> list[bytes]:
        """The dirty keys in flush order."""
        return list(self._dirty)

    def hit_ratio(self) -> float:
        """Hits / lookups so far (0.0 before the first lookup)."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0

    def get(self, key: bytes) -> LRUCacheEntry | None:
        """The entry of ``key`` (marks it most recently used), or ``None``."""
        entry = self._lru.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._lru.move_to_end(key)
        return entry

    def peek(self, key: bytes) -> LRUCacheEntry | None:
        """The entry of ``key`` without touching LRU order or statistics."""
        return self._lru.get(key)

    def put(self, key: bytes, entry: LRUCacheEntry) -> None:
        """Add or replace the entry of ``key`` and mark it most recently used."""
        if not entry.is_dirty and key in self._dirty:
            raise StreamsError(f"cannot put a clean entry into cache {self.name}: the key has a dirty entry")
        lru = self._lru
        old = lru.get(key)
        size = len(key) + entry.size_bytes()  # _node_size(key, entry)
        if old is not None:
            self.overwrites += 1
            delta = size - old.charged
            lru.move_to_end(key)
        else:
            bisect.insort(self._keys, key)
            delta = size
        entry.charged = size
        lru[key] = entry
        self._size_bytes += delta
        if self._owner is not None:
            self._owner.charge(delta)
        if entry.is_dirty:
            dirty = self._dirty
            if key in dirty:
                del dirty[key]
            dirty[key] = None

    def delete(self, key: bytes) -> LRUCacheEntry | None:
        """Remove ``key`` from the cache without flushing it; return its entry."""
        entry = self._lru.pop(key, None)
        if entry is None:
            return None
        del self._keys[bisect.bisect_left(self._keys, key)]
        self._dirty.pop(key, None)
        self._size_bytes -= entry.charged
        if self._owner is not None:
            self._owner.charge(-entry.charged)
        return entry

    def evict(self) -> None:
        """Remove the least recently used entry; if dirty, flush it and every other dirty one."""
        if not self._lru:
            return
        key, entry = next(iter(self._lru.items()))
        self.delete(key)
        if entry.is_dirty:
            self._flush(DirtyEntry(key, entry.value, entry))

    def flush(self) -> None:
        """Hand every dirty entry to the listener, in last-write order."""
        self._flush(None)

    def _flush(self, evicted: DirtyEntry | None) -> None:
        self.flushes += 1
        if self.listener is None:
            raise StreamsError(f"no flush listener registered for cache {self.name}")
        dirty = self._dirty
        if evicted is None and not dirty:
            return
        # Step 1: collect the dirty entries (the evicted one first) and mark them clean.
        entries = [] if evicted is None else [evicted]
        append = entries.append
        lru = self._lru
        new_entry = _new_dirty_entry
        tombstones: list[tuple[bytes, LRUCacheEntry]] = []
        for key in dirty:
            entry = lru[key]
            value = entry.value
            append(new_entry(DirtyEntry, (key, value, entry)))
            entry.is_dirty = False
            if value is None:
                tombstones.append((key, entry))
        # Step 2: clear the dirty set before calling the listener, which may write again.
        dirty.clear()
        self.listener(entries)
        # Step 3: drop flushed tombstones, unless the listener wrote the key again meanwhile.
        for key, entry in tombstones:
            if self._lru.get(key) is entry and not entry.is_dirty:
                self.delete(key)

    def keys_between(
        self, lower: bytes | None, upper: bytes | None, *, upper_inclusive: bool = True
    ) -> list[bytes]:
        """A snapshot of the sorted keys within the bounds (``None`` = open)."""
        return key_slice(self._keys, lower, upper, upper_inclusive)

    def close(self) -> None:
        """Drop every entry (dirty ones included) and the listener."""
        self._lru.clear()
        self._keys.clear()
        self._dirty.clear()
        if self._owner is not None:
            self._owner.charge(-self._size_bytes)
        self._size_bytes = 0
        self.listener = None


def _node_size(key: bytes, entry: LRUCacheEntry) -> int:
    return len(key) + entry.size_bytes()


class ThreadCache:
    """A byte-bounded record cache shared by the caching stores of one thread's tasks.

    :param max_bytes: the bound on :meth:`size_bytes` after every put (0 = flush on every write).
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self._max_bytes = max_bytes
        self._caches: dict[str, NamedCache] = {}
        # The sum of the named caches' sizes, kept up to date by the named caches themselves.
        self._size_bytes = 0
        self.puts = self.gets = self.evicts = self.flushes = 0

    @staticmethod
    def namespace(task_id: object, store_name: str) -> str:
        """The name of a store's cache: ``"<task_id>-<store_name>"``."""
        return f"{task_id}-{store_name}"

    @property
    def max_bytes(self) -> int:
        """The byte bound."""
        return self._max_bytes

    def add_dirty_entry_flush_listener(self, namespace: str, listener: DirtyEntryFlushListener) -> None:
        """Set the listener that receives the dirty entries of ``namespace`` on flush/eviction."""
        self._named(namespace).listener = listener

    def get(self, namespace: str, key: bytes) -> LRUCacheEntry | None:
        """The entry of ``key`` in ``namespace`` (marks it most recently used), or ``None``."""
        self.gets += 1
        cache = self._caches.get(namespace)
        return None if cache is None else cache.get(key)

    def put(self, namespace: str, key: bytes, entry: LRUCacheEntry) -> None:
        """Add or replace an entry, then evict from ``namespace`` while over the bound."""
        self.puts += 1
        cache = self._caches.get(namespace)
        if cache is None:
            cache = self._named(namespace)
        cache.put(key, entry)
        if self._size_bytes > self._max_bytes:
            self._maybe_evict(namespace)

    def put_if_absent(self, namespace: str, key: bytes, entry: LRUCacheEntry) -> LRUCacheEntry | None:
        """Put only when ``key`` is not cached; return the cached entry (or ``None``)."""
        existing = self.get(namespace, key)
        if existing is None:
            self.put(namespace, key, entry)
        return existing

    def put_all(self, namespace: str, entries: list[tuple[bytes, LRUCacheEntry]]) -> None:
        """Put each ``(key, entry)`` in order."""
        for key, entry in entries:
            self.put(namespace, key, entry)

    def delete(self, namespace: str, key: bytes) -> LRUCacheEntry | None:
        """Remove ``key`` from ``namespace`` without flushing; return its entry."""
        cache = self._caches.get(namespace)
        return None if cache is None else cache.delete(key)

    def range(
        self,
        namespace: str,
        lower: bytes | None,
        upper: bytes | None,
        *,
        reverse: bool = False,
        upper_inclusive: bool = True,
    ) -> Iterator[tuple[bytes, bytes | None]]:
        """``(key, value_or_None)`` of the cached keys within the bounds, in key order.

        The keys are snapshotted now; values are read lazily and keys removed meanwhile are
        skipped. ``None`` values are cached deletes (the caller hides the store's entry).
        """
        cache = self._caches.get(namespace)
        if cache is None:
            return iter(())
        keys = cache.keys_between(lower, upper, upper_inclusive=upper_inclusive)
        if reverse:
            keys.reverse()
        return _lazy_entries(cache, keys)

    def flush(self, namespace: str) -> None:
        """Flush the dirty entries of ``namespace`` to its listener."""
        self.flushes += 1
        cache = self._caches.get(namespace)
        if cache is not None:
            cache.flush()

    def close(self, namespace: str) -> None:
        """Forget ``namespace`` and its entries (flush it first if they matter)."""
        cache = self._caches.pop(namespace, None)
        if cache is not None:
            cache.close()

    def named_cache(self, namespace: str) -> NamedCache | None:
        """The cache of ``namespace`` (for metrics and tests), or ``None``."""
        return self._caches.get(namespace)

    def size(self) -> int:
        """The number of cached entries over all stores."""
        return sum(len(cache) for cache in self._caches.values())

    def size_bytes(self) -> int:
        """The estimated bytes held over all stores."""
        return self._size_bytes

    def charge(self, delta: int) -> None:
        """Add ``delta`` bytes (negative to release) to the running total; called by the named caches."""
        self._size_bytes += delta

    def resize(self, max_bytes: int) -> None:
        """Change the bound; when shrinking, evict round-robin over the stores until within it."""
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self._max_bytes = max_bytes
        while self.size_bytes() > self._max_bytes:
            non_empty = [cache for cache in self._caches.values() if len(cache)]
            if not non_empty:
                return
            for cache in non_empty:
                cache.evict()
                self.evicts += 1
                if self.size_bytes() <= self._max_bytes:
                    return

    def _named(self, namespace: str) -> NamedCache:
        cache = self._caches.get(namespace)
        if cache is None:
            cache = self._caches[namespace] = NamedCache(namespace, self)
        return cache

    def _maybe_evict(self, namespace: str) -> None:
        cache = self._named(namespace)
        while self.size_bytes() > self._max_bytes:
            # A flush of this store may have written to another store's cache; once this
            # store's cache is empty there is nothing more this put may evict.
            if not len(cache):
                return
            cache.evict()
            self.evicts += 1


def _lazy_entries(cache: NamedCache, keys: list[bytes]) -> Iterator[tuple[bytes, bytes | None]]:
    for key in keys:
        entry = cache.peek(key)
        if entry is not None:
            yield key, entry.value
