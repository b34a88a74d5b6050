"""KStream-KStream join processors: the join-window buffers, both join sides, the outer store.

Owner: the DSL; wired by :mod:`join_builders`. Kafka Streams 3.x semantics:

* Each side's records are buffered in its own window store (``KStreamJoinWindow``: forward,
  then put ``(key, value)`` at the record's timestamp; retention = before + after + grace).
* A record at ``t`` of the left side joins the right store's records in ``[t - before,
  t + after]`` (the right side looks ``[t - after, t + before]``); each match is forwarded at
  ``max(t, other t)``. Null keys or values are dropped (counted on ``dropped-records``), except
  that an outer side forwards a null-key record at once as ``joiner(None, value, None)``.
* Left/outer joins (the spurious-result fix): a record without a match is not emitted at once
  but kept in the shared outer store ``(timestamp, side, key) -> [values]``; a later match on
  the other side deletes it. When a record advances the join's stream time (shared by both
  sides of the task), entries whose window + grace has closed are emitted as
  ``joiner(key, value, None)`` (or ``(key, None, value)``) at their own timestamp, oldest first
  (right before left at equal time). Kafka can throttle this scan to once per wall-clock
  interval (an internal config, 1000 ms there; its tests set 0); we do not throttle
  (:data:`EMIT_INTERVAL_MS` = 0), so results never depend on the wall clock. A record whose
  window has already closed when it arrives is emitted immediately.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from streams_runtime.errors import StreamsError
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
    join_null_input,
)
from streams_runtime.kstream.windows import JoinWindows
from streams_runtime.processor.api import Record
from streams_runtime.serdes import Serde, bound_serde
from streams_runtime.state.interfaces import KeyValueStore

log = logging.getLogger("streams_runtime.kstream")

EMIT_INTERVAL_MS = 0
MAX_TIME = 2**63 - 1
_LONG = struct.Struct(">q")
_LEN = struct.Struct(">i")


class KStreamJoinWindow(InternalProcessor):
    """Buffers one side's records in its window store (the store's retention drops them)."""

    def __init__(self, store_name: str) -> None:
        self.store_name = store_name

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.forward = context.forward
        self.window = context.get_state_store(self.store_name)

    def process(self, record: Record) -> None:
        self.forward(record)
        if record.key is not None and record.value is not None:
            self.window.put(record.key, record.value, record.timestamp)


class TimeTracker:
    """Stream time and outer-store bookkeeping shared by both sides of one join in one task."""

    __slots__ = ("stream_time", "min_time", "next_time_to_emit", "emit_interval_ms")

    def __init__(self) -> None:
        self.stream_time = -1
        self.min_time = MAX_TIME
        self.next_time_to_emit = 0
        self.emit_interval_ms = EMIT_INTERVAL_MS


class TimeTrackerSupplier:
    """One TimeTracker per task, shared by the two join processors of that task."""

    def __init__(self) -> None:
        self._trackers: dict[Any, TimeTracker] = {}

    def get(self, task_id: object) -> TimeTracker:
        tracker = self._trackers.get(task_id)
        if tracker is None:
            tracker = self._trackers[task_id] = TimeTracker()
        return tracker

    def remove(self, task_id: object) -> None:
        self._trackers.pop(task_id, None)


class OuterKey(NamedTuple):
    """A key of the outer store: ordered by timestamp, then side (right first), then key bytes."""

    timestamp: int
    is_left: bool
    key: Any


class OuterKeySerde(Serde):
    """``<8-byte timestamp><1 byte: 1 left, 0 right><key bytes>``; the inner serde is bound at init."""

    def __init__(self, inner: Serde | None) -> None:
        super().__init__("TimestampedKeyAndJoinSide")
        self.inner = inner

    def _serialize(self, topic: str, data: OuterKey) -> bytes:
        key = bound_serde(self.inner, self.name).serialize(topic, data.key)
        if key is None:
            raise StreamsError(f"{self.name}: the key serde gave no bytes for key {data.key!r}")
        return _LONG.pack(data.timestamp) + (b"\x01" if data.is_left else b"\x00") + key

    def _deserialize(self, topic: str, data: bytes) -> OuterKey:
        inner = bound_serde(self.inner, self.name)
        return OuterKey(_LONG.unpack_from(data)[0], data[8] == 1, inner.deserialize(topic, bytes(data[9:])))


class LeftOrRightListSerde(Serde):
    """A list of ``(is_left, value)``: per item a side byte, a 4-byte length and the value bytes."""

    def __init__(self, left: Serde | None, right: Serde | None) -> None:
        super().__init__("LeftOrRightValueList")
        self.left = left
        self.right = right

    def _serialize(self, topic: str, data: list[tuple[bool, Any]]) -> bytes:
        out = bytearray()
        for is_left, value in data:
            raw = bound_serde(self.left if is_left else self.right, self.name).serialize(topic, value) or b""
            out += (b"\x01" if is_left else b"\x00") + _LEN.pack(len(raw)) + raw
        return bytes(out)

    def _deserialize(self, topic: str, data: bytes) -> list[tuple[bool, Any]]:
        items, offset = [], 0
        while offset < len(data):
            is_left = data[offset] == 1
            (length,) = _LEN.unpack_from(data, offset + 1)
            raw = bytes(data[offset + 5 : offset + 5 + length])
            serde = bound_serde(self.left if is_left else self.right, self.name)
            items.append((is_left, serde.deserialize(topic, raw)))
            offset += 5 + length
        return items


class KStreamKStreamJoinSide(InternalProcessor):
    """One side of a windowed stream-stream join (see the module docstring).

    :param joiner: ``joiner(key, this_value, other_value)`` (already reversed for the right side).
    :param outer: emit this side's records that find no match (left side of a left join, both of
        an outer join).
    """

    def __init__(
        self,
        other_store: str,
        is_left: bool,
        windows: JoinWindows,
        joiner: Callable[[Any, Any, Any], Any],
        outer: bool,
        outer_store: str | None,
        trackers: TimeTrackerSupplier,
        serde_binder: Callable[[Any], None] | None = None,
    ) -> None:
        self.other_store_name = other_store
        self.is_left = is_left
        self.before = windows.before_ms if is_left else windows.after_ms
        self.after = windows.after_ms if is_left else windows.before_ms
        self.windows_before = windows.before_ms
        self.windows_after = windows.after_ms
        self.grace = windows.grace_ms
        self.joiner = joiner
        self.outer = outer
        self.outer_store_name = outer_store
        self.trackers = trackers
        self.serde_binder = serde_binder

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.forward = context.forward
        self.other = context.get_state_store(self.other_store_name)
        self.outer_store = context.get_state_store(self.outer_store_name) if self.outer_store_name else None
        self.tracker = self.trackers.get(context.task_id)
        self.dropped = context.metrics.dropped_records(context.task_id)
        if self.serde_binder is not None:
            self.serde_binder(context)

    def close(self) -> None:
        self.trackers.remove(getattr(self.context, "task_id", None))

    def process(self, record: Record) -> None:
        key, value, ts = record.key, record.value, record.timestamp
        tracker = self.tracker
        if ts > tracker.stream_time:
            tracker.stream_time = ts
        if key is None or value is None:
            join_null_input(self, record, key, self.outer, "key or value")
            return
        outer_store = self.outer_store
        if outer_store is not None and ts == tracker.stream_time:
            self._emit_non_joined(record, outer_store)
        time_from = max(0, ts - self.before)
        time_to = max(0, ts + self.after)
        with self.other.fetch(key, time_from, time_to) as matches:
            found = False
            for other_ts, other_value in matches:
                found = True
                if outer_store is not None:
                    other_key = OuterKey(other_ts, not self.is_left, key)
                    if outer_store.get(other_key) is not None:
                        outer_store.delete(other_key)
                self.forward(
                    Record(key, self.joiner(key, value, other_value), max(ts, other_ts), record.headers)
                )
        if self.outer and not found:
            if outer_store is None or time_to < tracker.stream_time:
                self.forward(record.with_value(self.joiner(key, value, None)))
            else:
                if ts < tracker.min_time:
                    tracker.min_time = ts
                this_key = OuterKey(ts, self.is_left, key)
                values = outer_store.get(this_key) or []
                values.append((self.is_left, value))
                outer_store.put(this_key, values)

    def _window_open(self, key: OuterKey) -> bool:
        look_back = self.windows_after if key.is_left else self.windows_before
        return self.tracker.min_time + look_back + self.grace >= self.tracker.stream_time

    def _emit_non_joined(
        self, record: Record, store: KeyValueStore[OuterKey, list[tuple[bool, Any]]]
    ) -> None:
        tracker = self.tracker
        if tracker.min_time + self.after + self.grace >= tracker.stream_time:
            return
        now = self.context.current_system_time_ms()
        if now < tracker.next_time_to_emit:
            return
        tracker.next_time_to_emit = now + tracker.emit_interval_ms
        tracker.min_time = MAX_TIME
        emitted: list[OuterKey] = []
        left_open = right_open = False
        with store.all() as entries:
            for outer_key, values in entries:
                tracker.min_time = outer_key.timestamp
                if left_open and right_open:
                    break
                if self._window_open(outer_key):
                    if outer_key.is_left:
                        left_open = True
                    else:
                        right_open = True
                    continue
                for is_left, value in values:
                    left, right = (value, None) if is_left else (None, value)
                    this, other = (left, right) if self.is_left else (right, left)
                    self.forward(
                        Record(
                            outer_key.key,
                            self.joiner(outer_key.key, this, other),
                            outer_key.timestamp,
                            record.headers,
                        )
                    )
                emitted.append(outer_key)
        for outer_key in emitted:
            store.put(outer_key, None)
