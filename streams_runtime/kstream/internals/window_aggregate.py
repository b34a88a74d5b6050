"""Windowed aggregation processors: time windows (tumbling/hopping), sliding windows, sessions.

Owner: the DSL (issue 4); one processor per task, made by a ``WindowAggregateSupplier``.
Kafka Streams' semantics:

* Stream time is the largest timestamp this processor has seen (``observed_stream_time``);
  a window is closed once ``window end <= stream time - grace`` (time/sliding windows; a
  session once ``end < stream time - grace``). A record that would only update closed
  windows is dropped: logged and counted on the task's ``dropped-records`` sensor, never
  silently. Null keys (and null values, except for sessions) are dropped the same way.
* Time windows: the new aggregate's timestamp is max(record ts, previous aggregate ts); the
  update is forwarded as ``Change(new, old)`` keyed by ``Windowed(key, TimeWindow)``, where the
  old value is the initializer's result for a new window (as Kafka Streams does).
* Sessions: the record's session ``[ts, ts]`` merges with every stored session of the key
  within ``inactivity gap``; merged sessions are removed (forwarded as deletes), the merged
  session is stored and forwarded with timestamp = its end.
* Updates go out through the store's cache flush when the store is cached, directly otherwise
  (:class:`WindowedTupleForwarder`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from streams_runtime.kstream.internals.change import Change
from streams_runtime.processor.api import Processor, Record
from streams_runtime.state import ValueAndTimestamp
from streams_runtime.windowed import SessionWindow, Windowed

log = logging.getLogger("streams_runtime.kstream")

NO_TIMESTAMP = -1


class WindowAggregateSupplier:
    """Topology-level flags of a windowed aggregation (a KTable supplier: always materialized)."""

    def __init__(self, store_name: str, factory: Callable[[WindowAggregateSupplier], Processor]) -> None:
        self.store_name = store_name
        self.queryable_name = store_name
        self.send_old_values = False
        self._factory = factory
        self.windows: Any = None  # set by the DSL; suppress reads its grace

    def enable_sending_old_values(self, force_materialization: bool) -> bool:
        self.send_old_values = True
        return True

    def __call__(self) -> Processor:
        return self._factory(self)


class WindowedTupleForwarder:
    """Forwards windowed updates from the cache flush (cached store) or directly."""

    def __init__(self, store: Any, context: Any, send_old_values: bool, session: bool) -> None:
        self.context = context
        self.node = context.current_node
        self.send_old_values = send_old_values
        self.session = session
        listen = getattr(store, "set_flush_listener", None)
        self.cached = bool(listen(self._on_flush, send_old_values)) if callable(listen) else False

    def _on_flush(self, windowed: Windowed, new: Any, old: Any, timestamp: Any) -> None:
        context = self.context
        previous = context.current_node
        context.set_current_node(self.node)
        try:
            rc = context.record_context()
            headers = rc.headers if rc is not None else ()
            if self.session:
                ts = windowed.window.end
                change = Change(new, old if self.send_old_values else None)
            else:
                ts = new.timestamp if new is not None else (timestamp if timestamp is not None else rc.timestamp)
                change = Change(None if new is None else new.value,
                                None if old is None or not self.send_old_values else old.value)
            context.forward(Record(windowed, change, ts, headers))
        finally:
            context.set_current_node(previous)

    def maybe_forward(self, key: Windowed, new: Any, old: Any, timestamp: int, headers: tuple) -> None:
        if not self.cached:
            self.context.forward(Record(key, Change(new, old if self.send_old_values else None), timestamp, headers))


class _WindowProcessor(Processor):
    """Shared init, stream-time tracking and dropping of the windowed processors."""

    session = False

    def __init__(self, supplier: WindowAggregateSupplier, grace_ms: int) -> None:
        self.store_name = supplier.store_name
        self.send_old_values = supplier.send_old_values
        self.grace_ms = grace_ms
        self.observed_stream_time = NO_TIMESTAMP

    def init(self, context: Any) -> None:
        self.context = context
        self.store = context.get_state_store(self.store_name)
        self.forwarder = WindowedTupleForwarder(self.store, context, self.send_old_values, self.session)
        self.dropped = context.metrics.dropped_records(context.task_id)

    def drop(self, reason: str, record: Record, detail: str = "") -> None:
        """Log (Kafka Streams' message) and count a dropped record."""
        meta = self.context.record_metadata()
        topic, partition, offset = meta or (None, -1, -1)
        log.warning("Skipping record %s. topic=[%s] partition=[%s] offset=[%s]%s",
                    reason, topic, partition, offset, detail)
        self.dropped.record()


class KStreamWindowAggregate(_WindowProcessor):
    """Tumbling and hopping windows (``TimeWindows``); reduce is an aggregate with a None start."""

    def __init__(self, supplier: WindowAggregateSupplier, windows: Any, initializer: Callable[[], Any],
                 aggregator: Callable[[Any, Any, Any], Any]) -> None:
        super().__init__(supplier, windows.grace_ms)
        self.windows = windows
        self.initializer = initializer
        self.aggregator = aggregator

    def process(self, record: Record) -> None:
        key, timestamp = record.key, record.timestamp
        if key is None or record.value is None:
            self.drop("due to null key or value", record)
            return
        if timestamp > self.observed_stream_time:
            self.observed_stream_time = timestamp
        close_time = self.observed_stream_time - self.grace_ms
        store = self.store
        for start, window in self.windows.windows_for(timestamp).items():
            if window.end <= close_time:
                self.drop("for expired window", record,
                          f" timestamp=[{timestamp}] window=[{window.start},{window.end}) "
                          f"expiration=[{close_time}] streamTime=[{self.observed_stream_time}]")
                continue
            old = store.fetch(key, start)
            if old is None:
                old_agg, new_ts = self.initializer(), timestamp
            else:
                old_agg, new_ts = old.value, max(timestamp, old.timestamp)
            new_agg = self.aggregator(key, record.value, old_agg)
            store.put(key, ValueAndTimestamp.make(new_agg, new_ts), start)
            self.forwarder.maybe_forward(Windowed(key, window), new_agg, old_agg, new_ts, record.headers)


class KStreamSessionWindowAggregate(_WindowProcessor):
    """Session windows with merging (``SessionWindows``)."""

    session = True

    def __init__(self, supplier: WindowAggregateSupplier, windows: Any, initializer: Callable[[], Any],
                 aggregator: Callable[[Any, Any, Any], Any], merger: Callable[[Any, Any, Any], Any]) -> None:
        super().__init__(supplier, windows.grace_ms)
        self.gap = windows.inactivity_gap_ms
        self.initializer = initializer
        self.aggregator = aggregator
        self.merger = merger

    def process(self, record: Record) -> None:
        key, timestamp = record.key, record.timestamp
        if key is None:
            self.drop("due to null key", record)
            return
        if timestamp > self.observed_stream_time:
            self.observed_stream_time = timestamp
        close_time = self.observed_stream_time - self.grace_ms
        new_window = merged_window = SessionWindow(timestamp, timestamp)
        agg = self.initializer()
        merged = []
        with self.store.find_sessions(key, timestamp - self.gap, timestamp + self.gap) as sessions:
            for session, value in sessions:
                merged.append((session, value))
                agg = self.merger(key, agg, value)
                window = session.window
                merged_window = SessionWindow(min(merged_window.start, window.start),
                                              max(merged_window.end, window.end))
        if merged_window.end < close_time:
            self.drop("for expired window", record,
                      f" timestamp=[{timestamp}] window=[{merged_window.start},{merged_window.end}] "
                      f"expiration=[{close_time}] streamTime=[{self.observed_stream_time}]")
            return
        headers = record.headers
        if merged_window != new_window:
            for session, value in merged:
                self.store.remove(session)
                self.forwarder.maybe_forward(session, None, value, session.window.end, headers)
        agg = self.aggregator(key, record.value, agg)
        session_key = Windowed(key, merged_window)
        self.store.put(session_key, agg)
        self.forwarder.maybe_forward(session_key, agg, None, merged_window.end, headers)
