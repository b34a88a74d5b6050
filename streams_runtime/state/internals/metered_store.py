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

Hot path: ``get``/``put`` call the serdes directly, inside one ``try`` per call, instead of
through :func:`serialize_or_raise`; a failure is wrapped exactly as that function does.

The flush listener given to :meth:`set_flush_listener` receives deserialized keys and values.
The serde resolution, (de)serialization and timing live in :class:`MeteredStoreMixin`, which
the window and session faces of :mod:`.metered_window_store` share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from streams_runtime.errors import InvalidStateStoreError, SerializationError, StreamsConfigError
from streams_runtime.serdes import Serde, serialize_or_raise
from streams_runtime.state.internals.change_logging_store import changelog_topic_name
from streams_runtime.state.internals.iterators import StoreIterator
from streams_runtime.state.internals.store_metrics import StoreMetrics
from streams_runtime.state.internals.timestamped import ValueAndTimestampSerde
from streams_runtime.state.internals.wrapped_store import WrappedKeyValueStore

__all__ = ["MeteredKeyValueStore", "MeteredStoreMixin", "MeteredTimestampedKeyValueStore"]


def _config_value(app_configs: Any, key: str) -> Any:
    if app_configs is None:
        return None
    getter = getattr(app_configs, "get", None)
    if callable(getter):
        return getter(key)
    return getattr(app_configs, key, None)


_TIMED_LEVELS = ("debug", "trace")


def _serde_error(serde: Any, topic: str, side: str, cause: Exception, operation: str) -> SerializationError:
    """The :class:`SerializationError` serialize_or_raise / deserialize_or_raise would raise."""
    name = getattr(serde, "name", None) or type(serde).__name__
    return SerializationError(topic=topic, side=side, serde=name, cause=cause, operation=operation)


def _resolve_serde(serde: Any, context: Any, config_key: str, store_name: str) -> Serde:
    if serde is None:
        serde = _config_value(getattr(context, "app_configs", None), config_key)
    if serde is None:
        raise StreamsConfigError(
            f"store {store_name!r} has no serde and {config_key!r} is not configured; "
            f"give the serde to the store builder or set {config_key!r}"
        )
    if isinstance(serde, type) or (callable(serde) and not hasattr(serde, "serialize")):
        serde = serde()
    return serde


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

    def _setup(
        self,
        key_serde: Serde | None,
        value_serde: Serde | None,
        metrics_scope: str,
        clock_ns: Callable[[], int],
    ) -> None:
        self._key_serde_arg = key_serde
        self._value_serde_arg = value_serde
        self.metrics_scope = metrics_scope
        self._clock_ns = clock_ns
        self.key_serde: Serde | None = None
        self.value_serde: Serde | None = None
        self.topic = ""
        self.store_metrics: StoreMetrics | None = None
        self._timing = False  # measure latencies (metrics_recording_level debug/trace)
        self._sensors: dict[str, Any] = {}

    def init(self, context: Any, root: Any = None) -> None:
        """Resolve the serdes, create the metrics, then init the layers below."""
        self.key_serde = _resolve_serde(self._key_serde_arg, context, "default_key_serde", self.name)
        self.value_serde = self._wrap_value_serde(
            _resolve_serde(self._value_serde_arg, context, "default_value_serde", self.name)
        )
        self.topic = changelog_topic_name(context.application_id, self.name)
        self.store_metrics = StoreMetrics(
            context.task_id, self.metrics_scope, self.name, self.wrapped.approximate_num_entries
        )
        self._sensors = self.store_metrics.sensors
        level = _config_value(getattr(context, "app_configs", None), "metrics_recording_level")
        self._timing = str(level).lower() in _TIMED_LEVELS
        self.wrapped.init(context, root if root is not None else self)

    def _wrap_value_serde(self, serde: Serde) -> Serde:
        if self.timestamped and not isinstance(serde, ValueAndTimestampSerde):
            return ValueAndTimestampSerde(serde)
        return serde

    # -- serdes ------------------------------------------------------------------------------

    def _key_bytes(self, key: Any) -> bytes:
        if key is None:
            raise TypeError("key cannot be None")
        serde = self.key_serde
        try:
            return serde.serialize(self.topic, key)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "key", exc, "serialize") from exc

    def _value_bytes(self, value: Any) -> bytes | None:
        serde = self.value_serde
        try:
            return serde.serialize(self.topic, value)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "value", exc, "serialize") from exc

    def _key_from(self, data: bytes) -> Any:
        serde = self.key_serde
        try:
            return serde.deserialize(self.topic, data)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "key", exc, "deserialize") from exc

    def _value_from(self, data: bytes | None) -> Any:
        serde = self.value_serde
        try:
            return serde.deserialize(self.topic, data)
        except Exception as exc:
            raise _serde_error(serde, self.topic, "value", exc, "deserialize") from exc

    def _timed(self, operation: str, action: Callable[[], Any]) -> Any:
        if self.store_metrics is None:
            raise InvalidStateStoreError(f"store {self.name} is not initialized")
        if not self._timing:
            try:
                return action()
            finally:
                self._sensors[operation].record_count()
        start = self._clock_ns()
        try:
            return action()
        finally:
            self.store_metrics.record(operation, self._clock_ns() - start)

    def flush(self) -> None:
        self._timed("flush", self.wrapped.flush)


