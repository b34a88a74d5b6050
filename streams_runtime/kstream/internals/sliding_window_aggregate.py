"""Sliding-window aggregation (``windowed_by(SlidingWindows)``): Kafka Streams' KStreamSlidingWindowAggregate.

Owner: the DSL. A sliding window of time difference ``d`` covers ``[start, start + d]``
(both ends inclusive) and is keyed as ``Windowed(key, TimeWindow(start, start + d))``; its store
(a timestamped window store of window size ``d``) holds one aggregate per window start, stamped
with the largest record timestamp in that window.

Only windows that records open or close exist. A record at ``t``:

* updates every stored window that contains it (``start <= t <= start + d``);
* gets its *left* window ``[t - d, t]`` if there is none yet: seeded with the aggregate of the
  closest earlier window when the previous record lies within ``d`` of ``t``, else empty;
* gets its *right* window ``[t + 1, t + 1 + d]`` if there is none yet and a later record falls
  in it (seeded from the stored aggregate that covers those later records, without ``t``);
* creates the right window of the previous record (``[p + 1, p + 1 + d]``) when missing and
  ``t`` falls into it.

Records earlier than ``d`` (which would open windows with a negative start) all share the
window ``[0, d]``. Stream time is the largest timestamp the processor has seen; a window whose
end is below ``stream time - grace`` is closed, and a record that cannot reach any open window
(``t + 1 + d <= stream time - grace``) is dropped altogether -- both logged and counted on
``dropped-records``. Null keys or values are dropped the same way.

Under ``EmitStrategy.on_window_close()`` nothing is forwarded per update; each window is
forwarded once, by the record that moves stream time past its end + grace (see
``_WindowProcessor.maybe_emit_final``).

Stored windows are read from ``t - 2d`` (the earliest window whose right-window successor may
involve ``t``), which is why the store's retention must be at least ``2d + grace``.
"""

from __future__ import annotations

from streams_runtime.kstream.internals.internal_processor import ProcessorContext
from streams_runtime.kstream.internals.window_aggregate import (
    NO_TIMESTAMP,
    _WindowProcessor,
)
from streams_runtime.kstream.windows import SlidingWindows
from streams_runtime.processor.api import Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.windowed import TimeWindow, Windowed

__all__ = ["KStreamSlidingWindowAggregate"]


