"""Windowed aggregation processors: time windows (tumbling/hopping), sliding windows, sessions.

Owner: the DSL; one processor per task, made by a ``WindowAggregateSupplier``.
Kafka Streams' semantics:

* Stream time is the largest timestamp this processor has seen (``observed_stream_time``);
  a window is closed once ``window end <= stream time - grace`` (time/sliding windows; a
  session once ``end < stream time - inactivity gap - grace``, since a record within the gap
  of a session's end can still merge into it). A record that would only update closed
  windows is dropped: logged and counted on the task's ``dropped-records`` sensor, never
  silently. Null keys are dropped the same way, and so are null values in sliding windows;
  tumbling, hopping and session windows aggregate a null value (Kafka Streams 4.3.1 does).
* Time windows: the new aggregate's timestamp is max(record ts, previous aggregate ts); the
  update is forwarded as ``Change(new, old)`` keyed by ``Windowed(key, TimeWindow)``, where the
  old value is the initializer's result for a new window (as Kafka Streams does).
* Sessions: the record's session ``[ts, ts]`` merges with every stored session of the key
  within ``inactivity gap``; merged sessions are removed (forwarded as deletes), the merged
  session is stored and forwarded with timestamp = its end.
* Updates go out through the store's cache flush when the store is cached, directly otherwise
  (:class:`WindowedTupleForwarder`).
* Emit on window close (``EmitStrategy.on_window_close()``; sessions below): no
  updates are forwarded and no cache flush listener is registered; on each record the
  processor forwards, straight from its window store (``fetch_all`` over window starts, so in
  window-start then key order), every window that closed since the last emit, as
  ``Change(final, None)`` stamped with the aggregate's timestamp. The bookkeeping is the close
  time of the last emit (``last_emit_close_time``), as in Kafka Streams; each emit records how
  many windows it sent on the node's ``emitted-records`` sensor. The emit runs before
  the record is written (Kafka writes first): the windows emitted and the windows written are
  disjoint (closed vs open), so the output is the same, but a record that moves stream time far
  enough to close a window *and* push it out of the store's retention (size + grace by default)
  cannot make the store expire it before its final result is read. Two further differences:
  Kafka throttles the check to once per ``emit interval`` of wall-clock time (1000 ms, an
  internal config its tests set to 0) -- we check on every record, like the stream-join
  spurious-result fix here, so results never depend on the wall clock; and Kafka keeps the
  last emit time in the commit's processor metadata across restarts -- we keep it in memory
  only (after a restart, closed windows still in the store are emitted again).
* Sessions under emit on window close: after each record, every session (any key) whose end
  fell behind the close time since the last emit is forwarded once, as ``Change(final, None)``
  at the session end, ordered by end then start; the store is not cached. The candidates are
  read (past the store's retention bound, as Kafka's time-ordered session store allows) before
  the record is written, and those the record merges away are not emitted: what Kafka Streams
  emits when it reads them after the write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Generic, NoReturn, Protocol, TypeVar

from streams_runtime.kstream.internals.aggregate_processors import AggregateSupplier
from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    InternalProcessorContext,
    ProcessorContext,
    current_node_name,
    internal_context,
)
from streams_runtime.kstream.internals.table_processors import FlushForwarder
from streams_runtime.kstream.windows import SessionWindows, SlidingWindows, TimeWindows
from streams_runtime.processor.api import Headers, Processor, Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.windowed import SessionWindow, Windowed

log = logging.getLogger("streams_runtime.kstream")

NO_TIMESTAMP = -1

#: the windows of a windowed aggregation (``windowed_by``)
AggregationWindows = TimeWindows | SlidingWindows | SessionWindows
W = TypeVar("W", bound=AggregationWindows)


class WindowAggregateSupplier(AggregateSupplier):
    """Topology-level flags of a windowed aggregation (a KTable supplier: always materialized)."""

    def __init__(self, store_name: str, factory: Callable[[WindowAggregateSupplier], Processor]) -> None:
        super().__init__(store_name, factory)
        self.windows: Any = None  # set by the DSL; suppress reads its grace
        self.emit_on_window_close = False  # set by the DSL from its EmitStrategy


class UpdateForwarder(Protocol):
    """Forwards a window aggregate's updates (or holds them back under emit-on-window-close)."""

    cached: bool

    def maybe_forward(
        self, key: Windowed, new: object, old: object, timestamp: int, headers: Headers
    ) -> None: ...


class WindowedTupleForwarder(FlushForwarder):
    """Forwards windowed updates from the cache flush (cached store) or directly."""

    def __init__(
        self, store: object, context: InternalProcessorContext, send_old_values: bool, session: bool
    ) -> None:
        self.session = session
        super().__init__(store, context, send_old_values)

    def maybe_forward(
        self, key: Windowed, new: object, old: object, timestamp: int, headers: Headers
    ) -> None:
        if not self.cached:
            self.context.forward(
                Record(key, Change(new, old if self.send_old_values else None), timestamp, headers)
            )


