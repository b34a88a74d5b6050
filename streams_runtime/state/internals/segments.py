"""Segments: time-partitioned ordered maps of bytes, the storage under window and session stores.

Owner: one window or session store (one instance per task and store), used from the task's
thread. A store puts every entry into the segment of its time (window start, session end):
``segment_id = time // segment_interval``. Expiry then costs one segment drop instead of a
delete per entry: a segment is dropped once all of its times are older than the retention.

The segment interval is derived from the retention as Kafka Streams does for its persistent
window and session stores: ``max(retention / 2, 60 s)``, so a store holds at most about three
segments. The segments are:

* :class:`InMemorySegments`: a sorted key list and a dict per segment (in-memory stores);
* ``RocksDBSegments`` (:mod:`.rocksdb_segments`): one RocksDB column family per segment in one
  database, so a restore batch spanning segments and the changelog offset are written in one
  ``WriteBatch``.

Both implement the same small interface (``segment_ids``, ``get``, ``write``, ``scan``,
``drop_segment``, ``commit_offset``/``committed_offset``, ``flush``, ``open``/``close``,
``approximate_num_entries``); ``scan`` bounds are inclusive and keys are ordered as bytes.
Invariant: ``segment_ids()`` is ascending and holds exactly the non-empty-or-created segments.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStoreContext

__all__ = [
    "MIN_SEGMENT_INTERVAL_MS",
    "InMemorySegments",
    "Segments",
    "default_segment_interval",
    "segment_id",
]


class Segments(Protocol):
    """The storage of a segmented store: :class:`InMemorySegments` or ``RocksDBSegments``."""

    @property
    def persistent(self) -> bool: ...

    def open(self, context: StateStoreContext, store_name: str) -> None: ...

    def close(self) -> None: ...

    def flush(self) -> None: ...

    def segment_ids(self) -> list[int]: ...

    def get(self, segment: int, key: bytes) -> bytes | None: ...

    def write(
        self, entries: list[tuple[int, bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None: ...

    def scan(
        self, segment: int, lower: bytes | None, upper: bytes | None, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]: ...

    def drop_segment(self, segment: int) -> None: ...

    def commit_offset(self, changelog_offset: int) -> None: ...

    def committed_offset(self) -> int | None: ...

    def approximate_num_entries(self) -> int: ...


MIN_SEGMENT_INTERVAL_MS = 60_000


def default_segment_interval(retention_period_ms: int) -> int:
    """Kafka Streams' segment interval for a retention: ``max(retention // 2, 60000)``."""
    return max(int(retention_period_ms) // 2, MIN_SEGMENT_INTERVAL_MS)


def segment_id(timestamp: int, segment_interval: int) -> int:
    """The segment holding ``timestamp``."""
    return timestamp // segment_interval


class _Segment:
    __slots__ = ("data", "keys")

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.keys: list[bytes] = []


class InMemorySegments:
    """Segments held in process memory (lost on restart; the changelog restores them)."""

    persistent = False

    def __init__(self) -> None:
        self._segments: dict[int, _Segment] = {}
        self._ids: list[int] = []

    def open(self, context: StateStoreContext, store_name: str) -> None:
        """Start empty (a re-init after close is a fresh task)."""
        self._segments = {}
        self._ids = []

    def close(self) -> None:
        self._segments = {}
        self._ids = []

    def flush(self) -> None:
        """Nothing to make durable."""

    def segment_ids(self) -> list[int]:
        """Ascending ids of the existing segments."""
        return list(self._ids)

    def get(self, segment: int, key: bytes) -> bytes | None:
        found = self._segments.get(segment)
        return None if found is None else found.data.get(key)

    def write(
        self, entries: list[tuple[int, bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None:
        """Apply ``(segment, key, value_or_None)`` in order; the offset is not kept in memory."""
        for segment, key, value in entries:
            self._put(segment, key, value)

    def _put(self, segment: int, key: bytes, value: bytes | None) -> None:
        found = self._segments.get(segment)
        if value is None:
            if found is not None and found.data.pop(key, None) is not None:
                del found.keys[bisect.bisect_left(found.keys, key)]
            return
        if found is None:
            found = self._segments[segment] = _Segment()
            bisect.insort(self._ids, segment)
        if key not in found.data:
            bisect.insort(found.keys, key)
        found.data[key] = value

    def scan(
        self, segment: int, lower: bytes | None, upper: bytes | None, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        """Entries with ``lower <= key <= upper``; keys are snapshotted when iteration starts."""
        found = self._segments.get(segment)
        if found is None:
            return
        keys = found.keys
        start = 0 if lower is None else bisect.bisect_left(keys, lower)
        end = len(keys) if upper is None else bisect.bisect_right(keys, upper)
        snapshot = keys[start:end]
        if reverse:
            snapshot.reverse()
        data = found.data
        for key in snapshot:
            value = data.get(key)
            if value is not None:
                yield key, value

    def drop_segment(self, segment: int) -> None:
        if self._segments.pop(segment, None) is not None:
            del self._ids[bisect.bisect_left(self._ids, segment)]

    def commit_offset(self, changelog_offset: int) -> None:
        """Memory stores keep no offset (they restore from the changelog's start)."""

    def committed_offset(self) -> int | None:
        return None

    def approximate_num_entries(self) -> int:
        return sum(len(segment.data) for segment in self._segments.values())
