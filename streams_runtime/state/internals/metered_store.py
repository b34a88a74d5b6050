"""MeteredKeyValueStore: the typed face of a store stack (serdes + metrics).

Owner: the state side; the outermost layer of every key-value store stack, the object
processors get from ``context.get_state_store(name)``. Below it everything is bytes.

Concerns, and nothing else:

* serdes: keys and values are serialized with the store's serdes for the topic
  ``<application_id>-<store>-changelog`` (as Kafka Streams does); failures raise
  :class:`SerializationError` naming that topic, the side and the serde. A serde left ``None``
  is taken from the app config (``default_key_serde`` / ``default_value_serde``) at ``init``.
* metrics: each operation's rate and latency, and the store size (:class:`StoreMetrics`).
  Scans are timed from open to close, like Kafka Streams' metered iterators. Latencies are
  measured only at ``metrics_recording_level`` ``debug``/``trace``; at ``info`` (the default)
  operations are counted (total, rate) without a clock read around each one.

One path per operation: every operation, timed or not, goes through :meth:`MeteredStoreMixin._start`
and :meth:`MeteredStoreMixin._record` (a clock read on each side only when latencies are
measured), except ``get`` and ``put`` of the key-value face when only counted (the default
``info`` level): those two skip the timing and count through the operation's bound
:meth:`Sensor.record_count`, with the same serde helpers (``_key_bytes``, ``_value_bytes``,
``_value_from``) as every other operation. A serde failure is wrapped exactly as
:func:`serialize_or_raise` does.

The flush listener given to :meth:`set_flush_listener` receives deserialized keys and values.
The serde resolution, (de)serialization and timing live in :class:`MeteredStoreMixin`, which
the window and session faces of :mod:`.metered_window_store` share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from streams_runtime.errors import InvalidStateStoreError, SerializationError, StreamsConfigError
from streams_runtime.serdes import Serde, bytes_encoder, is_string_serde, serialize_or_raise
from streams_runtime.state.internals.change_logging_store import changelog_topic_name
from streams_runtime.state.internals.iterators import StoreIterator
from streams_runtime.state.internals.store_metrics import StoreMetrics
from streams_runtime.state.internals.timestamped import ValueAndTimestampSerde
from streams_runtime.state.internals.wrapped_store import WrappedKeyValueStore

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStore, StateStoreContext
    from streams_runtime.state.internals.wrapped_store import KeyValueStoreLayer

__all__ = [
    "MeteredKeyValueStore",
    "MeteredStoreMixin",
    "MeteredTimestampedKeyValueStore",
    "TypedFlushListener",
]

T = TypeVar("T")

#: ``listener(key, new_value, old_value, timestamp)`` of a metered store: keys and values typed
TypedFlushListener = Callable[[object, object, object, int], None]


def _config_value(app_configs: object, key: str) -> object:
    if app_configs is None:
        return None
    getter = getattr(app_configs, "get", None)
    if callable(getter):
        return getter(key)
    return getattr(app_configs, key, None)


_TIMED_LEVELS = ("debug", "trace")


def _serde_error(
    serde: object, topic: str, side: str, cause: Exception, operation: str
) -> SerializationError:
    """The :class:`SerializationError` serialize_or_raise / deserialize_or_raise would raise."""
    name = getattr(serde, "name", None) or type(serde).__name__
    return SerializationError(topic=topic, side=side, serde=name, cause=cause, operation=operation)


def _not_counting() -> None:
    return None


def _first_doing(store: KeyValueStoreLayer, operation: str) -> KeyValueStoreLayer:
    """``store``, or the first store below it whose ``operation`` is more than a delegation
    to the store it wraps (a layer that only forwards ``get`` adds a call and nothing else)."""
    while getattr(type(store), operation, None) is getattr(WrappedKeyValueStore, operation) and hasattr(
        store, "wrapped"
    ):
        store = store.wrapped
    return store


def _resolve_serde(serde: object, context: StateStoreContext, config_key: str, store_name: str) -> Serde:
    """``serde`` (a serde, a serde class or factory), else the app config's ``config_key``."""
    if serde is None:
        serde = _config_value(getattr(context, "app_configs", None), config_key)
    if serde is None:
        raise StreamsConfigError(
            f"store {store_name!r} has no serde and {config_key!r} is not configured; "
            f"give the serde to the store builder or set {config_key!r}"
        )
    if isinstance(serde, type) or (callable(serde) and not hasattr(serde, "serialize")):
        serde = serde()
    return cast(Serde, serde)


