"""Versioned key-value stores (KIP-889): every key keeps its value history for ``history_retention``.

Owner: the state side. A versioned store holds, per key, the latest version and the older
versions (tombstones included: a tombstone ends the validity of the version before it). Rules,
as Kafka Streams' versioned stores:

* ``put(key, value, timestamp)`` inserts a version; a put at an existing timestamp replaces it.
  It returns the validity end of the version written: ``PUT_RETURN_CODE_VALID_TO_UNDEFINED``
  (-1) when it is the latest, the timestamp of the next newer version otherwise, and
  ``PUT_RETURN_CODE_NOT_PUT`` when ``timestamp`` is older than ``observed stream time -
  history_retention`` (nothing is written; the put, and a delete as old, is logged and counted
  on the task's ``dropped-records``, as in Kafka Streams). Stream time is the largest timestamp
  put so far.
* ``get(key)`` is the latest version (``None`` when it is a tombstone or absent);
  ``get(key, as_of)`` the version valid at ``as_of``; below ``stream time - history_retention``
  only the latest version can answer (older history has expired).
* ``delete(key, timestamp)`` puts a tombstone and returns the version it ended (or ``None``).
* ``versions(key, from_time, to_time, ascending)`` lists the versions valid in a time range.

Layout: the inner bytes store (in-memory or RocksDB, from the supplier) keeps one entry per key:
versions newest first, each ``timestamp(8) | flag(1) | value bytes`` framed by a 4-byte length;
stream time lives under a reserved key. The changelog gets each put as ``(key, value or
tombstone)`` with the version timestamp as the record timestamp; restore (and standby) replays
the puts. Versions no query can reach any more (valid until before ``stream time -
history_retention``) are pruned when their key is written.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from streams_runtime.state.internals.builders import StoreBuilderBase, StoreSupplierBase
from streams_runtime.state.internals.bytes_store import AbstractBytesStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.serdes import Serde
    from streams_runtime.state.interfaces import StateStore, StateStoreContext
    from streams_runtime.state.internals.wrapped_store import FlushListener

PUT_RETURN_CODE_VALID_TO_UNDEFINED = -1
PUT_RETURN_CODE_NOT_PUT = -(2**63)

LOG = logging.getLogger(__name__)
_STREAM_TIME_KEY = b"\x00\x00__versioned_stream_time__"
_HEAD = struct.Struct(">qBi")  # timestamp, has value, length
_NO_TIME = -(2**63)


@dataclass(frozen=True)
class VersionedRecord:
    """A value with the timestamp it became valid and (unless latest) when it stopped being valid."""

    value: Any
    timestamp: int
    valid_to: int | None = None


def _encode(versions: list[tuple[int, bytes | None]]) -> bytes:
    out = bytearray()
    for ts, value in versions:
        out += _HEAD.pack(ts, 0 if value is None else 1, len(value or b""))
        out += value or b""
    return bytes(out)


def _decode(data: bytes | None) -> list[tuple[int, bytes | None]]:
    if not data:
        return []
    versions, pos = [], 0
    while pos < len(data):
        ts, has_value, length = _HEAD.unpack_from(data, pos)
        pos += _HEAD.size
        versions.append((ts, bytes(data[pos : pos + length]) if has_value else None))
        pos += length
    return versions


class VersionedBytesStoreSupplier(StoreSupplierBase):
    """Makes the inner bytes store of a versioned store; carries the history retention."""

    def __init__(
        self,
        name: str,
        history_retention_ms: int,
        make: Callable[[str], AbstractBytesStore],
        scope: str,
        persistent: bool,
    ) -> None:
        super().__init__(name, scope, persistent)
        if int(history_retention_ms) < 0:
            raise ValueError(f"history_retention must be >= 0, got {history_retention_ms}")
        self.history_retention_ms = int(history_retention_ms)
        self._make = make

    def get(self) -> AbstractBytesStore:
        return self._make(self._name)

    def __repr__(self) -> str:
        retention = self.history_retention_ms
        return f"<VersionedBytesStoreSupplier {self._name} {self._metrics_scope} retention={retention}>"


class VersionedKeyValueStoreBuilder(StoreBuilderBase[AbstractBytesStore]):
    """Builds versioned stores; logging on by default (caching does not apply to them)."""

    def __init__(
        self, supplier: object, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> None:
        if not isinstance(supplier, VersionedBytesStoreSupplier):
            raise TypeError(
                "supplier must come from Stores.*_versioned_key_value_store(name, history_retention)"
            )
        super().__init__(supplier, key_serde, value_serde)
        self._supplier: VersionedBytesStoreSupplier = supplier

    @property
    def history_retention_ms(self) -> int:
        return self._supplier.history_retention_ms

    @property
    def log_config(self) -> dict[str, str]:
        # history must outlive compaction: keep at least retention + one day uncompacted
        config = {"min.compaction.lag.ms": str(self.history_retention_ms + 86_400_000)}
        config.update(self._log_config)
        return config

    def build(self) -> VersionedKeyValueStore:
        return VersionedKeyValueStore(
            self._supplier.get(),
            self._supplier.history_retention_ms,
            self._key_serde,
            self._value_serde,
            self._logging_enabled,
        )


class _RegisterAs:
    """The task's context as the inner store sees it: registers the versioned store instead."""

    def __init__(
        self, context: StateStoreContext, outer: VersionedKeyValueStore, changelog_topic: str | None
    ) -> None:
        self._context = context
        self._outer = outer
        self._changelog_topic = changelog_topic

    def register(
        self, store: object, restore_callback: object, *, changelog_topic: str | None = None
    ) -> None:
        self._context.register(self._outer, self._outer.restore_batch, changelog_topic=self._changelog_topic)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._context, attribute)