class MeteredKeyValueStore(MeteredStoreMixin, WrappedKeyValueStore):
    """Serializes keys/values for the bytes stack below and meters every operation.

    :param wrapped: the store below (caching, change logging or inner).
    :param key_serde: the key serde (``None``: ``default_key_serde``).
    :param value_serde: the value serde (``None``: ``default_value_serde``).
    :param metrics_scope: the ``store-type`` tag, e.g. ``"rocksdb"``.
    """

    def __init__(
        self,
        wrapped: Any,
        key_serde: Serde | None,
        value_serde: Serde | None,
        *,
        metrics_scope: str = "key-value",
        clock_ns: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        super().__init__(wrapped)
        self._setup(key_serde, value_serde, metrics_scope, clock_ns)

    # -- operations --------------------------------------------------------------------------

    # get and put are the per-record path of every aggregation: one frame each when latencies
    # are not measured (the same steps, in the same order, as the timed path).
    def get(self, key: Any) -> Any:
        if self._timing or self.store_metrics is None:
            return self._timed("get", lambda: self._value_from(self.wrapped.get(self._key_bytes(key))))
        try:
            if key is None:
                raise TypeError("key cannot be None")
            serde = self.key_serde
            try:
                raw = serde.serialize(self.topic, key)
            except Exception as exc:
                raise _serde_error(serde, self.topic, "key", exc, "serialize") from exc
            raw = self.wrapped.get(raw)
            serde = self.value_serde
            try:
                return serde.deserialize(self.topic, raw)
            except Exception as exc:
                raise _serde_error(serde, self.topic, "value", exc, "deserialize") from exc
        finally:
            self._sensors["get"].record_count()

    def put(self, key: Any, value: Any) -> None:
        if self._timing or self.store_metrics is None:
            self._timed("put", lambda: self.wrapped.put(self._key_bytes(key), self._value_bytes(value)))
            return
        try:
            if key is None:
                raise TypeError("key cannot be None")
            topic = self.topic
            serde = self.key_serde
            try:
                key_bytes = serde.serialize(topic, key)
            except Exception as exc:
                raise _serde_error(serde, topic, "key", exc, "serialize") from exc
            serde = self.value_serde
            try:
                value_bytes = serde.serialize(topic, value)
            except Exception as exc:
                raise _serde_error(serde, topic, "value", exc, "serialize") from exc
            self.wrapped.put(key_bytes, value_bytes)
        finally:
            self._sensors["put"].record_count()

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
        serde = prefix_key_serde if prefix_key_serde is not None else self.key_serde
        prefix_bytes = serialize_or_raise(serde, self.topic, "key", prefix)
        return self._scan("prefix-scan", lambda: self.wrapped.prefix_scan(prefix_bytes))

    def _bounds(self, from_key: Any, to_key: Any) -> tuple[bytes | None, bytes | None]:
        lower = None if from_key is None else self._key_bytes(from_key)
        upper = None if to_key is None else self._key_bytes(to_key)
        return lower, upper

    def _scan(self, operation: str, open_iterator: Callable[[], StoreIterator]) -> StoreIterator:
        if self.store_metrics is None:
            raise InvalidStateStoreError(f"store {self.name} is not initialized")
        start = self._clock_ns()
        inner = open_iterator()
        metrics = self.store_metrics

        def close() -> None:
            inner.close()
            if self._timing:
                metrics.record(operation, self._clock_ns() - start)
            else:
                metrics.sensors[operation].record_count()

        typed = ((self._key_from(k), self._value_from(v)) for k, v in inner)
        return StoreIterator(typed, on_close=close)

    def set_flush_listener(self, listener: Any, send_old_values: bool = False) -> bool:
        """Register ``listener(key, new_value, old_value, timestamp)`` on the caching layer.

        Keys and values reach the listener deserialized. Returns ``False`` (and registers
        nothing) when the stack has no caching layer: then the caller forwards directly.
        """

        def typed_listener(key: bytes, new: bytes | None, old: bytes | None, timestamp: Any) -> None:
            topic = self.topic
            serde = self.key_serde
            try:
                typed_key = serde.deserialize(topic, key)
            except Exception as exc:
                raise _serde_error(serde, topic, "key", exc, "deserialize") from exc
            serde = self.value_serde
            try:
                typed_new = serde.deserialize(topic, new)
                typed_old = serde.deserialize(topic, old)
            except Exception as exc:
                raise _serde_error(serde, topic, "value", exc, "deserialize") from exc
            listener(typed_key, typed_new, typed_old, timestamp)

        return self.wrapped.set_flush_listener(typed_listener, send_old_values)


class MeteredTimestampedKeyValueStore(MeteredKeyValueStore):
    """The metered face of a timestamped stack: values are :class:`ValueAndTimestamp`.

    ``value_serde`` is the serde of the plain value; the stored bytes are
    ``<8-byte timestamp><value bytes>``.
    """

    timestamped = True
