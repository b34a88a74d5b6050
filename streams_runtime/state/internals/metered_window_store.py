"""MeteredWindowStore / MeteredSessionStore: the typed faces of window and session stacks.

Owner: the state side; the outermost layer, the object processors get from
``context.get_state_store(name)``. Concerns, as for :mod:`.metered_store`: serdes (keys and
values serialized for the topic ``<application_id>-<store>-changelog``; failures raise
:class:`SerializationError`; ``None`` serdes resolved from the app config at ``init``) and
metrics (``put``, ``fetch``, ``remove``, ``flush`` rates and latencies; scans timed from open
to close). Results come back typed: ``Windowed(key, window)`` keys, deserialized values; the
flush listener also receives typed ``Windowed`` keys and values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams_runtime.state.internals.iterators import StoreIterator
from streams_runtime.state.internals.metered_store import MeteredStoreMixin, TypedFlushListener
from streams_runtime.state.internals.wrapped_window_store import WrappedSessionStore, WrappedWindowStore
from streams_runtime.windowed import Windowed

__all__ = ["MeteredSessionStore", "MeteredTimestampedWindowStore", "MeteredWindowStore"]


class _Metered(MeteredStoreMixin):
    """Serdes and metrics shared by the window and session faces (the rest is the mixin's)."""

    def _optional_key_bytes(self, key: object) -> bytes | None:
        return None if key is None else self._key_bytes(key)

    def _windowed_from(self, windowed: Windowed) -> Windowed:
        return Windowed(self._key_from(windowed.key), windowed.window)

    def _scan(
        self, open_iterator: Callable[[], StoreIterator], typed_key: Callable[[Any], Any]
    ) -> StoreIterator:
        return self._typed_scan("fetch", open_iterator, typed_key)

    def set_flush_listener(self, listener: TypedFlushListener, send_old_values: bool = False) -> bool:
        """Register ``listener(Windowed(key, window), new, old, timestamp)`` on the caching layer.

        ``False`` (nothing registered) when the stack has no cache: the caller forwards directly.
        """

        def typed(windowed: Windowed, new: bytes | None, old: bytes | None, timestamp: int) -> None:
            listener(self._windowed_from(windowed), self._value_from(new), self._value_from(old), timestamp)

        result: bool = self.wrapped.set_flush_listener(typed, send_old_values)
        return result


class MeteredWindowStore(_Metered, WrappedWindowStore):
    """The typed window store: ``put(key, value, window_start)``, ``fetch(...)``, ...

    :param wrapped: the store below.
    :param key_serde: the serde of the plain key (``None``: ``default_key_serde``).
    :param value_serde: the value serde (``None``: ``default_value_serde``).
    :param metrics_scope: the ``store-type`` tag.
    """

    default_metrics_scope = "window"

    # put and the point fetch: the operation in this frame, counted (or timed, at debug level) in
    # its ``finally`` (the hot path of every windowed aggregation: no closure, no timing frames)
    def put(self, key: Any, value: Any, window_start_timestamp: int) -> None:
        counted = self._counted
        start = 0 if counted else self._start()
        try:
            self.wrapped.put(self._key_bytes(key), self._value_bytes(value), window_start_timestamp)
        finally:
            if counted:
                self._count_put()
            else:
                self._record("put", start)

    def fetch(self, *args: object) -> Any:
        """Typed fetch by arity.

        ``fetch(key, window_start)`` -> value; ``fetch(key, time_from, time_to)`` -> iterator of
        ``KeyValue(start, value)``; ``fetch(key_from, key_to, time_from, time_to)`` -> iterator of
        ``KeyValue(Windowed(key, window), value)``.
        """
        if len(args) != 2:
            return self._fetch(args, reverse=False)
        key, window_start = args
        counted = self._counted
        start = 0 if counted else self._start()
        try:
            return self._value_from(self.wrapped.fetch(self._key_bytes(key), window_start))
        finally:
            if counted:
                self._count_fetch()
            else:
                self._record("fetch", start)

    def backward_fetch(self, *args: object) -> StoreIterator:
        return self._fetch(args, reverse=True)

    def _fetch(self, args: tuple[Any, ...], *, reverse: bool) -> StoreIterator:
        call = self.wrapped.backward_fetch if reverse else self.wrapped.fetch
        if len(args) == 3:
            key, time_from, time_to = args
            return self._scan(lambda: call(self._key_bytes(key), time_from, time_to), _same)
        if len(args) == 4:
            key_from, key_to, time_from, time_to = args
            return self._scan(
                lambda: call(
                    self._optional_key_bytes(key_from), self._optional_key_bytes(key_to), time_from, time_to
                ),
                self._windowed_from,
            )
        raise TypeError(f"fetch takes 2, 3 or 4 arguments, got {len(args)}")

    def fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        return self._scan(lambda: self.wrapped.fetch_all(time_from, time_to), self._windowed_from)

    def backward_fetch_all(self, time_from: int, time_to: int) -> StoreIterator:
        return self._scan(lambda: self.wrapped.backward_fetch_all(time_from, time_to), self._windowed_from)

    def all(self) -> StoreIterator:
        return self._scan(self.wrapped.all, self._windowed_from)

    def backward_all(self) -> StoreIterator:
        return self._scan(self.wrapped.backward_all, self._windowed_from)


class MeteredTimestampedWindowStore(MeteredWindowStore):
    """The typed face of a timestamped window stack: values are ``ValueAndTimestamp``."""

    timestamped = True


class MeteredSessionStore(_Metered, WrappedSessionStore):
    """The typed session store: ``put(Windowed(key, SessionWindow), value)``, ``find_sessions``, ...

    :param wrapped: the store below.
    :param key_serde: the serde of the plain key (``None``: ``default_key_serde``).
    :param value_serde: the aggregate's serde (``None``: ``default_value_serde``).
    """

    default_metrics_scope = "session"

    def _session_bytes(self, session: Windowed) -> Windowed:
        if not isinstance(session, Windowed):
            raise TypeError(f"session stores take Windowed keys, got {type(session).__name__}")
        return Windowed(self._key_bytes(session.key), session.window)

    def put(self, session: Windowed, value: Any) -> None:
        self._timed("put", lambda: self.wrapped.put(self._session_bytes(session), self._value_bytes(value)))

    def remove(self, session: Windowed) -> None:
        self._timed("remove", lambda: self.wrapped.put(self._session_bytes(session), None))

    def fetch_session(self, key: object, session_start: int, session_end: int) -> Any:
        return self._timed(
            "fetch",
            lambda: self._value_from(
                self.wrapped.fetch_session(self._key_bytes(key), session_start, session_end)
            ),
        )

    def find_sessions(self, *args: object) -> StoreIterator:
        """``find_sessions(key, earliest_session_end, latest_session_start)`` or with a key range."""
        return self._scan(lambda: self.wrapped.find_sessions(*self._keys_of(args, 2)), self._windowed_from)

    def backward_find_sessions(self, *args: object) -> StoreIterator:
        return self._scan(
            lambda: self.wrapped.backward_find_sessions(*self._keys_of(args, 2)), self._windowed_from
        )

    def find_sessions_ending_between(self, earliest_end: int, latest_end: int) -> StoreIterator:
        """Sessions of every key ending in the range, retention not applied (emit on window close);
        read from the bytes store at the bottom of the stack (never cached under that strategy)."""
        return self._scan(
            lambda: self.wrapped.inner().find_sessions_ending_between(earliest_end, latest_end),
            self._windowed_from,
        )

    def fetch(self, *args: object) -> StoreIterator:
        """``fetch(key)`` or ``fetch(key_from, key_to)``: every live session."""
        return self._scan(lambda: self.wrapped.fetch(*self._keys_of(args, 0)), self._windowed_from)

    def backward_fetch(self, *args: object) -> StoreIterator:
        return self._scan(lambda: self.wrapped.backward_fetch(*self._keys_of(args, 0)), self._windowed_from)

    def _keys_of(self, args: tuple[Any, ...], times: int) -> tuple[Any, ...]:
        keys = args[: len(args) - times]
        if len(keys) == 1:
            return (self._key_bytes(keys[0]), *args[1:])
        if len(keys) == 2:
            return (self._optional_key_bytes(keys[0]), self._optional_key_bytes(keys[1]), *args[2:])
        raise TypeError(f"expected a key or a key range, got {len(keys)} keys")


def _same(value: object) -> object:
    return value
