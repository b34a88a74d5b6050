"""WindowBytesStore: the inner (bytes) window store, persistent or in memory.

Owner: one StreamTask (one per task and store name), used from the task's thread; below the
change-logging, caching and metered layers. Retention, expiry and segments: see
:mod:`.segmented_store`; entries are segmented by window start.

Semantics (Kafka Streams' window stores):

* ``put(key, value, window_start)`` writes the window's value; ``None`` deletes it. With
  ``retain_duplicates`` (stream-stream join buffers) every put adds a new entry with a fresh
  sequence number, and ``None`` puts are ignored (a duplicate cannot be deleted).
* ``fetch(key, time_from, time_to)``: the key's windows with ``time_from <= start <= time_to``
  (both inclusive), as ``KeyValue(start, value)`` in ascending start (then insertion) order.
* ``fetch(key_from, key_to, time_from, time_to)``, ``fetch_all(time_from, time_to)``, ``all()``:
  ``KeyValue(Windowed(key_bytes, TimeWindow(start, start + window_size)), value)`` ordered by
  window start, then key bytes, then insertion; key bounds inclusive, ``None`` = open. A key
  range whose lower bound is above its upper bound is empty (logged, never an error).
* ``backward_*``: the same entries in exactly the reverse order.
* Iterators see the store as of when they reach each segment (writes made while iterating a
  not-yet-visited segment are visible; nothing fails because the store changed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from streams_runtime.state.interfaces import KeyValue
from streams_runtime.state.internals.bytes_store import check_key, check_value
from streams_runtime.state.internals.iterators import StoreIterator
from streams_runtime.state.internals.key_schemas import (
    MAX_SEQNUM,
    MAX_TIME,
    WINDOW_SUFFIX_SIZE,
    decode_ordered_window_key,
    ordered_bounds,
    ordered_key_prefix,
    ordered_window_key,
    split_window_changelog_key,
    window_changelog_key,
)
from streams_runtime.state.internals.segmented_store import AbstractSegmentedStore
from streams_runtime.windowed import Windowed, time_window_for_size

if TYPE_CHECKING:
    from streams_runtime.state.internals.segments import Segments

__all__ = ["WindowBytesStore"]

LOG = logging.getLogger(__name__)


class WindowBytesStore(AbstractSegmentedStore):
    """A window store of bytes (see the module docstring).

    :param name: the store name.
    :param retention_period_ms: how long windows stay readable, in stream time.
    :param window_size_ms: the size of the windows (to build ``Windowed`` keys).
    :param retain_duplicates: keep every put (stream-stream joins) instead of overwriting.
    :param segments: ``InMemorySegments()`` or ``RocksDBSegments()``.
    """

    def __init__(
        self,
        name: str,
        retention_period_ms: int,
        window_size_ms: int,
        retain_duplicates: bool,
        segments: Segments,
        segment_interval_ms: int | None = None,
    ) -> None:
        super().__init__(name, retention_period_ms, segments, segment_interval_ms)
        self.window_size_ms = int(window_size_ms)
        self.retain_duplicates = bool(retain_duplicates)
        self._seqnum = 0

    # -- writes ------------------------------------------------------------------------------

    def put(self, key: bytes, value: bytes | None, window_start_timestamp: int) -> bytes | None:
        """Write a window; returns the changelog key written, or ``None`` when nothing was.

        Nothing is written when the window is expired or when ``value`` is ``None`` in a store
        that retains duplicates.
        """
        self._check_open()
        key, value = check_key(key), check_value(value)
        start = int(window_start_timestamp)
        if value is None and self.retain_duplicates:
            return None
        if not self._observe(start):
            return None
        seqnum = self._next_seqnum()
        self.segments.write([(self._segment_of(start), ordered_window_key(key, start, seqnum), value)])
        return window_changelog_key(key, start, seqnum)

    def _next_seqnum(self) -> int:
        if not self.retain_duplicates:
            return 0
        self._seqnum = (self._seqnum + 1) & MAX_SEQNUM
        return self._seqnum

    def _split_changelog_key(self, changelog_key: bytes) -> tuple[int, bytes, int]:
        key, start, seqnum = split_window_changelog_key(changelog_key)
        return start, ordered_window_key(key, start, seqnum), seqnum

    def _restored(self, seqnum: int) -> None:
        self._seqnum = max(self._seqnum, seqnum)

    # -- reads -------------------------------------------------------------------------------

    def fetch(self, *args: Any) -> bytes | StoreIterator | None:
        """``fetch(key, window_start)`` -> value; ``fetch(key, time_from, time_to)`` and
        ``fetch(key_from, key_to, time_from, time_to)`` -> iterators (see the module docstring)."""
        if len(args) == 2:
            return self.fetch_window(*args)
        if len(args) == 3:
            return self.fetch_key(*args)
        if len(args) == 4:
            return self.fetch_key_range(*args)
        raise TypeError(f"fetch takes 2, 3 or 4 arguments, got {len(args)}")

    def backward_fetch(self, *args: Any) -> StoreIterator:
        """``backward_fetch(key, time_from, time_to)`` or with a key range (4 arguments), reversed."""
        if len(args) == 3:
            return self.fetch_key(*args, reverse=True)
        if len(args) == 4:
            return self.fetch_key_range(*args, reverse=True)
        raise TypeError(f"backward_fetch takes 3 or 4 arguments, got {len(args)}")

    def fetch_window(self, key: bytes, window_start: int) -> bytes | None:
        """The value of the key's window starting at ``window_start`` (first duplicate), or ``None``."""
        self._check_open()
        key = check_key(key)
        if window_start < self.min_live_time():
            return None
        segment = self._segment_of(window_start)
        lower = ordered_window_key(key, window_start, 0)
        if not self.retain_duplicates:  # one entry per window, under sequence number 0: a point read
            found: bytes | None = self.segments.get(segment, lower)
            return found
        upper = ordered_window_key(key, window_start, MAX_SEQNUM)
        for _, value in self.segments.scan(segment, lower, upper, False):
            result: bytes | None = value
            return result
        return None

    def fetch_key(self, key: bytes, time_from: int, time_to: int, *, reverse: bool = False) -> StoreIterator:
        """``KeyValue(start, value)`` of the key's windows with ``time_from <= start <= time_to``."""
        self._check_open()
        key = check_key(key)
        if time_from > time_to:
            return self._track(())
        time_from = max(int(time_from), self.min_live_time())
        lower = ordered_window_key(key, time_from, 0)
        upper = ordered_window_key(key, min(int(time_to), MAX_TIME), MAX_SEQNUM)
        segments = self._live_segments(time_from, time_to, reverse)
        entries = self._scan_segments(segments, lower, upper, reverse)
        return self._track(KeyValue(decode_ordered_window_key(k)[1], v) for k, v in entries)

    def fetch_key_range(
        self,
        key_from: bytes | None,
        key_to: bytes | None,
        time_from: int,
        time_to: int,
        *,
        reverse: bool = False,
    ) -> StoreIterator:
        """Windows of keys in ``[key_from, key_to]`` starting in ``[time_from, time_to]``."""
        self._check_open()
        key_from = None if key_from is None else check_key(key_from)
        key_to = None if key_to is None else check_key(key_to)
        if key_from is not None and key_to is not None and key_from > key_to:
            LOG.warning(
                "Returning empty iterator for fetch with invalid key range: from > to (store %s). "
                "The range arguments may be in the wrong order, or the key serde may not preserve "
                "ordering in its bytes (the numeric serdes do not, for negative numbers).",
                self.name,
            )
            return self._track(())
        lower, upper = ordered_bounds(key_from, key_to, WINDOW_SUFFIX_SIZE)
        return self._multi_key(lower, upper, time_from, time_to, reverse)

    def fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        """Windows of every key starting in ``[time_from, time_to]``."""
        self._check_open()
        return self._multi_key(None, None, time_from, time_to, False)

    def backward_fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        self._check_open()
        return self._multi_key(None, None, time_from, time_to, True)

    def all(self) -> StoreIterator:
        """Every live window."""
        self._check_open()
        return self._multi_key(None, None, None, None, False)

    def backward_all(self) -> StoreIterator:
        self._check_open()
        return self._multi_key(None, None, None, None, True)

    def _multi_key(
        self,
        lower: bytes | None,
        upper: bytes | None,
        time_from: int | None,
        time_to: int | None,
        reverse: bool,
    ) -> StoreIterator:
        if time_from is not None and time_to is not None and time_from > time_to:
            return self._track(())
        low = self.min_live_time() if time_from is None else max(int(time_from), self.min_live_time())
        high = MAX_TIME if time_to is None else int(time_to)

        def keep(decoded: tuple[bytes, int, int]) -> bool:
            return low <= decoded[1] <= high

        segments = self._live_segments(time_from, time_to, reverse)
        entries = self._scan_time_ordered(segments, lower, upper, reverse, decode_ordered_window_key, keep)
        return self._track(self._windowed(entries))

    def _windowed(self, entries: Iterator[tuple[tuple[Any, ...], bytes]]) -> Iterator[KeyValue]:
        for (key, start, _), value in entries:
            yield KeyValue(Windowed(key, time_window_for_size(start, self.window_size_ms)), value)

    def _segment_time_of(self, ordered_key: bytes) -> int:
        return decode_ordered_window_key(ordered_key)[1]

    def _time_order(self, decoded: tuple[Any, ...]) -> tuple[Any, ...]:
        key, start, seqnum = decoded
        return (start, key, seqnum)

    def key_prefix(self, key: bytes) -> bytes:
        """The ordered-layout prefix of ``key`` (for the caching layer's cache keys)."""
        return ordered_key_prefix(key)