def no_merger(key: object, aggregate1: object, aggregate2: object) -> NoReturn:
    raise AssertionError("only session windows merge")


class _WindowProcessor(InternalProcessor, Generic[W]):
    """Shared init, stream-time tracking and dropping of the windowed processors."""

    session = False

    def __init__(
        self,
        supplier: WindowAggregateSupplier,
        windows: W,
        initializer: Callable[[], Any],
        aggregator: Callable[[Any, Any, Any], Any],
        merger: Callable[[Any, Any, Any], Any] = no_merger,
    ) -> None:
        self.windows: W = windows
        self.initializer = initializer
        self.aggregator = aggregator
        self.merger = merger  # session windows: the aggregates of two sessions that merge
        self.store_name = supplier.store_name
        self.send_old_values = supplier.send_old_values
        self.grace_ms = windows.grace_ms
        self.observed_stream_time = NO_TIMESTAMP
        self.emit_on_close = supplier.emit_on_window_close
        self.last_emit_close_time = NO_TIMESTAMP

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.store = context.get_state_store(self.store_name)
        if self.emit_on_close:
            # and no flush listener: the cache must not forward
            self.forwarder: UpdateForwarder = _UpdatesHeldBack()
            tags = {"task-id": str(context.task_id), "processor-node-id": current_node_name(context)}
            self.emitted = context.metrics.sensor("emitted-records", "stream-processor-node-metrics", tags)
        else:
            self.forwarder = WindowedTupleForwarder(self.store, context, self.send_old_values, self.session)
        self.dropped = context.metrics.dropped_records(context.task_id)

    def emit_range(self, close_time: int) -> tuple[int, int] | None:
        """Window starts ``(low, high)``, both inclusive, of the windows closed since the last emit."""
        raise NotImplementedError

    def maybe_emit_final(self, record: Record, close_time: int) -> None:
        """Under emit-on-window-close, forward the final result of each window closed since the last emit.

        1. Nothing to do unless the close time moved past the last emit's.
        2. Read the closed windows from the store (``emit_range``; ``None`` = none can have closed).
        3. Forward each as ``Change(final, None)`` with the aggregate's timestamp and this record's
           headers, then remember the close time.
        """
        # Step 1
        if not self.emit_on_close:
            return
        if self.last_emit_close_time != NO_TIMESTAMP and self.last_emit_close_time >= close_time:
            return
        # Step 2
        bounds = self.emit_range(close_time)
        if bounds is None:
            return
        with self.store.fetch_all(*bounds) as closed:
            finals = [(kv.key, kv.value) for kv in closed if kv.value is not None]
        # Step 3
        for windowed, final in finals:
            self.context.forward(Record(windowed, Change(final.value, None), final.timestamp, record.headers))
        self.emitted.record(len(finals))
        self.last_emit_close_time = close_time

    def drop(self, reason: str, record: Record, detail: str = "") -> None:
        """Log (Kafka Streams' message) and count a dropped record."""
        meta = self.context.record_metadata()
        topic, partition, offset = meta or (None, -1, -1)
        log.warning(
            "Skipping record %s. topic=[%s] partition=[%s] offset=[%s]%s",
            reason,
            topic,
            partition,
            offset,
            detail,
        )
        self.dropped.record()


class KStreamWindowAggregate(_WindowProcessor[TimeWindows]):
    """Tumbling and hopping windows (``TimeWindows``); reduce is an aggregate with a None start."""

    def process(self, record: Record) -> None:
        key, timestamp = record.key, record.timestamp
        if key is None:  # a null value is aggregated, as in Kafka Streams (count counts it)
            self.drop("due to null key", record)
            return
        if timestamp > self.observed_stream_time:
            self.observed_stream_time = timestamp
        close_time = self.observed_stream_time - self.grace_ms
        self.maybe_emit_final(record, close_time)
        store = self.store
        for start, window in self.windows.windows_for(timestamp).items():
            if window.end <= close_time:
                self.drop(
                    "for expired window",
                    record,
                    f" timestamp=[{timestamp}] window=[{window.start},{window.end}) "
                    f"expiration=[{close_time}] streamTime=[{self.observed_stream_time}]",
                )
                continue
            old = store.fetch(key, start)
            if old is None:
                old_agg, new_ts = self.initializer(), timestamp
            else:
                old_agg, new_ts = old.value, max(timestamp, old.timestamp)
            new_agg = self.aggregator(key, record.value, old_agg)
            store.put(key, ValueAndTimestamp.make(new_agg, new_ts), start)
            self.forwarder.maybe_forward(Windowed(key, window), new_agg, old_agg, new_ts, record.headers)

    def emit_range(self, close_time: int) -> tuple[int, int] | None:
        """Windows ``[start, start + size)`` closed once ``end <= close time``: starts up to close - size,
        after those (end <= last emit's close time) already emitted."""
        size = self.windows.size_ms
        high = close_time - size
        low = 0 if self.last_emit_close_time == NO_TIMESTAMP else max(0, self.last_emit_close_time - size) + 1
        return (low, high) if 0 <= high and low <= high else None