@dataclass(eq=False)
class VersionedKeyValueStore:
    """See the module docstring. ``timestamped``/``versioned`` tell the restore path to hand
    ``(key, (value, timestamp))`` records to :meth:`restore_batch`.

    :param wrapped: the inner bytes store (the versions of a key are one value in it).
    :param key_serde: the key serde (``None``: the app's default, resolved at ``init``).
    :param value_serde: the value serde (likewise).
    :param logging: write each put to the changelog.
    """

    timestamped = True
    versioned = True

    wrapped: AbstractBytesStore
    history_retention_ms: int
    key_serde: Serde | None
    value_serde: Serde | None
    logging: bool
    context: Any = field(default=None, init=False)
    stream_time: int = field(default=_NO_TIME, init=False)
    _dropped: Any = field(default=None, init=False)  # the task's dropped-records sensor, once initialized
    _keys: Serde = field(init=False)  # the resolved serdes, set by init
    _values: Serde = field(init=False)

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self.wrapped.name)

    @property
    def persistent(self) -> bool:
        return bool(getattr(self.wrapped, "persistent", False))

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        from streams_runtime.state.internals.change_logging_store import changelog_topic_name

        self.context = context
        metrics: Any = getattr(context, "metrics", None)
        task_id = getattr(context, "task_id", None)
        if task_id is not None and callable(getattr(metrics, "dropped_records", None)):
            self._dropped = metrics.dropped_records(task_id)
        configs = context.app_configs
        if self.key_serde is None:
            self.key_serde = configs.default_serde("key")
        if self.value_serde is None:
            self.value_serde = configs.default_serde("value")
        self._keys, self._values = self.key_serde, self.value_serde
        topic = changelog_topic_name(context.application_id, self.name) if self.logging else None
        self.wrapped.init(_RegisterAs(context, self, topic), self)
        raw = self.wrapped.get(_STREAM_TIME_KEY)
        self.stream_time = struct.unpack(">q", raw)[0] if raw else _NO_TIME

    def inner(self) -> StateStore:
        return self.wrapped.inner() if callable(getattr(self.wrapped, "inner", None)) else self.wrapped

    def is_open(self) -> bool:
        return bool(self.wrapped.is_open())

    def flush(self) -> None:
        self.wrapped.flush()

    def close(self) -> None:
        self.wrapped.close()

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool = False) -> bool:
        return False  # versioned stores do not cache

    # -- typed operations --------------------------------------------------------------------
    def _key(self, key: object) -> bytes:
        if key is None:
            raise ValueError("key cannot be null")
        return bytes(cast("bytes", self._keys.serialize(self._topic(), key)))

    def _topic(self) -> str:
        return f"{self.context.application_id}-{self.name}-changelog" if self.context else self.name

    def put(self, key: Any, value: Any, timestamp: int | None = None) -> int:
        """Insert a version; returns its validity end (see the module docstring).

        ``put(key, ValueAndTimestamp)`` (no ``timestamp``) is accepted for DSL processors that
        write timestamped values."""
        if timestamp is None:
            if not hasattr(value, "timestamp"):
                raise TypeError("a versioned store put needs a timestamp: put(key, value, timestamp)")
            value, timestamp = value.value, value.timestamp
        raw = None if value is None else self._values.serialize(self._topic(), value)
        key_bytes = self._key(key)
        code = self._put_bytes(key_bytes, raw, int(timestamp))
        if code == PUT_RETURN_CODE_NOT_PUT:
            self._expired("put")
        elif self.logging:
            self.context.log_change(self.name, key_bytes, raw, int(timestamp))
        return code

    def _expired(self, what: str) -> None:
        LOG.warning("Skipping record for expired %s.", what)
        if self._dropped is not None:
            self._dropped.record()

    def delete(self, key: Any, timestamp: int) -> VersionedRecord | None:
        """Put a tombstone at ``timestamp``; returns the version it ended (``None`` if none)."""
        timestamp = int(timestamp)
        if timestamp < self.stream_time - self.history_retention_ms:
            self._expired("delete")
            return None
        previous = self.get(key, timestamp)
        self.put(key, None, timestamp)
        return previous

    def get(self, key: object, as_of_timestamp: int | None = None) -> VersionedRecord | None:
        """The latest version of ``key``, or the one valid at ``as_of_timestamp``."""
        versions = _decode(self.wrapped.get(self._key(key)))
        if not versions:
            return None
        if as_of_timestamp is None:
            ts, raw = versions[0]
            return None if raw is None else VersionedRecord(self._value(raw), ts)
        as_of = int(as_of_timestamp)
        expired = as_of < self.stream_time - self.history_retention_ms
        valid_to = None
        for ts, raw in versions:
            if ts <= as_of:
                if raw is None or (expired and valid_to is not None):
                    return None
                return VersionedRecord(self._value(raw), ts, valid_to)
            valid_to = ts
        return None

    def versions(
        self, key: object, from_time: int | None = None, to_time: int | None = None, ascending: bool = False
    ) -> list[VersionedRecord]:
        """Every version of ``key`` valid at some time in ``[from_time, to_time]`` (Kafka's
        ``MultiVersionedKeyQuery``): newest first unless ``ascending``; tombstones and versions
        outside history retention are left out."""
        horizon = self.stream_time - self.history_retention_ms
        found, valid_to = [], None
        for ts, raw in _decode(self.wrapped.get(self._key(key))):
            expired = valid_to is not None and valid_to <= horizon
            overlaps = (to_time is None or ts <= to_time) and (
                from_time is None or valid_to is None or valid_to > from_time
            )
            if raw is not None and overlaps and not expired:
                found.append(VersionedRecord(self._value(raw), ts, valid_to))
            valid_to = ts
        return found[::-1] if ascending else found

    def _value(self, raw: bytes) -> object:
        return self._values.deserialize(self._topic(), raw)

    # -- bytes level (also restore) ----------------------------------------------------------
    def _put_bytes(self, key: bytes, value: bytes | None, timestamp: int) -> int:
        horizon = self.stream_time - self.history_retention_ms
        if timestamp < horizon:
            return PUT_RETURN_CODE_NOT_PUT
        versions = _decode(self.wrapped.get(key))
        code = PUT_RETURN_CODE_VALID_TO_UNDEFINED
        kept: list[tuple[int, bytes | None]] = []
        inserted = False
        for ts, raw in versions:
            if not inserted and ts <= timestamp:
                kept.append((timestamp, value))
                inserted = True
                if ts == timestamp:
                    continue
            if not inserted:
                code = ts  # the oldest version newer than this put
            kept.append((ts, raw))
        if not inserted:
            kept.append((timestamp, value))
        if timestamp > self.stream_time:
            self.stream_time = timestamp
            self.wrapped.put(_STREAM_TIME_KEY, struct.pack(">q", timestamp))
        self.wrapped.put(key, _encode(_prune(kept, self.stream_time - self.history_retention_ms)))
        return code

    def restore_batch(self, records: Iterable[tuple[Any, ...]], changelog_offset: int | None = None) -> None:
        """Replay changelog puts: ``(key, (value, timestamp))``."""
        for key, (value, timestamp) in records:
            self._put_bytes(bytes(key), None if value is None else bytes(value), int(timestamp))
        if changelog_offset is not None:
            self.wrapped.restore_batch(
                [(_STREAM_TIME_KEY, struct.pack(">q", self.stream_time))], changelog_offset
            )


def _prune(versions: list[tuple[int, bytes | None]], horizon: int) -> list[tuple[int, bytes | None]]:
    """Drop history versions whose validity ended at or before ``horizon`` (the latest stays)."""
    kept = versions[:1]
    for i in range(1, len(versions)):
        if versions[i - 1][0] > horizon:  # valid until the next newer version's timestamp
            kept.append(versions[i])
    return kept
