"""WrappedWindowStore / WrappedSessionStore: the bases of the window and session store wrappers.

Owner: the state side. A window or session store stack is ``Metered -> Caching? ->
ChangeLogging? -> inner`` like a key-value stack; each layer extends one of these classes and
overrides only the operations of its concern, everything else passes to :attr:`wrapped`.
The lifecycle delegation is :class:`.wrapped_store.WrappedStateStore`'s, shared with the
key-value wrappers. Invariants as in :mod:`.wrapped_store`: ``name``/``persistent`` are the
inner store's, lifecycle calls go down the stack in order, ``inner()`` is the innermost store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streams_runtime.state.internals.wrapped_store import WrappedStateStore

if TYPE_CHECKING:
    from streams_runtime.windowed import Windowed

__all__ = ["WrappedSessionStore", "WrappedWindowStore"]


class WrappedWindowStore(WrappedStateStore):
    """A window store that delegates to the store it wraps."""

    @property
    def window_size_ms(self) -> int:
        result: int = self.wrapped.window_size_ms
        return result

    @property
    def retention_period_ms(self) -> int:
        result: int = self.wrapped.retention_period_ms
        return result

    @property
    def retain_duplicates(self) -> bool:
        result: bool = self.wrapped.retain_duplicates
        return result

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> bytes | None:
        result: bytes | None = self.wrapped.put(key, value, window_start_timestamp)
        return result

    def fetch(self, *args: object) -> Any:
        return self.wrapped.fetch(*args)

    def backward_fetch(self, *args: object) -> Any:
        return self.wrapped.backward_fetch(*args)

    def fetch_all(self, time_from: int, time_to: int) -> Any:
        return self.wrapped.fetch_all(time_from, time_to)

    def backward_fetch_all(self, time_from: int, time_to: int) -> Any:
        return self.wrapped.backward_fetch_all(time_from, time_to)

    def all(self) -> Any:
        return self.wrapped.all()

    def backward_all(self) -> Any:
        return self.wrapped.backward_all()


class WrappedSessionStore(WrappedStateStore):
    """A session store that delegates to the store it wraps."""

    @property
    def retention_period_ms(self) -> int:
        result: int = self.wrapped.retention_period_ms
        return result

    def put(self, session: Windowed, value: Any) -> bytes | None:
        result: bytes | None = self.wrapped.put(session, value)
        return result

    def remove(self, session: Windowed) -> bytes | None:
        return self.put(session, None)

    def find_sessions(self, *args: object) -> Any:
        return self.wrapped.find_sessions(*args)

    def backward_find_sessions(self, *args: object) -> Any:
        return self.wrapped.backward_find_sessions(*args)

    def fetch(self, *args: object) -> Any:
        return self.wrapped.fetch(*args)

    def backward_fetch(self, *args: object) -> Any:
        return self.wrapped.backward_fetch(*args)

    def fetch_session(self, key: Any, session_start: int, session_end: int) -> Any:
        return self.wrapped.fetch_session(key, session_start, session_end)