class _UpdatesHeldBack:
    """The forwarder under emit-on-window-close: window updates are not forwarded."""

    cached = False

    def maybe_forward(
        self, key: Windowed, new: object, old: object, timestamp: int, headers: Headers
    ) -> None:
        return None


class KStreamSessionWindowAggregate(_WindowProcessor[SessionWindows]):
    """Session windows with merging (``SessionWindows``)."""

    session = True

    def init(self, processor_context: ProcessorContext) -> None:
        super().init(processor_context)
        self.gap = self.windows.inactivity_gap_ms

    def process(self, record: Record) -> None:
        key, timestamp = record.key, record.timestamp
        if key is None:
            self.drop("due to null key", record)
            return
        if timestamp > self.observed_stream_time:
            self.observed_stream_time = timestamp
        # A session can still grow for its inactivity gap: it closes gap + grace after its end.
        close_time = self.observed_stream_time - self.grace_ms - self.gap
        closed = self.closed_sessions(close_time)
        new_window = merged_window = SessionWindow(timestamp, timestamp)
        agg = self.initializer()
        merged = []
        with self.store.find_sessions(key, timestamp - self.gap, timestamp + self.gap) as sessions:
            for session, value in sessions:
                merged.append((session, value))
                agg = self.merger(key, agg, value)
                window = session.window
                merged_window = SessionWindow(
                    min(merged_window.start, window.start), max(merged_window.end, window.end)
                )
        removed: list[Windowed] = []
        if merged_window.end < close_time:
            self.drop(
                "for expired window",
                record,
                f" timestamp=[{timestamp}] window=[{merged_window.start},{merged_window.end}] "
                f"expiration=[{close_time}] streamTime=[{self.observed_stream_time}]",
            )
        else:
            headers = record.headers
            if merged_window != new_window:
                for session, value in merged:
                    self.store.remove(session)
                    removed.append(session)
                    self.forwarder.maybe_forward(session, None, value, session.window.end, headers)
            agg = self.aggregator(key, record.value, agg)
            session_key = Windowed(key, merged_window)
            self.store.put(session_key, agg)
            self.forwarder.maybe_forward(session_key, agg, None, merged_window.end, headers)
        if closed is not None:
            self.emit_closed_sessions(record, close_time, closed, removed)

    def closed_sessions(self, close_time: int) -> list[tuple[Windowed, Any]] | None:
        """Under emit-on-window-close, the sessions (every key) that closed since the last emit.

        Sessions ending in ``[max(0, last emit's close time), close time - 1]`` (a session's end is
        inclusive), ordered by end then start, as Kafka's time-ordered session store returns them.
        They are read before this record is written, without the store's retention bound (a
        session closes gap + grace after its end, just when the store's retention would hide
        it). ``None`` when nothing is to be emitted.
        """
        if not self.emit_on_close:
            return None
        if self.last_emit_close_time != NO_TIMESTAMP and self.last_emit_close_time >= close_time:
            return None
        high = close_time - 1
        low = max(0, self.last_emit_close_time)
        if high < 0 or low > high:
            return None
        reader = getattr(self.store, "find_sessions_ending_between", None)
        # a store without the retention-free read (a custom one): the ordinary multi-key read
        sessions = reader(low, high) if callable(reader) else self.store.find_sessions(None, None, low, high)
        with sessions:
            found = [(s, v) for s, v in sessions if low <= s.window.end <= high and v is not None]
        found.sort(key=lambda kv: (kv[0].window.end, kv[0].window.start))
        return found

    def emit_closed_sessions(
        self, record: Record, close_time: int, closed: list[tuple[Windowed, Any]], removed: list[Windowed]
    ) -> None:
        """Forward each closed session's final result (``Change(final, None)`` at the session end),
        except those this record merged away; then remember the close time."""
        gone = set(removed)
        finals = [(s, v) for s, v in closed if s not in gone]
        for session, value in finals:
            self.context.forward(Record(session, Change(value, None), session.window.end, record.headers))
        self.emitted.record(len(finals))
        self.last_emit_close_time = close_time
