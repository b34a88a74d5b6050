"""CachingWindowStore / CachingSessionStore: the record cache in front of window/session stores.

Owner: the state side; one instance per task and store. Same cache, same semantics as
:class:`~.caching_store.CachingKeyValueStore` (read it first): writes become dirty entries of
the store's NamedCache ``"<task_id>-<store_name>"``; consecutive writes of one window (or
session) collapse; on flush or eviction each dirty entry, in last-write order,

1. reads the old value from the store below, if old values are sent or the new value is a delete;
2. is skipped when old and new are both ``None``;
3. sets the record context it was written under;
4. is written to the store below (the change-logging layer logs it);
5. is handed to the flush listener as ``(Windowed(key_bytes, window), new, old, timestamp)``;
6. restores the previous record context.

Cache keys use the stores' ordered layout (:mod:`.key_schemas`), so one key's windows are one
contiguous cache range. Reads merge the cache and the store below in the store's order, the
cache winning on equal windows and its deletes hiding the store's entries.
Window stores that retain duplicates are never cached (the builder leaves caching out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from streams_runtime.state.interfaces import KeyValue
from streams_runtime.state.internals.bytes_store import check_key, check_value
from streams_runtime.state.internals.caching_store import CacheMembership
from streams_runtime.state.internals.iterators import StoreIterator, merge_sorted
from streams_runtime.state.internals.key_schemas import (
    MAX_TIME,
    MIN_TIMESTAMP,
    decode_ordered_session_key,
    decode_ordered_window_key,
    ordered_session_key,
    ordered_window_key,
)
from streams_runtime.state.internals.record_cache import DirtyEntry, LRUCacheEntry
from streams_runtime.state.internals.wrapped_window_store import WrappedSessionStore, WrappedWindowStore
from streams_runtime.windowed import SessionWindow, Windowed, time_window_for_size

__all__ = ["CachingSessionStore", "CachingWindowStore", "merge_ordered"]

_Item = tuple[Any, Any, Any]  # (order key, result key, value or None for a cached delete)


def merge_ordered(cached: Iterator[_Item], stored: Iterator[_Item], *, reverse: bool) -> Iterator[KeyValue]:
    """Merge two streams sorted by their order keys; the cache wins ties, its ``None`` hides
    (:func:`~.iterators.merge_sorted` over ``(order key, (key, value))`` pairs)."""
    merged = merge_sorted(
        ((order, None if value is None else (key, value)) for order, key, value in cached),
        ((order, (key, value)) for order, key, value in stored),
        reverse=reverse,
    )
    return (KeyValue(*entry) for _, entry in merged)


class _CachingLayer(CacheMembership):
    """The flush steps and cache reads shared by the window and session caching stores."""

    # supplied by each store kind
    def _windowed_of(self, cache_key: bytes) -> Windowed:
        raise NotImplementedError

    def _stored_value(self, windowed: Windowed) -> bytes | None:
        raise NotImplementedError

    def _write_below(self, windowed: Windowed, value: bytes | None) -> None:
        raise NotImplementedError

    def _flush_entries(self, entries: list[DirtyEntry]) -> None:
        for entry in entries:
            windowed = self._windowed_of(entry.key)
            new_value = entry.new_value
            listener = getattr(self, "_listener", None)
            # Step 1
            old_value = None
            if listener is not None and (new_value is None or self._send_old_values):
                old_value = self._stored_value(windowed)
            # Step 2
            if listener is not None and new_value is None and old_value is None:
                continue
            current = self.context.record_context()
            # Step 3
            self.context.set_record_context(entry.entry.record_context)
            try:
                # Step 4
                self._write_below(windowed, new_value)
                # Step 5
                if listener is not None:
                    old = old_value if self._send_old_values else None
                    listener(windowed, new_value, old, entry.entry.timestamp)
            finally:
                # Step 6
                self.context.set_record_context(current)

    def _put_dirty(self, cache_key: bytes, value: bytes | None) -> None:
        cache = self._open_cache()
        entry = LRUCacheEntry(check_value(value), is_dirty=True, record_context=self.context.record_context())
        cache.put(self._namespace, cache_key, entry)

    def _cached_value(self, cache_key: bytes) -> tuple[bool, bytes | None]:
        entry = self._open_cache().get(self._namespace, cache_key)
        return (False, None) if entry is None else (True, entry.value)

    def _cached_range(
        self,
        lower: bytes | None,
        upper: bytes | None,
        keep: Callable[[Windowed], bool],
        order: Callable[[Windowed], Any],
    ) -> list[_Item]:
        items = []
        for cache_key, value in self._open_cache().range(self._namespace, lower, upper):
            windowed = self._windowed_of(cache_key)
            if keep(windowed):
                items.append((order(windowed), windowed, value))
        items.sort(key=lambda item: item[0])
        return items

    def _merged(
        self, cached: list[_Item], below: StoreIterator, order: Callable[[Any], Any], reverse: bool
    ) -> StoreIterator:
        if reverse:
            cached.reverse()
        stored = ((order(kv.key), kv.key, kv.value) for kv in below)
        merged = merge_ordered(iter(cached), stored, reverse=reverse)
        return StoreIterator(merged, on_close=below.close, upstream=below)


class CachingWindowStore(_CachingLayer, WrappedWindowStore):
    """A window bytes store with a write-back record cache in front."""

    def _windowed_of(self, cache_key: bytes) -> Windowed:
        key, start, _ = decode_ordered_window_key(cache_key)
        return Windowed(key, time_window_for_size(start, self.wrapped.window_size_ms))

    def _stored_value(self, windowed: Windowed) -> bytes | None:
        result: bytes | None = self.wrapped.fetch(windowed.key, windowed.window.start)
        return result

    def _write_below(self, windowed: Windowed, value: bytes | None) -> None:
        self.wrapped.put(windowed.key, value, windowed.window.start)

    def put(self, key: bytes, value: bytes | None, window_start_timestamp: int) -> None:
        """Cache the write as a dirty entry (``None`` = cached delete)."""
        self._put_dirty(ordered_window_key(check_key(key), int(window_start_timestamp)), value)

    def fetch(self, *args: Any) -> Any:
        self._open_cache()
        if len(args) == 2:
            key, start = check_key(args[0]), int(args[1])
            found, value = self._cached_value(ordered_window_key(key, start))
            return value if found else self.wrapped.fetch(key, start)
        if len(args) == 3:
            return self._fetch_key(*args, reverse=False)
        if len(args) == 4:
            return self._fetch_range(*args, reverse=False)
        raise TypeError(f"fetch takes 2, 3 or 4 arguments, got {len(args)}")

    def backward_fetch(self, *args: Any) -> StoreIterator:
        self._open_cache()
        if len(args) == 3:
            return self._fetch_key(*args, reverse=True)
        if len(args) == 4:
            return self._fetch_range(*args, reverse=True)
        raise TypeError(f"backward_fetch takes 3 or 4 arguments, got {len(args)}")

    def _fetch_key(self, key: bytes, time_from: int, time_to: int, *, reverse: bool) -> StoreIterator:
        key = check_key(key)
        below = (
            self.wrapped.backward_fetch(key, time_from, time_to)
            if reverse
            else self.wrapped.fetch(key, time_from, time_to)
        )
        if time_from > time_to:
            result: StoreIterator = below
            return result
        lower, upper = ordered_window_key(key, time_from), ordered_window_key(key, min(time_to, MAX_TIME))
        cached = [
            (w.window.start, w.window.start, v)
            for _, w, v in self._cached_range(lower, upper, _always, _start)
        ]
        return self._merged(cached, below, lambda start: start, reverse)

    def _fetch_range(
        self, key_from: object, key_to: object, time_from: int, time_to: int, *, reverse: bool
    ) -> StoreIterator:
        args = (key_from, key_to, time_from, time_to)
        below = self.wrapped.backward_fetch(*args) if reverse else self.wrapped.fetch(*args)

        def keep(w: Windowed) -> bool:
            return bool(
                (key_from is None or w.key >= key_from)
                and (key_to is None or w.key <= key_to)
                and (time_from <= w.window.start <= time_to)
            )

        return self._merged(self._cached_range(None, None, keep, _start_key), below, _start_key, reverse)

    def fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        return self._all(time_from, time_to, False)

    def backward_fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        return self._all(time_from, time_to, True)

    def all(self) -> StoreIterator:
        return self._all(MIN_TIMESTAMP, MAX_TIME, False)

    def backward_all(self) -> StoreIterator:
        return self._all(MIN_TIMESTAMP, MAX_TIME, True)

    def _all(self, time_from: int, time_to: int, reverse: bool) -> StoreIterator:
        self._open_cache()
        below = (
            self.wrapped.backward_fetch_all(time_from, time_to)
            if reverse
            else self.wrapped.fetch_all(time_from, time_to)
        )
        live_from = max(time_from, self.wrapped.inner().min_live_time())

        def keep(w: Windowed) -> bool:
            result: bool = live_from <= w.window.start <= time_to
            return result

        return self._merged(self._cached_range(None, None, keep, _start_key), below, _start_key, reverse)


class CachingSessionStore(_CachingLayer, WrappedSessionStore):
    """A session bytes store with a write-back record cache in front."""

    def _windowed_of(self, cache_key: bytes) -> Windowed:
        key, start, end = decode_ordered_session_key(cache_key)
        return Windowed(key, SessionWindow(start, end))

    def _stored_value(self, windowed: Windowed) -> bytes | None:
        result: bytes | None = self.wrapped.fetch_session(
            windowed.key, windowed.window.start, windowed.window.end
        )
        return result

    def _write_below(self, windowed: Windowed, value: bytes | None) -> None:
        self.wrapped.put(windowed, value)

    def put(self, session: Windowed, value: bytes | None) -> None:
        """Cache the write as a dirty entry (``None`` = cached delete)."""
        self._put_dirty(
            ordered_session_key(check_key(session.key), session.window.start, session.window.end), value
        )

    def fetch_session(self, key: bytes, session_start: int, session_end: int) -> bytes | None:
        self._open_cache()
        key = check_key(key)
        found, value = self._cached_value(ordered_session_key(key, session_start, session_end))
        return value if found else self.wrapped.fetch_session(key, session_start, session_end)

    def find_sessions(self, *args: object) -> StoreIterator:
        return self._find(args, reverse=False)

    def backward_find_sessions(self, *args: object) -> StoreIterator:
        return self._find(args, reverse=True)

    def fetch(self, *args: object) -> StoreIterator:
        return self._find((*args, MIN_TIMESTAMP, MAX_TIME), reverse=False)

    def backward_fetch(self, *args: object) -> StoreIterator:
        return self._find((*args, MIN_TIMESTAMP, MAX_TIME), reverse=True)

    def _find(self, args: tuple[Any, ...], *, reverse: bool) -> StoreIterator:
        self._open_cache()
        below = self.wrapped.backward_find_sessions(*args) if reverse else self.wrapped.find_sessions(*args)
        # The cached sessions are not bounded by the store's retention (the store below is): a
        # session still in the cache is found, and merged with, after it expired below -- as
        # Kafka Streams' caching session store does.
        earliest_end, latest_start = args[-2], args[-1]
        if len(args) == 3:
            key = check_key(args[0])

            def keep_one(w: Windowed) -> bool:
                result: bool = w.window.end >= earliest_end and w.window.start <= latest_start
                return result

            lower, upper = (
                ordered_session_key(key, MIN_TIMESTAMP, max(earliest_end, MIN_TIMESTAMP)),
                ordered_session_key(key, MAX_TIME, MAX_TIME),
            )
            cached = self._cached_range(lower, upper, keep_one, _end_start)
            return self._merged(cached, below, _end_start, reverse)
        key_from, key_to = args[0], args[1]

        def keep(w: Windowed) -> bool:
            return bool(
                (key_from is None or w.key >= key_from)
                and (key_to is None or w.key <= key_to)
                and w.window.end >= earliest_end
                and w.window.start <= latest_start
            )

        return self._merged(
            self._cached_range(None, None, keep, _end_key_start), below, _end_key_start, reverse
        )


def _always(_: Windowed) -> bool:
    return True


def _start(w: Windowed) -> int:
    return w.window.start


def _start_key(w: Windowed) -> tuple[int, bytes]:
    return (w.window.start, w.key)


def _end_start(w: Windowed) -> tuple[int, int]:
    return (w.window.end, w.window.start)


def _end_key_start(w: Windowed) -> tuple[int, bytes, int]:
    return (w.window.end, w.key, w.window.start)
