"""Store iterators: a closeable, peekable :class:`KeyValue` iterator and the helpers around it.

Owner: the state side; used by every store in this package.

Invariants:

* :class:`StoreIterator` yields :class:`KeyValue`; after :meth:`StoreIterator.close` it raises
  :class:`InvalidStateStoreError` instead of yielding, and its ``on_close`` hook ran exactly once.
* :func:`merge_sorted` gives the cache precedence over the store on equal keys, and a cached
  tombstone (value ``None``) hides the store's entry for that key.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.state.interfaces import KeyValue

__all__ = [
    "StoreIterator",
    "empty_iterator",
    "in_bounds",
    "merge_sorted",
    "prefix_upper_bound",
]


class _End(enum.Enum):
    """The sentinel ``next(source, _EXHAUSTED)`` returns at the end of the source."""

    EXHAUSTED = enum.auto()


_EXHAUSTED: Final = _End.EXHAUSTED


class StoreIterator:
    """A peekable iterator of :class:`KeyValue` that must be closed.

    :param source: an iterable of ``(key, value)`` pairs.
    :param on_close: called once when the iterator is closed (releases the store's resources).
    :param upstream: the store iterator ``source`` reads from, if any: once it is closed (its
        store was closed), this iterator reports no more entries either.
    """

    def __init__(
        self,
        source: Iterable[tuple[Any, Any]],
        on_close: Callable[[], None] | None = None,
        upstream: StoreIterator | None = None,
    ) -> None:
        self._source = iter(source)
        self._on_close = on_close
        self._upstream = upstream
        self._peeked: Any = None
        self._has_peeked = False
        self._closed = False

    def __iter__(self) -> StoreIterator:
        return self

    def _advance(self) -> tuple[Any, Any] | _End:
        if self._closed:
            raise InvalidStateStoreError("the store iterator is closed")
        if self._has_peeked:
            self._has_peeked = False
            item: tuple[Any, Any] | _End = self._peeked
            self._peeked = None
            return item
        return next(self._source, _EXHAUSTED)

    def __next__(self) -> KeyValue:
        item = self._advance()
        if item is _EXHAUSTED:
            raise StopIteration
        return KeyValue(item[0], item[1])

    def has_next(self) -> bool:
        """Whether another entry is available."""
        if self._closed or (self._upstream is not None and self._upstream.closed):
            return False
        if not self._has_peeked:
            self._peeked = next(self._source, _EXHAUSTED)
            self._has_peeked = True
        return self._peeked is not _EXHAUSTED

    def peek_next_key(self) -> Any:
        """The key the next ``next()`` returns, without consuming it.

        :raises StopIteration: when the iterator is exhausted.
        """
        if not self.has_next():
            raise StopIteration
        return self._peeked[0]

    def close(self) -> None:
        """Release the iterator's resources; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._peeked = None
        self._has_peeked = False
        close_source = getattr(self._source, "close", None)
        if close_source is not None:
            close_source()
        if self._on_close is not None:
            self._on_close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> StoreIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def empty_iterator() -> StoreIterator:
    """An iterator with no entries."""
    return StoreIterator(())


def prefix_upper_bound(prefix: bytes) -> bytes | None:
    """The smallest key above every key starting with ``prefix`` (exclusive bound).

    ``None`` when no such key exists (the prefix is empty or all ``0xff``).
    """
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes((trimmed[-1] + 1,))


def in_bounds(
    key: bytes,
    lower: bytes | None,
    upper: bytes | None,
    *,
    upper_inclusive: bool = True,
) -> bool:
    """Whether ``key`` lies within ``[lower, upper]`` (or ``[lower, upper)``)."""
    if lower is not None and key < lower:
        return False
    if upper is None:
        return True
    return key <= upper if upper_inclusive else key < upper


def key_slice(
    keys: list[bytes], lower: bytes | None, upper: bytes | None, upper_inclusive: bool
) -> list[bytes]:
    """The keys of the sorted list ``keys`` within the bounds (``None`` = open), as a new list."""
    start = 0 if lower is None else bisect.bisect_left(keys, lower)
    if upper is None:
        end = len(keys)
    elif upper_inclusive:
        end = bisect.bisect_right(keys, upper)
    else:
        end = bisect.bisect_left(keys, upper)
    return keys[start:end]


def merge_sorted(
    cache_entries: Iterator[tuple[Any, Any]],
    store_entries: Iterator[tuple[Any, Any]],
    *,
    reverse: bool = False,
) -> Iterator[tuple[Any, Any]]:
    """Merge two sorted entry streams; the cache wins ties and its tombstones hide keys.

    :param cache_entries: ``(key, value_or_None)`` in key order (``None`` = cached delete).
    :param store_entries: ``(key, value)`` in the same key order.
    :param reverse: both streams are in descending key order.
    """
    cache_item: Any = next(cache_entries, None)
    store_item: Any = next(store_entries, None)
    while cache_item is not None or store_item is not None:
        if store_item is None:
            take_cache, take_store = True, False
        elif cache_item is None:
            take_cache, take_store = False, True
        elif cache_item[0] == store_item[0]:
            take_cache, take_store = True, True
        else:
            cache_first = cache_item[0] > store_item[0] if reverse else cache_item[0] < store_item[0]
            take_cache, take_store = cache_first, not cache_first
        if take_cache:
            if cache_item[1] is not None:
                yield cache_item
            cache_item = next(cache_entries, None)
            if take_store:
                store_item = next(store_entries, None)
        else:
            yield store_item
            store_item = next(store_entries, None)