class KStreamSlidingWindowAggregate(_WindowProcessor[SlidingWindows]):
    """Sliding windows (``SlidingWindows``); reduce is an aggregate whose initializer returns None."""

    def init(self, processor_context: ProcessorContext) -> None:
        super().init(processor_context)
        self.diff = self.windows.time_difference_ms

    # -- entry point -------------------------------------------------------------------------

    def process(self, record: Record) -> None:
        key, timestamp = record.key, record.timestamp
        if key is None or record.value is None:
            self.drop("due to null key or value", record)
            return
        if timestamp > self.observed_stream_time:
            self.observed_stream_time = timestamp
        close_time = self.observed_stream_time - self.grace_ms
        if timestamp + 1 + self.diff <= close_time:
            # neither its left nor any right window can still be open; logged with the window
            # Kafka Streams checks here, [t, t + time difference]
            self._drop_expired(record, timestamp, timestamp + self.diff, close_time)
            return
        self.maybe_emit_final(record, close_time)  # before the writes: see window_aggregate's docstring
        if timestamp < self.diff:
            self._process_early(record, close_time)
        else:
            self._process_regular(record, close_time)

    def emit_range(self, close_time: int) -> tuple[int, int] | None:
        """Windows ``[start, start + d]`` (inclusive) closed once ``end < close time``: starts up to
        close - d - 1, after those (end < last emit's close time) already emitted."""
        high = close_time - self.diff - 1
        last = self.last_emit_close_time
        low = 0 if last == NO_TIMESTAMP else max(0, last - self.diff)
        return (low, high) if 0 <= high and low <= high else None

    # -- the two cases -----------------------------------------------------------------------

    def _stored(self, key: object, time_from: int, time_to: int) -> list[tuple[int, ValueAndTimestamp]]:
        """``(start, ValueAndTimestamp)`` stored for ``key``, start in ``[time_from, time_to]``, ascending."""
        with self.store.fetch(key, time_from, time_to) as entries:
            found = [(entry.key, entry.value) for entry in entries if entry.value is not None]
        found.sort(key=lambda item: item[0])
        return found

    def _process_regular(self, record: Record, close_time: int) -> None:
        """A record at ``t >= d``: its windows have non-negative starts."""
        key, timestamp, diff = record.key, record.timestamp, self.diff
        seen_starts: set[int] = set()
        left_agg: ValueAndTimestamp | None = None  # aggregate of the closest window ending before t
        right_agg: ValueAndTimestamp | None = None  # aggregate of the latest window containing t (before t)
        left_exists = right_exists = False
        previous_ts: int | None = None  # timestamp of the closest earlier record, if needed

        # latest start first: the first window seen that covers t holds the records after t
        for start, stored in reversed(self._stored(key, max(0, timestamp - 2 * diff), timestamp + 1)):
            seen_starts.add(start)
            end = start + diff
            if start == timestamp + 1:
                right_exists = True
            elif end > timestamp:
                if right_agg is None:
                    right_agg = stored
                self._update(start, stored, record, close_time)
            elif end == timestamp:
                left_exists = True
                self._update(start, stored, record, close_time)
                if stored.timestamp >= timestamp:
                    # an earlier record at t already created every window t needs
                    return
                previous_ts = stored.timestamp
            else:  # end < timestamp: the closest earlier window; nothing further back matters
                left_agg = stored
                previous_ts = stored.timestamp
                break

        if previous_ts is not None:
            previous_right = previous_ts + 1
            if previous_right not in seen_starts and previous_right + diff >= timestamp:
                self._create_previous_right_window(previous_right, record, close_time)

        if not left_exists:
            if previous_ts is not None and left_agg is not None and timestamp - diff <= previous_ts:
                seed = ValueAndTimestamp.make(left_agg.value, timestamp)
            else:
                seed = ValueAndTimestamp.make(self.initializer(), timestamp)
            self._update(timestamp - diff, seed, record, close_time)

        if not right_exists and right_agg is not None and right_agg.timestamp > timestamp:
            self._create_own_right_window(key, timestamp, right_agg, record)

    def _process_early(self, record: Record, close_time: int) -> None:
        """A record at ``0 <= t < d``: its left window is the shared window ``[0, d]``."""
        key, timestamp = record.key, record.timestamp
        if timestamp < 0:
            raise ValueError(f"sliding windows cannot aggregate a record with negative timestamp {timestamp}")
        seen_starts: set[int] = set()
        combined: ValueAndTimestamp | None = None  # the [0, d] window
        right_agg: ValueAndTimestamp | None = None
        right_exists = False
        previous_ts: int | None = None

        for start, stored in self._stored(key, 0, timestamp + 1):
            seen_starts.add(start)
            if start == 0:
                combined = stored
                if stored.timestamp < timestamp:
                    previous_ts = stored.timestamp
            elif start <= timestamp:
                right_agg = stored
                self._update(start, stored, record, close_time)
            elif start == timestamp + 1:
                right_exists = True
            else:
                raise RuntimeError(
                    f"unexpected sliding window starting at {start} for a record at {timestamp}"
                )

        # with no window between 0 and t, the shared window can only hold records after t (if any)
        if right_agg is None and combined is not None and combined.timestamp > timestamp:
            right_agg = combined
        if not right_exists and right_agg is not None and right_agg.timestamp > timestamp:
            self._create_own_right_window(key, timestamp, right_agg, record)

        if previous_ts is not None and previous_ts + 1 not in seen_starts:
            self._create_previous_right_window(previous_ts + 1, record, close_time)

        if combined is None:
            combined = ValueAndTimestamp.make(self.initializer(), timestamp)
        self._update(0, combined, record, close_time)

    # -- window writes -----------------------------------------------------------------------

    def _window(self, start: int) -> TimeWindow:
        return TimeWindow(start, start + self.diff)

    def _create_own_right_window(
        self, key: object, timestamp: int, right_agg: ValueAndTimestamp, record: Record
    ) -> None:
        """``[t + 1, t + 1 + d]`` holds exactly the later records ``right_agg`` aggregates (not ``t``)."""
        start = timestamp + 1
        self.store.put(key, right_agg, start)
        self.forwarder.maybe_forward(
            Windowed(key, self._window(start)), right_agg.value, None, right_agg.timestamp, record.headers
        )

    def _create_previous_right_window(self, start: int, record: Record, close_time: int) -> None:
        """The previous record's right window: ``t`` is its first (and only) record."""
        self._update(start, ValueAndTimestamp.make(self.initializer(), record.timestamp), record, close_time)

    def _update(self, start: int, stored: ValueAndTimestamp | None, record: Record, close_time: int) -> None:
        """Add the record to the window at ``start`` (now ``stored``); drop it if that window closed."""
        end = start + self.diff
        if end < close_time:
            self._drop_expired(record, start, end, close_time)
            return
        key, timestamp = record.key, record.timestamp
        old_agg = ValueAndTimestamp.get_value_or_none(stored)
        new_agg = self.aggregator(key, record.value, old_agg)
        new_ts = timestamp if stored is None or old_agg is None else max(timestamp, stored.timestamp)
        self.store.put(key, ValueAndTimestamp.make(new_agg, new_ts), start)
        self.forwarder.maybe_forward(
            Windowed(key, self._window(start)), new_agg, old_agg, new_ts, record.headers
        )

    def _drop_expired(self, record: Record, start: int, end: int, close_time: int) -> None:
        self.drop(
            "for expired window",
            record,
            f" timestamp=[{record.timestamp}] window=[{start},{end}] "
            f"expiration=[{close_time}] streamTime=[{self.observed_stream_time}]",
        )
