"""CachingKeyValueStore: puts the record cache in front of a bytes store.

Owner: the state side; one instance per task and store. The cache it writes into is the
thread's :class:`ThreadCache` (``context.cache()``), shared with the other caching stores of
the thread's tasks; this store owns the :class:`NamedCache` ``"<task_id>-<store_name>"``.
When the context has no cache (``statestore_cache_max_bytes`` = 0) the store uses a private
zero-byte cache: every write is flushed at once, so the downstream sees every update.

Reads see the cache first: a cached value or a cached delete (tombstone) answers ``get``;
scans merge the cache and the store below, the cache winning on equal keys and its
tombstones hiding the store's entries.

Flushing one dirty entry (on ``flush()``, at commit, or on eviction), for each entry in
last-write order:

1. read the old value from the store below, only if old values are sent or the new value is a
   delete;
2. skip the entry when both old and new are ``None`` (a delete of a key that never reached the
   store: nothing to write, nothing to forward);
3. set the runtime's record context to the one the entry was written under;
4. write the entry to the store below (the change-logging layer logs it with that timestamp);
5. call the flush listener with ``(key, new_value, old_value, timestamp)`` (``old_value`` is
   ``None`` unless ``send_old_values``);
6. restore the previous record context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.state.internals.bytes_store import RangeScans, check_key, check_value
from streams_runtime.state.internals.iterators import StoreIterator, merge_sorted, prefix_upper_bound
from streams_runtime.state.internals.record_cache import DirtyEntry, LRUCacheEntry, ThreadCache
from streams_runtime.state.internals.wrapped_store import FlushListener, WrappedKeyValueStore

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.state.interfaces import StateStore, StateStoreContext

__all__ = ["CacheFlushListener", "CacheMembership", "CachingKeyValueStore"]

# listener(key_bytes, new_value_bytes, old_value_bytes, timestamp)
CacheFlushListener = FlushListener


class CacheMembership:
    """A caching layer's membership of the thread's record cache, the same for every store kind:
    join it at ``init`` under ``"<task_id>-<store_name>"`` (a private zero-byte cache when the
    context has none), keep the flush listener, flush this store's entries, leave it at ``close``.
    Each kind supplies ``_flush_entries`` (how a dirty entry reaches the store below)."""

    wrapped: Any
    name: str
    context: Any = None
    _cache: ThreadCache | None = None
    _namespace = ""
    _listener: CacheFlushListener | None = None
    _send_old_values = False

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Join the thread's cache, then init the layers below."""
        self.context = context
        cache = context.cache()
        self._cache = cache if cache is not None else ThreadCache(0)
        self._namespace = ThreadCache.namespace(context.task_id, self.name)
        self._cache.add_dirty_entry_flush_listener(self._namespace, self._flush_entries)
        self.wrapped.init(context, root if root is not None else self)

    def _flush_entries(self, entries: list[DirtyEntry]) -> None:
        raise NotImplementedError

    def set_flush_listener(self, listener: CacheFlushListener, send_old_values: bool = False) -> bool:
        """Call ``listener(key, new, old, timestamp)`` (bytes) for each flushed entry. ``True``."""
        self._listener = listener
        self._send_old_values = send_old_values
        return True

    @property
    def cache(self) -> ThreadCache | None:
        """The record cache this store writes into."""
        return self._cache

    @property
    def namespace(self) -> str:
        """This store's name inside the record cache."""
        return self._namespace

    def _open_cache(self) -> ThreadCache:
        """The record cache, once this store is open.

        :raises InvalidStateStoreError: before ``init`` or after ``close``.
        """
        cache = self._cache
        if cache is None or not self.wrapped.is_open():
            raise InvalidStateStoreError(f"store {self.name} is not open")
        return cache

    def flush(self) -> None:
        """Flush this store's dirty entries downwards, then flush the layers below."""
        self._open_cache().flush(self._namespace)
        self.wrapped.flush()

    def close(self) -> None:
        """Flush, then close the layers below and drop this store's cache."""
        if not self.wrapped.is_open():
            return
        cache = self._open_cache()
        try:
            self.flush()
        finally:
            try:
                self.wrapped.close()
            finally:
                cache.close(self._namespace)


