"""Windowed keys and their serdes: ``Windowed(key, window)``, ``TimeWindow``, ``SessionWindow``.

Owner: the state side (the DSL re-exports these for ``windowed_by`` results). Kafka Streams'
semantics:

* A window is ``[start, end]`` in epoch milliseconds with ``0 <= start <= end``.
* :class:`TimeWindow` (tumbling, hopping, sliding) is half-open ``[start, end)``: its end is
  exclusive and it must be non-empty (``end > start``); two time windows overlap when
  ``a.start < b.end and b.start < a.end``.
* :class:`SessionWindow` is closed ``[start, end]`` (both inclusive; ``start == end`` is a
  session of one record); two sessions overlap when neither ends before the other starts.

Binary layouts (byte for byte those of Kafka Streams, so topics and changelogs are readable by
Java applications):

* time-windowed key: ``<key bytes><8-byte big-endian window start>``; the end is not written,
  the reader adds the window size (``end = start + size``, capped at 2**63-1).
* session-windowed key: ``<key bytes><8-byte end><8-byte start>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streams_runtime.serdes import Serde, bound_serde

__all__ = [
    "MAX_TIMESTAMP",
    "SessionWindow",
    "TimeWindow",
    "Window",
    "Windowed",
    "WindowedSerdes",
    "session_key_from_binary",
    "session_key_to_binary",
    "time_window_for_size",
    "time_windowed_key_from_binary",
    "time_windowed_key_to_binary",
]

MAX_TIMESTAMP = 2**63 - 1
TIMESTAMP_SIZE = 8


def _long(value: int) -> bytes:
    return int(value).to_bytes(TIMESTAMP_SIZE, "big", signed=True)


def _read_long(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset : offset + TIMESTAMP_SIZE], "big", signed=True)


@dataclass(frozen=True, slots=True)
class Window:
    """A window ``[start, end]`` in milliseconds; subclasses define the end's inclusiveness.

    :param start: the window start, ``>= 0``.
    :param end: the window end, ``>= start``.
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0:
            raise ValueError(f"window start cannot be negative, got {self.start}")
        if self.end < self.start:
            raise ValueError(f"window end ({self.end}) cannot be smaller than its start ({self.start})")

    def overlap(self, other: Window) -> bool:
        """Whether the two windows share a point in time (same window type only)."""
        raise NotImplementedError

    def _check_same_type(self, other: Window) -> None:
        if type(other) is not type(self):
            raise TypeError(
                f"cannot compare windows of types {type(self).__name__} and {type(other).__name__}"
            )


@dataclass(frozen=True, slots=True)
class TimeWindow(Window):
    """A time window ``[start, end)``: the end is exclusive and ``end > start``."""

    def __post_init__(self) -> None:
        Window.__post_init__(self)
        if self.end == self.start:
            raise ValueError(
                f"a time window's end must be greater than its start, got [{self.start}, {self.end})"
            )

    def overlap(self, other: Window) -> bool:
        self._check_same_type(other)
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True, slots=True)
class SessionWindow(Window):
    """A session window ``[start, end]``: both ends inclusive, ``start == end`` allowed."""

    def overlap(self, other: Window) -> bool:
        self._check_same_type(other)
        return not (other.end < self.start or self.end < other.start)


@dataclass(frozen=True, slots=True)
class Windowed:
    """A record key together with the window it belongs to (the key of windowed results).

    :param key: the record key.
    :param window: its :class:`TimeWindow` or :class:`SessionWindow`.
    """

    key: Any
    window: Window

    def __str__(self) -> str:
        return f"[{self.key}@{self.window.start}/{self.window.end}]"


def time_window_for_size(start: int, window_size_ms: int) -> TimeWindow:
    """The time window starting at ``start`` of ``window_size_ms`` (end capped at 2**63-1)."""
    return TimeWindow(start, min(start + window_size_ms, MAX_TIMESTAMP))


def time_windowed_key_to_binary(key_bytes: bytes, start: int) -> bytes:
    """``<key bytes><8-byte start>``: a time-windowed key on the wire."""
    return bytes(key_bytes) + _long(start)


