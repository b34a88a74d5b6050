"""WindowStoreFacade: plain-value access to a timestamped window store (the driver's
``get_window_store``), as Kafka Streams' TopologyTestDriver gives for DSL window stores.

Owner: the test driver. Reads unwrap ``ValueAndTimestamp``; ``put`` stores the value
with timestamp -1 (none), as the key-value facade does.
"""

from __future__ import annotations

from typing import Any

from streams_runtime.state import KeyValue, ValueAndTimestamp
from streams_runtime.state.interfaces import TimestampedWindowStore
from streams_runtime.testing.stores import NO_TIMESTAMP, StoreFacade, _PlainValues, _value


class WindowStoreFacade(StoreFacade[TimestampedWindowStore[Any]]):
    """A timestamped window store seen as a plain window store."""

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> None:
        self.inner.put(
            key,
            None if value is None else ValueAndTimestamp.make(value, NO_TIMESTAMP),
            window_start_timestamp,
        )

    def fetch(self, *args: object) -> Any:
        """``fetch(key, start)`` -> value; 3 or 4 arguments -> iterator of plain values."""
        result = self.inner.fetch(*args)
        return _value(result) if len(args) == 2 else _PlainValues(result)

    def backward_fetch(self, *args: object) -> Any:
        return _PlainValues(self.inner.backward_fetch(*args))

    def fetch_all(self, time_from: int, time_to: int) -> Any:
        return _PlainValues(self.inner.fetch_all(time_from, time_to))

    def backward_fetch_all(self, time_from: int, time_to: int) -> Any:
        return _PlainValues(self.inner.backward_fetch_all(time_from, time_to))

    def all(self) -> Any:
        return _PlainValues(self.inner.all())

    def backward_all(self) -> Any:
        return _PlainValues(self.inner.backward_all())


def is_window_store(store: object) -> bool:
    return callable(getattr(store, "fetch_all", None)) and not callable(getattr(store, "find_sessions", None))


def is_session_store(store: object) -> bool:
    return callable(getattr(store, "find_sessions", None))


__all__ = ["KeyValue", "WindowStoreFacade", "is_session_store", "is_window_store"]
