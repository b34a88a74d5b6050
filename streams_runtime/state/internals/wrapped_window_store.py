"""WrappedWindowStore / WrappedSessionStore: the bases of the window and session store wrappers.

Owner: the state side. A window or session store stack is ``Metered -> Caching? ->
ChangeLogging? -> inner`` like a key-value stack; each layer extends one of these classes and
overrides only the operations of its concern, everything else passes to :attr:`wrapped`.
Invariants as in :mod:`.wrapped_store`: ``name``/``persistent`` are the inner store's, lifecycle
calls go down the stack in order, ``inner()`` is the innermost store.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WrappedSessionStore", "WrappedWindowStore"]


class _WrappedSegmentedStore:
    """Lifecycle delegation shared by the window and session wrappers.

    :param wrapped: the next store down the stack.
    """

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    @property
    def name(self) -> str:
        return self.wrapped.name

    @property
    def persistent(self) -> bool:
        return self.wrapped.persistent

    def init(self, context: Any, root: Any = None) -> None:
        self.wrapped.init(context, root if root is not None else self)

    def is_open(self) -> bool:
        return self.wrapped.is_open()

    def flush(self) -> None:
        self.wrapped.flush()

    def close(self) -> None:
        self.wrapped.close()

    def inner(self) -> Any:
        return self.wrapped.inner()

    def set_flush_listener(self, listener: Any, send_old_values: bool = False) -> bool:
        return self.wrapped.set_flush_listener(listener, send_old_values)

    def approximate_num_entries(self) -> int:
        return self.wrapped.approximate_num_entries()


class WrappedWindowStore(_WrappedSegmentedStore):
    """A window store that delegates to the store it wraps."""

    @property
    def window_size_ms(self) -> int:
        return self.wrapped.window_size_ms

    @property
    def retention_period_ms(self) -> int:
        return self.wrapped.retention_period_ms

    @property
    def retain_duplicates(self) -> bool:
        return self.wrapped.retain_duplicates

    def put(self, key: Any, value: Any, window_start_timestamp: int) -> Any:
        return self.wrapped.put(key, value, window_start_timestamp)

    def fetch(self, *args: Any) -> Any:
        return self.wrapped.fetch(*args)

    def backward_fetch(self, *args: Any) -> Any:
        return self.wrapped.backward_fetch(*args)

    def fetch_all(self, time_from: int, time_to: int) -> Any:
        return self.wrapped.fetch_all(time_from, time_to)

    def backward_fetch_all(self, time_from: int, time_to: int) -> Any:
        return self.wrapped.backward_fetch_all(time_from, time_to)

    def all(self) -> Any:
        return self.wrapped.all()

    def backward_all(self) -> Any:
        return self.wrapped.backward_all()


class WrappedSessionStore(_WrappedSegmentedStore):
    """A session store that delegates to the store it wraps."""

    @property
    def retention_period_ms(self) -> int:
        return self.wrapped.retention_period_ms

    def put(self, session: Any, value: Any) -> Any:
        return self.wrapped.put(session, value)

    def remove(self, session: Any) -> Any:
        return self.put(session, None)

    def find_sessions(self, *args: Any) -> Any:
        return self.wrapped.find_sessions(*args)

    def backward_find_sessions(self, *args: Any) -> Any:
        return self.wrapped.backward_find_sessions(*args)

    def fetch(self, *args: Any) -> Any:
        return self.wrapped.fetch(*args)

    def backward_fetch(self, *args: Any) -> Any:
        return self.wrapped.backward_fetch(*args)

    def fetch_session(self, key: Any, session_start: int, session_end: int) -> Any:
        return self.wrapped.fetch_session(key, session_start, session_end)