def time_windowed_key_from_binary(data: bytes) -> tuple[bytes, int]:
    """Split a time-windowed key into ``(key_bytes, start)``."""
    if len(data) < TIMESTAMP_SIZE:
        raise ValueError(f"a time-windowed key has at least 8 bytes, got {len(data)}")
    return bytes(data[:-TIMESTAMP_SIZE]), _read_long(data, len(data) - TIMESTAMP_SIZE)


def session_key_to_binary(key_bytes: bytes, start: int, end: int) -> bytes:
    """``<key bytes><8-byte end><8-byte start>``: a session-windowed key on the wire."""
    return bytes(key_bytes) + _long(end) + _long(start)


def session_key_from_binary(data: bytes) -> tuple[bytes, int, int]:
    """Split a session-windowed key into ``(key_bytes, start, end)``."""
    if len(data) < 2 * TIMESTAMP_SIZE:
        raise ValueError(f"a session-windowed key has at least 16 bytes, got {len(data)}")
    cut = len(data) - 2 * TIMESTAMP_SIZE
    return bytes(data[:cut]), _read_long(data, cut + TIMESTAMP_SIZE), _read_long(data, cut)


def _inner_bytes(inner: Serde, topic: str, key: object) -> bytes:
    raw = inner.serialize(topic, key)
    if raw is None:
        raise ValueError("the inner serde returned None for a non-None windowed key")
    return raw


class TimeWindowedSerde(Serde):
    """Serde of ``Windowed`` keys of time windows of a fixed size.

    :param inner: the serde of the plain key (None: the app's default, bound by the task at init).
    :param window_size_ms: the window size (to rebuild the end on deserialization).
    """

    def __init__(self, inner: Serde | None, window_size_ms: int) -> None:
        if window_size_ms is None or window_size_ms <= 0:
            raise ValueError(f"window_size_ms must be > 0, got {window_size_ms}")
        super().__init__(f"TimeWindowed({getattr(inner, 'name', type(inner).__name__)})")
        self.inner = inner
        self.window_size_ms = int(window_size_ms)

    def _serialize(self, topic: str, data: Any) -> bytes:
        if not isinstance(data, Windowed):
            raise TypeError(f"expected Windowed, got {type(data).__name__}")
        inner = bound_serde(self.inner, self.name)
        return time_windowed_key_to_binary(_inner_bytes(inner, topic, data.key), data.window.start)

    def _deserialize(self, topic: str, data: bytes) -> Windowed:
        key_bytes, start = time_windowed_key_from_binary(bytes(data))
        inner = bound_serde(self.inner, self.name)
        return Windowed(inner.deserialize(topic, key_bytes), time_window_for_size(start, self.window_size_ms))


class SessionWindowedSerde(Serde):
    """Serde of ``Windowed`` keys of session windows.

    :param inner: the serde of the plain key (None: the app's default, bound by the task at init).
    """

    def __init__(self, inner: Serde | None) -> None:
        super().__init__(f"SessionWindowed({getattr(inner, 'name', type(inner).__name__)})")
        self.inner = inner

    def _serialize(self, topic: str, data: Any) -> bytes:
        if not isinstance(data, Windowed):
            raise TypeError(f"expected Windowed, got {type(data).__name__}")
        raw = _inner_bytes(bound_serde(self.inner, self.name), topic, data.key)
        return session_key_to_binary(raw, data.window.start, data.window.end)

    def _deserialize(self, topic: str, data: bytes) -> Windowed:
        key_bytes, start, end = session_key_from_binary(bytes(data))
        return Windowed(
            bound_serde(self.inner, self.name).deserialize(topic, key_bytes), SessionWindow(start, end)
        )


class WindowedSerdes:
    """Factory of windowed key serdes (Kafka Streams' ``WindowedSerdes``)."""

    @staticmethod
    def time_windowed(inner_serde: Serde, window_size_ms: int) -> TimeWindowedSerde:
        """Serde of ``Windowed`` time-window keys: ``<key><8-byte start>``."""
        return TimeWindowedSerde(inner_serde, window_size_ms)

    @staticmethod
    def session_windowed(inner_serde: Serde) -> SessionWindowedSerde:
        """Serde of ``Windowed`` session keys: ``<key><8-byte end><8-byte start>``."""
        return SessionWindowedSerde(inner_serde)