class CachingKeyValueStore(RangeScans, CacheMembership, WrappedKeyValueStore):
    """A bytes store with a write-back record cache in front.

    :param wrapped: the store below (change logging or the inner store).
    """

    # -- flushing ----------------------------------------------------------------------------

    def _flush_entries(self, entries: list[DirtyEntry]) -> None:
        # Steps 3 and 6 once per batch: each entry sets its own record context before it is
        # written and forwarded, so restoring the previous one between entries is unobservable;
        # it is restored after the last entry (or the first failure).
        context = self.context
        current = context.record_context()
        set_record_context = context.set_record_context
        wrapped = self.wrapped
        listener = self._listener
        send_old_values = self._send_old_values
        try:
            for key, new_value, cached in entries:
                # Step 1
                old_value = None
                if listener is not None and (new_value is None or send_old_values):
                    old_value = wrapped.get(key)
                    # Step 2
                    if new_value is None and old_value is None:
                        continue
                # Step 3
                record_context = cached.record_context
                set_record_context(record_context)
                # Step 4
                wrapped.put(key, new_value)
                # Step 5 (the timestamp is LRUCacheEntry.timestamp)
                if listener is not None:
                    listener(
                        key,
                        new_value,
                        old_value if send_old_values else None,
                        getattr(record_context, "timestamp", None),
                    )
        finally:
            set_record_context(current)

    # -- reads -------------------------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """The cached value (or cached delete), else the store's value (then cached clean)."""
        cache = self._cache
        if cache is None or not self.wrapped.is_open():
            cache = self._open_cache()  # raises
        if type(key) is not bytes:
            key = check_key(key)
        return self._get(cache, key)

    def _get(self, cache: ThreadCache, key: bytes) -> bytes | None:
        entry = cache.get(self._namespace, key)
        if entry is not None:
            return entry.value
        raw: bytes | None = self.wrapped.get(key)
        if raw is not None:
            cache.put(self._namespace, key, LRUCacheEntry(raw))
        return raw

    def prefix_scan(self, prefix: bytes, prefix_key_serde: Serde | None = None) -> StoreIterator:
        cache = self._open_cache()
        prefix = check_key(prefix)
        store_iterator = self.wrapped.prefix_scan(prefix, prefix_key_serde)
        cached = cache.range(self._namespace, prefix, prefix_upper_bound(prefix), upper_inclusive=False)
        return StoreIterator(merge_sorted(cached, store_iterator), on_close=store_iterator.close)

    def _range(self, from_key: bytes | None, to_key: bytes | None, *, reverse: bool) -> StoreIterator:
        cache = self._open_cache()
        lower = None if from_key is None else check_key(from_key)
        upper = None if to_key is None else check_key(to_key)
        if lower is not None and upper is not None and lower > upper:
            return StoreIterator(())
        if reverse:
            store_iterator = self.wrapped.reverse_range(lower, upper)
        else:
            store_iterator = self.wrapped.range(lower, upper)
        cached = cache.range(self._namespace, lower, upper, reverse=reverse)
        merged = merge_sorted(cached, store_iterator, reverse=reverse)
        return StoreIterator(merged, on_close=store_iterator.close)

    # -- writes ------------------------------------------------------------------------------

    def put(self, key: bytes, value: bytes | None) -> None:
        """Cache the write as a dirty entry (``None`` = cached delete)."""
        # _open_cache, the checks and _put in one frame (the hot path of a cached store)
        cache = self._cache
        if cache is None or not self.wrapped.is_open():
            cache = self._open_cache()  # raises
        if type(key) is not bytes:
            key = check_key(key)
        if value is not None and type(value) is not bytes:
            value = check_value(value)
        cache.put(self._namespace, key, LRUCacheEntry(value, True, self.context.record_context()))

    def _put(self, cache: ThreadCache, key: bytes, value: bytes | None) -> None:
        cache.put(self._namespace, key, LRUCacheEntry(value, True, self.context.record_context()))

    def put_if_absent(self, key: bytes, value: bytes | None) -> bytes | None:
        cache = self._open_cache()
        key = check_key(key)
        existing = self._get(cache, key)
        if existing is None:
            self._put(cache, key, check_value(value))
        return existing

    def put_all(self, entries: Sequence[tuple[bytes, bytes | None]]) -> None:
        cache = self._open_cache()
        for key, value in entries:
            self._put(cache, check_key(key), check_value(value))

    def delete(self, key: bytes) -> bytes | None:
        """Cache a delete; return the value the key had (cache first, then store)."""
        cache = self._open_cache()
        key = check_key(key)
        existing = self._get(cache, key)
        self._put(cache, key, None)
        return existing
