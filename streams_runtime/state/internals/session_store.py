"""SessionBytesStore: the inner (bytes) session store, persistent or in memory.

Owner: one StreamTask (one per task and store name), used from the task's thread; below the
change-logging, caching and metered layers. Entries are segmented by session *end*; a session
is live while ``end > observed_stream_time - retention`` (see :mod:`.segmented_store`).

Semantics (Kafka Streams' session stores); keys are ``Windowed(key_bytes, SessionWindow)``:

* ``put(session, value)`` writes a session, ``None`` (or ``remove(session)``) deletes it.
* ``find_sessions(key, earliest_session_end_time, latest_session_start_time)``: the sessions of
  ``key`` with ``end >= earliest_session_end_time`` and ``start <= latest_session_start_time``
  -- exactly the sessions a new record at ``t`` with inactivity gap ``g`` merges with when
  called with ``(t - g, t + g)``. Ordered by end, then start.
* ``find_sessions(key_from, key_to, earliest_end, latest_start)``, ``fetch(key_from, key_to)``:
  the same over an inclusive key range (``None`` = open), ordered by end, then key, then start.
* ``fetch(key)`` = every live session of ``key``; ``fetch_session(key, start, end)`` = the value
  of one exact session or ``None``. ``backward_*`` iterate in exactly the reverse order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from streams_runtime.state.interfaces import KeyValue
from streams_runtime.state.internals.bytes_store import check_key, check_value
from streams_runtime.state.internals.iterators import StoreIterator
from streams_runtime.state.internals.key_schemas import (
    MAX_TIME,
    MIN_TIMESTAMP,
    SESSION_SUFFIX_SIZE,
    decode_ordered_session_key,
    ordered_bounds,
    ordered_session_key,
    session_changelog_key,
    split_session_changelog_key,
)
from streams_runtime.state.internals.segmented_store import AbstractSegmentedStore
from streams_runtime.windowed import SessionWindow, Windowed

__all__ = ["SessionBytesStore"]


def _session_parts(session: object) -> tuple[bytes, int, int]:
    if not isinstance(session, Windowed):
        raise TypeError(f"session stores take Windowed keys, got {type(session).__name__}")
    return check_key(session.key), int(session.window.start), int(session.window.end)


class SessionBytesStore(AbstractSegmentedStore):
    """A session store of bytes (see the module docstring).

    :param name: the store name.
    :param retention_period_ms: how long sessions stay readable after their end, in stream time.
    :param segments: ``InMemorySegments()`` or ``RocksDBSegments()``.
    """

    # -- writes ------------------------------------------------------------------------------

    def put(self, session: Windowed, value: bytes | None) -> bytes | None:
        """Write (or with ``None`` delete) a session; returns the changelog key, or ``None``
        when the session is expired and nothing was written."""
        self._check_open()
        key, start, end = _session_parts(session)
        value = check_value(value)
        if not self._observe(end):
            return None
        self.segments.write([(self._segment_of(end), ordered_session_key(key, start, end), value)])
        return session_changelog_key(key, start, end)

    def remove(self, session: Windowed) -> bytes | None:
        """Delete a session (a ``put`` of ``None``)."""
        return self.put(session, None)

    def _split_changelog_key(self, changelog_key: bytes) -> tuple[int, bytes, int]:
        key, start, end = split_session_changelog_key(changelog_key)
        return end, ordered_session_key(key, start, end), 0

    # -- reads -------------------------------------------------------------------------------

    def fetch_session(self, key: bytes, session_start: int, session_end: int) -> bytes | None:
        """The value of exactly the session ``[session_start, session_end]`` of ``key``, or ``None``."""
        self._check_open()
        key = check_key(key)
        if session_end < self.min_live_time():
            return None
        value: bytes | None = self.segments.get(
            self._segment_of(session_end), ordered_session_key(key, session_start, session_end)
        )
        return value

    def find_sessions(self, *args: object) -> StoreIterator:
        """``find_sessions(key, earliest_end, latest_start)`` or with a key range (4 arguments)."""
        return self._find(args, reverse=False)

    def backward_find_sessions(self, *args: object) -> StoreIterator:
        return self._find(args, reverse=True)

    def fetch(self, key_or_from: bytes | None, key_to: object = ...) -> StoreIterator:
        """``fetch(key)``: every live session of ``key``; ``fetch(key_from, key_to)``: of a range."""
        if key_to is ...:
            return self._find((key_or_from, MIN_TIMESTAMP, MAX_TIME), reverse=False)
        return self._find((key_or_from, key_to, MIN_TIMESTAMP, MAX_TIME), reverse=False)

    def backward_fetch(self, key_or_from: bytes | None, key_to: object = ...) -> StoreIterator:
        if key_to is ...:
            return self._find((key_or_from, MIN_TIMESTAMP, MAX_TIME), reverse=True)
        return self._find((key_or_from, key_to, MIN_TIMESTAMP, MAX_TIME), reverse=True)

    def _find(self, args: tuple[Any, ...], *, reverse: bool) -> StoreIterator:
        self._check_open()
        if len(args) == 3:
            key, earliest_end, latest_start = args
            return self._find_key(check_key(key), earliest_end, latest_start, reverse)
        if len(args) == 4:
            key_from, key_to, earliest_end, latest_start = args
            key_from = None if key_from is None else check_key(key_from)
            key_to = None if key_to is None else check_key(key_to)
            if key_from is not None and key_to is not None and key_from > key_to:
                return self._track(())
            return self._find_range(key_from, key_to, earliest_end, latest_start, reverse)
        raise TypeError(f"find_sessions takes 3 or 4 arguments, got {len(args)}")

    def _find_key(self, key: bytes, earliest_end: int, latest_start: int, reverse: bool) -> StoreIterator:
        low_end = max(int(earliest_end), self.min_live_time())
        lower = ordered_session_key(key, MIN_TIMESTAMP, low_end)
        upper = ordered_session_key(key, MAX_TIME, MAX_TIME)
        segments = self._live_segments(low_end, None, reverse)

        def sessions() -> Iterator[KeyValue]:
            for raw_key, value in self._scan_segments(segments, lower, upper, reverse):
                _, start, end = decode_ordered_session_key(raw_key)
                if start <= latest_start:
                    yield KeyValue(Windowed(key, SessionWindow(start, end)), value)

        return self._track(sessions())

    def _find_range(
        self,
        key_from: bytes | None,
        key_to: bytes | None,
        earliest_end: int,
        latest_start: int,
        reverse: bool,
    ) -> StoreIterator:
        low_end = max(int(earliest_end), self.min_live_time())
        lower, upper = ordered_bounds(key_from, key_to, SESSION_SUFFIX_SIZE)

        def keep(decoded: tuple[bytes, int, int]) -> bool:
            return decoded[2] >= low_end and decoded[1] <= latest_start

        segments = self._live_segments(low_end, None, reverse)
        entries = self._scan_time_ordered(segments, lower, upper, reverse, decode_ordered_session_key, keep)
        return self._track(
            KeyValue(Windowed(key, SessionWindow(start, end)), value) for (key, start, end), value in entries
        )

    def find_sessions_ending_between(self, earliest_end: int, latest_end: int) -> StoreIterator:
        """Every session of every key ending in ``[earliest_end, latest_end]``, ordered by end, key,
        start, from the segments still held: unlike ``find_sessions`` no retention bound applies
        (a session aggregation emitting on window close reads the sessions it closes as they fall
        behind the retention, as Kafka Streams' time-ordered session store lets it)."""
        self._check_open()
        first, last = self._segment_of(max(earliest_end, 0)), self._segment_of(latest_end)
        segments = [s for s in self.segments.segment_ids() if first <= s <= last]
        lower, upper = ordered_bounds(None, None, SESSION_SUFFIX_SIZE)

        def keep(decoded: tuple[bytes, int, int]) -> bool:
            return earliest_end <= decoded[2] <= latest_end

        entries = self._scan_time_ordered(segments, lower, upper, False, decode_ordered_session_key, keep)
        return self._track(
            KeyValue(Windowed(key, SessionWindow(start, end)), value) for (key, start, end), value in entries
        )

    def _segment_time_of(self, ordered_key: bytes) -> int:
        return decode_ordered_session_key(ordered_key)[2]

    def _time_order(self, decoded: tuple[Any, ...]) -> tuple[Any, ...]:
        key, start, end = decoded
        return (end, key, start)
