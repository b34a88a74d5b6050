"""AbstractSegmentedStore: the engine-independent half of the inner window and session stores.

Owner: the state side; one instance per task and store, used from the task's thread.
:class:`~.window_store.WindowBytesStore` and :class:`~.session_store.SessionBytesStore` extend
it with their key layouts; the storage is a segments object (:class:`.segments.InMemorySegments`
or ``RocksDBSegments``).

Retention (Kafka Streams' semantics):

* The store's *observed stream time* is the largest segment time it was ever given (window
  start for window stores, session end for session stores), restored records included.
* A time ``t`` is *live* while ``t > observed_stream_time - retention_period``. An in-memory
  store drops a put of an expired time; a persistent (RocksDB) store, as Kafka Streams' segmented
  stores do, drops it only when its whole segment has expired (dropped: logged and counted,
  :attr:`dropped_records`, never written). A dropped put, not a skipped restored record, is
  counted on the task's ``dropped-records`` too, as Kafka Streams' stores count it.
* Reads never return expired entries, even those still physically present in a segment that
  is not yet dropped; a segment is dropped as soon as all of its times are expired.

Invariants: operations on a closed store raise :class:`InvalidStateStoreError`; closing the
store closes its open iterators; ``init`` registers the outermost store of the stack with the
restore callback :meth:`restore_batch`, which takes changelog records in the changelog layout.
That lifecycle is :class:`.bytes_store.AbstractInnerStore`'s, shared with the key-value stores.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from streams_runtime.state.interfaces import StateStoreContext
from streams_runtime.state.internals.bytes_store import (
    AbstractInnerStore,
    check_key,
    check_value,
    validate_retention,
)
from streams_runtime.state.internals.key_schemas import MIN_TIMESTAMP
from streams_runtime.state.internals.segments import Segments, default_segment_interval, segment_id

__all__ = ["AbstractSegmentedStore"]

LOG = logging.getLogger(__name__)


class AbstractSegmentedStore(AbstractInnerStore):
    """Lifecycle, retention and segment bookkeeping shared by window and session stores.

    :param name: the store name.
    :param retention_period_ms: how long (in stream time) entries stay readable.
    :param segments: the storage (``InMemorySegments()`` or ``RocksDBSegments()``).
    :param segment_interval_ms: ``None``: :func:`default_segment_interval` of the retention.
    """

    def __init__(
        self,
        name: str,
        retention_period_ms: int,
        segments: Segments,
        segment_interval_ms: int | None = None,
    ) -> None:
        retention_period_ms = validate_retention(name, retention_period_ms)
        super().__init__(name)
        self.retention_period_ms = retention_period_ms
        self.segment_interval_ms = int(segment_interval_ms or default_segment_interval(retention_period_ms))
        self.segments = segments
        self.observed_stream_time = MIN_TIMESTAMP
        self.dropped_records = 0
        self._dropped_sensor: Any = None  # the task's dropped-records, once open

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def persistent(self) -> bool:
        return bool(self.segments.persistent)

    def _open_store(self, context: StateStoreContext) -> None:
        """Open the segments and recover the observed stream time from the stored data."""
        self.segments.open(context, self._name)
        self.observed_stream_time = self._max_stored_time()
        metrics: Any = getattr(context, "metrics", None)
        task_id = getattr(context, "task_id", None)
        if task_id is not None and callable(getattr(metrics, "dropped_records", None)):
            self._dropped_sensor = metrics.dropped_records(task_id)

    def _close_store(self) -> None:
        self.segments.close()

    def flush(self) -> None:
        self._check_open()
        self.segments.flush()

    def commit_offset(self, changelog_offset: int) -> None:
        """Record the changelog offset the data reflects (persistent stores; see rocksdb_store)."""
        self._check_open()
        self.segments.commit_offset(changelog_offset)

    def committed_offset(self) -> int | None:
        self._check_open()
        result: int | None = self.segments.committed_offset()
        return result

    def approximate_num_entries(self) -> int:
        self._check_open()
        result: int = self.segments.approximate_num_entries()
        return result

    # -- retention ---------------------------------------------------------------------------

    def min_live_time(self) -> int:
        """The oldest time still readable: ``observed_stream_time - retention + 1``."""
        if self.observed_stream_time == MIN_TIMESTAMP:
            return MIN_TIMESTAMP
        return self.observed_stream_time - self.retention_period_ms + 1

    def _segment_of(self, time: int) -> int:
        return segment_id(time, self.segment_interval_ms)

    def _observe(self, time: int, restoring: bool = False) -> bool:
        """Advance stream time with ``time``; ``True`` when a write at ``time`` is kept (else count
        a drop; on the task's sensor unless ``restoring``). An in-memory store keeps only live
        times; a persistent one, as Kafka Streams' RocksDB segmented stores, drops a write only
        when its whole segment has expired (reads still skip the expired entries)."""
        if time > self.observed_stream_time:
            self.observed_stream_time = time
            self._drop_expired_segments()
        live = self.min_live_time()
        if self.persistent and live != MIN_TIMESTAMP:
            kept = self._segment_of(time) >= self._segment_of(live)
        else:
            kept = time >= live
        if not kept:
            self.dropped_records += 1
            if self._dropped_sensor is not None and not restoring:
                self._dropped_sensor.record()
            LOG.warning("Skipping record for expired segment (store %s, time %d).", self._name, time)
            return False
        return True

    def _drop_expired_segments(self) -> None:
        first_live = self._segment_of(self.min_live_time())
        for segment in self.segments.segment_ids():
            if segment >= first_live:
                break
            self.segments.drop_segment(segment)

    def _max_stored_time(self) -> int:
        """Stream time as recovered from stored data (persistent stores after a restart)."""
        latest = MIN_TIMESTAMP
        ids = self.segments.segment_ids()
        if ids:
            for key, _ in self.segments.scan(ids[-1], None, None, False):
                latest = max(latest, self._segment_time_of(key))
        return latest

    # -- scanning ----------------------------------------------------------------------------

    def _live_segments(self, time_from: int | None, time_to: int | None, reverse: bool) -> list[int]:
        low = self.min_live_time() if time_from is None else max(time_from, self.min_live_time())
        first = self._segment_of(low) if low != MIN_TIMESTAMP else None
        last = None if time_to is None else self._segment_of(time_to)
        ids = [
            s
            for s in self.segments.segment_ids()
            if (first is None or s >= first) and (last is None or s <= last)
        ]
        return ids[::-1] if reverse else ids

    def _scan_segments(
        self, segments: list[int], lower: bytes | None, upper: bytes | None, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        """Entries of the segments in the order given, each segment scanned lazily."""
        for segment in segments:
            if not self._open:
                return
            yield from self.segments.scan(segment, lower, upper, reverse)

    def _scan_time_ordered(
        self,
        segments: list[int],
        lower: bytes | None,
        upper: bytes | None,
        reverse: bool,
        decode: Callable[[bytes], tuple[Any, ...]],
        keep: Callable[[tuple[Any, ...]], bool],
    ) -> Iterator[tuple[tuple[Any, ...], bytes]]:
        """Multi-key scans: ``(decoded key, value)`` ordered by time first, then key.

        Segments partition time, so sorting each segment's matches (read when the iteration
        reaches the segment) and visiting segments in time order orders the whole result.
        """
        for segment in segments:
            if not self._open:
                return
            matches = []
            for raw_key, value in self.segments.scan(segment, lower, upper, False):
                decoded = decode(raw_key)
                if keep(decoded):
                    matches.append((self._time_order(decoded), decoded, value))
            matches.sort(key=lambda match: match[0], reverse=reverse)
            for _, decoded, value in matches:
                yield decoded, value

    # -- restore -----------------------------------------------------------------------------

    def restore_batch(self, records: Iterable[tuple[Any, ...]], changelog_offset: int | None = None) -> None:
        """Apply changelog records ``(changelog_key, value[, timestamp])``; expired ones are skipped."""
        self._check_open()
        entries = []
        for record in records:
            time, ordered_key, seqnum = self._split_changelog_key(check_key(record[0]))
            if self._observe(time, restoring=True):
                entries.append((self._segment_of(time), ordered_key, check_value(record[1])))
                self._restored(seqnum)
        self.segments.write(entries, changelog_offset)

    # -- subclass hooks ----------------------------------------------------------------------

    def _split_changelog_key(self, changelog_key: bytes) -> tuple[int, bytes, int]:
        """The segment time, the ordered store key and the sequence number (windows retaining
        duplicates; else 0) of a changelog key."""
        raise NotImplementedError

    def _restored(self, seqnum: int) -> None:
        """A record with ``seqnum`` was restored (a window store numbers its next puts after it)."""

    def _segment_time_of(self, ordered_key: bytes) -> int:
        """The segment time (window start, session end) of an ordered store key."""
        raise NotImplementedError

    def _time_order(self, decoded: tuple[Any, ...]) -> tuple[Any, ...]:
        """The sort key of a decoded entry in multi-key scans (time first)."""
        raise NotImplementedError