class MeteredStoreMixin:
    """Serdes and timing shared by the metered faces of every store kind.

    Mixed into :class:`MeteredKeyValueStore` here and into the window and session faces of
    :mod:`.metered_window_store`, ahead of a wrapper base that provides ``wrapped`` and
    ``name``. ``timestamped`` makes :meth:`init` wrap the value serde in a
    :class:`ValueAndTimestampSerde` (unless it already is one).
    """

    timestamped = False
    wrapped: Any
    name: str
    # the resolved serdes, set by init (every operation checks initialization first)
    _keys: Serde
    _values: Serde

    #: the ``store-type`` tag when the builder gives none
    default_metrics_scope = "key-value"

    def __init__(
        self,
        wrapped: object,
        key_serde: Serde | None,
        value_serde: Serde | None,
        *,
        metrics_scope: str | None = None,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        super().__init__(wrapped)  # type: ignore[call-arg]  # the wrapper base mixed in after this
        self._key_serde_arg = key_serde
        self._value_serde_arg = value_serde
        self.metrics_scope = metrics_scope or self.default_metrics_scope
        self._clock_ns = clock_ns
        self.key_serde: Serde | None = None
        self.value_serde: Serde | None = None
        self.topic = ""
        self.store_metrics: StoreMetrics | None = None
        self._timing = False  # measure latencies (metrics_recording_level debug/trace)
        self._counted = False  # initialized and only counting: get/put skip the timing
        self._sensors: dict[str, Any] = {}
        self._count_get: Callable[[], None] = _not_counting
        self._count_put: Callable[[], None] = _not_counting
        self._count_fetch: Callable[[], None] = _not_counting

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Resolve the serdes, create the metrics, then init the layers below."""
        self.key_serde = _resolve_serde(self._key_serde_arg, context, "default_key_serde", self.name)
        self.value_serde = self._wrap_value_serde(
            _resolve_serde(self._value_serde_arg, context, "default_value_serde", self.name)
        )
        self._keys, self._values = self.key_serde, self.value_serde
        self.topic = changelog_topic_name(context.application_id, self.name)
        self.store_metrics = StoreMetrics(
            context.task_id, self.metrics_scope, self.name, self.wrapped.approximate_num_entries
        )
        self._sensors = self.store_metrics.sensors
        level = _config_value(getattr(context, "app_configs", None), "metrics_recording_level")
        self._timing = str(level).lower() in _TIMED_LEVELS
        self._count_get = self._sensors["get"].record_count
        self._count_put = self._sensors["put"].record_count
        self._count_fetch = self._sensors["fetch"].record_count
        self.wrapped.init(context, root if root is not None else self)
        self._bind_fast_paths()
        self._counted = not self._timing

    def _bind_fast_paths(self) -> None:
        """Bound methods of the counted ``get``/``put`` (the key-value face overrides this)."""

    def _wrap_value_serde(self, serde: Serde) -> Serde:
        if self.timestamped and not isinstance(serde, ValueAndTimestampSerde):
            return ValueAndTimestampSerde(serde)
        return serde

    # -- serdes ------------------------------------------------------------------------------

    def _key_bytes(self, key: object) -> bytes | None:
        if key is None:
            raise TypeError("key cannot be None")
        serde = self._keys
        try:
            return serde.serialize(self.topic, key)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "key", exc, "serialize") from exc

    def _value_bytes(self, value: object) -> bytes | None:
        serde = self._values
        try:
            return serde.serialize(self.topic, value)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "value", exc, "serialize") from exc

    def _key_from(self, data: bytes) -> object:
        serde = self._keys
        try:
            return serde.deserialize(self.topic, data)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "key", exc, "deserialize") from exc

    def _value_from(self, data: bytes | None) -> object:
        serde = self._values
        try:
            return serde.deserialize(self.topic, data)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "value", exc, "deserialize") from exc

    # -- metering: one path for every operation ----------------------------------------------

    def _start(self) -> int:
        """The start of an operation: a clock read when latencies are measured, else 0."""
        if self.store_metrics is None:
            raise InvalidStateStoreError(f"store {self.name} is not initialized")
        return self._clock_ns() if self._timing else 0

    def _record(self, operation: str, start: int) -> None:
        """The end of an operation begun with :meth:`_start`: its latency, or only its count."""
        if self._timing:
            self.store_metrics.record(operation, self._clock_ns() - start)  # type: ignore[union-attr]
        else:
            self._sensors[operation].record_count()

    def _timed(self, operation: str, action: Callable[[], T]) -> T:
        start = self._start()
        try:
            return action()
        finally:
            self._record(operation, start)

    def _typed_scan(
        self, operation: str, open_iterator: Callable[[], StoreIterator], typed_key: Callable[[Any], Any]
    ) -> StoreIterator:
        """A scan of the layer below with typed keys and values, metered from open to close."""
        start = self._start()
        inner = open_iterator()

        def close() -> None:
            inner.close()
            self._record(operation, start)

        typed = ((typed_key(k), self._value_from(v)) for k, v in inner)
        return StoreIterator(
            typed, on_close=close, upstream=inner if isinstance(inner, StoreIterator) else None
        )

    def flush(self) -> None:
        self._timed("flush", self.wrapped.flush)


class MeteredKeyValueStore(MeteredStoreMixin, WrappedKeyValueStore):
    """Serializes keys/values for the bytes stack below and meters every operation.

    :param wrapped: the store below (caching, change logging or inner).
    :param key_serde: the key serde (``None``: ``default_key_serde``).
    :param value_serde: the value serde (``None``: ``default_value_serde``).
    :param metrics_scope: the ``store-type`` tag, e.g. ``"rocksdb"``.
    """

    # -- operations --------------------------------------------------------------------------

    def _bind_fast_paths(self) -> None:
        # the serdes' bound methods, and the first layer below that does more than delegate
        # (the stack is fixed once initialized)
        self._serialize_key = self._keys.serialize
        self._encode_key = bytes_encoder(self._keys)  # a C function for Json/String keys, or None
        self._serialize_value = self._values.serialize
        self._deserialize_value = self._values.deserialize
        self._get_bytes = _first_doing(self.wrapped, "get").get
        self._put_bytes = _first_doing(self.wrapped, "put").put
        # String keys: the bytes of the last key read, reused by a put of that very key (an
        # aggregation reads then writes each key; a str is immutable and Serdes.String is
        # deterministic, so the bytes are the same)
        self._memo_keys = is_string_serde(self._keys)
        self._last_key: Any = None
        self._last_key_bytes: bytes | None = None

    def get(self, key: object) -> Any:
        if not self._counted:  # latencies measured, or not initialized (_start raises)
            return self._timed("get", lambda: self._value_from(self.wrapped.get(self._key_bytes(key))))
        # _key_bytes and _value_from inlined (the hot path of every store read)
        try:
            if key is None:
                raise TypeError("key cannot be None")
            topic = self.topic
            try:
                encode = self._encode_key
                key_bytes = self._serialize_key(topic, key) if encode is None else encode(key)
            except Exception:  # the serde decides (the encoder only knows the common case)
                try:
                    key_bytes = self._serialize_key(topic, key)
                except Exception as exc:
                    raise _serde_error(self._keys, topic, "key", exc, "serialize") from exc
            if self._memo_keys and type(key) is str:
                self._last_key = key
                self._last_key_bytes = key_bytes
            data = self._get_bytes(key_bytes)
            try:
                return self._deserialize_value(topic, data)
            except Exception as exc:
                raise _serde_error(self._values, topic, "value", exc, "deserialize") from exc
        finally:
            self._count_get()

    def put(self, key: Any, value: Any) -> None:
        if not self._counted:  # latencies measured, or not initialized (_start raises)
            self._timed("put", lambda: self.wrapped.put(self._key_bytes(key), self._value_bytes(value)))
            return
        # _key_bytes and _value_bytes inlined (the hot path of every store write)
        try:
            if key is None:
                raise TypeError("key cannot be None")
            topic = self.topic
            if key is self._last_key:
                key_bytes = self._last_key_bytes
            else:
                try:
                    key_bytes = self._serialize_key(topic, key)
                except Exception as exc:
                    raise _serde_error(self._keys, topic, "key", exc, "serialize") from exc
            try:
                value_bytes = self._serialize_value(topic, value)
            except Exception as exc:
                raise _serde_error(self._values, topic, "value", exc, "serialize") from exc
            self._put_bytes(key_bytes, value_bytes)
        finally:
            self._count_put()

    def put_if_absent(self, key: Any, value: Any) -> Any:
        return self._timed(
            "put-if-absent",
            lambda: self._value_from(
                self.wrapped.put_if_absent(self._key_bytes(key), self._value_bytes(value))
            ),
        )

    def put_all(self, entries: Sequence[tuple[Any, Any]]) -> None:
        self._timed(
            "put-all",
            lambda: self.wrapped.put_all([(self._key_bytes(k), self._value_bytes(v)) for k, v in entries]),
        )

    def delete(self, key: Any) -> Any:
        return self._timed("delete", lambda: self._value_from(self.wrapped.delete(self._key_bytes(key))))

    def range(self, from_key: Any = None, to_key: Any = None) -> StoreIterator:
        return self._scan("range", lambda: self.wrapped.range(*self._bounds(from_key, to_key)))

    def reverse_range(self, from_key: Any = None, to_key: Any = None) -> StoreIterator:
        return self._scan("range", lambda: self.wrapped.reverse_range(*self._bounds(from_key, to_key)))

    def all(self) -> StoreIterator:
        return self._scan("all", self.wrapped.all)

    def reverse_all(self) -> StoreIterator:
        return self._scan("all", self.wrapped.reverse_all)

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> StoreIterator:
        """Entries whose serialized key starts with ``prefix`` serialized by ``prefix_key_serde``.

        :param prefix: the prefix object.
        :param prefix_key_serde: its serde (defaults to the store's key serde).
        """
        serde = prefix_key_serde if prefix_key_serde is not None else self._keys
        prefix_bytes = serialize_or_raise(serde, self.topic, "key", prefix)
        return self._scan("prefix-scan", lambda: self.wrapped.prefix_scan(prefix_bytes))

    def _bounds(self, from_key: object, to_key: object) -> tuple[bytes | None, bytes | None]:
        lower = None if from_key is None else self._key_bytes(from_key)
        upper = None if to_key is None else self._key_bytes(to_key)
        return lower, upper

    def _scan(self, operation: str, open_iterator: Callable[[], StoreIterator]) -> StoreIterator:
        return self._typed_scan(operation, open_iterator, self._key_from)

    def set_flush_listener(self, listener: TypedFlushListener, send_old_values: bool = False) -> bool:
        """Register ``listener(key, new_value, old_value, timestamp)`` on the caching layer.

        Keys and values reach the listener deserialized. Returns ``False`` (and registers
        nothing) when the stack has no caching layer: then the caller forwards directly.
        """

        def typed_listener(key: bytes, new: bytes | None, old: bytes | None, timestamp: int) -> None:
            listener(self._key_from(key), self._value_from(new), self._value_from(old), timestamp)

        result: bool = self.wrapped.set_flush_listener(typed_listener, send_old_values)
        return result


class MeteredTimestampedKeyValueStore(MeteredKeyValueStore):
    """The metered face of a timestamped stack: values are :class:`ValueAndTimestamp`.

    ``value_serde`` is the serde of the plain value; the stored bytes are
    ``<8-byte timestamp><value bytes>``.
    """

    timestamped = True
