"""InMemoryTimeOrderedKeyValueBuffer: the changelogged buffer behind ``suppress``.

Owner: one suppress processor of one task (one buffer per task and store name), used from the
task's thread. Kafka Streams' semantics:

* ``put(time, key, change, record_context)`` buffers the latest change of ``key`` under buffer
  time ``time`` (window end for ``until_window_closes``, record time for ``until_time_limit``).
  A key is buffered once: a later put replaces its change and moves it to the new time, but
  keeps the *prior value* -- the key's old value before its first buffered change (what the
  downstream last saw), available via :meth:`prior_value_for_buffered`.
* ``evict_while(predicate, callback)``: while ``predicate()`` holds and the buffer is not
  empty, hands the entry with the smallest ``(time, key bytes)`` to ``callback`` as an
  :class:`Eviction` (key, ``new_value``, ``old_value``, record context) and removes it.
* ``min_timestamp()`` (``2**63-1`` when empty), ``num_records()``, ``buffer_size()`` (bytes:
  key + 8 for the time + prior/old/new values, old counted only when it differs from prior,
  + 8 timestamp + 8 offset + 4 partition + topic + header bytes).

Changelog (one topic per buffer, ``<application_id>-<name>-changelog``): at ``flush`` (commit)
each key changed since the last flush is logged once -- its latest entry, or a tombstone if it
was evicted -- so consecutive changes collapse like a cache. Value layout (ours, version 1)::

    u8 version=1 | i64 buffer time | i64 ctx timestamp | i64 ctx offset | i32 ctx partition
    | str topic | i32 header count, per header: str name, bytes value | bytes prior | bytes old
    | bytes new          (str/bytes: i32 length, -1 for None, then the bytes; all big-endian)

Restore replays these records (tombstones remove the key), rebuilding the buffer exactly.
"""

from __future__ import annotations

import bisect
import struct
import time as wall_clock
from collections.abc import Callable, Iterable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.serdes import Serde, deserialize_or_raise, serialize_or_raise
from streams_runtime.state.internals.builders import StoreBuilderSwitches
from streams_runtime.state.internals.change_logging_store import changelog_topic_name
from streams_runtime.state.internals.metered_store import _resolve_serde

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStore, StateStoreContext

__all__ = [
    "BufferRecordContext",
    "BufferValue",
    "Eviction",
    "InMemoryTimeOrderedKeyValueBuffer",
    "TimeOrderedKeyValueBufferBuilder",
]

MAX_TIME = 2**63 - 1
_VERSION = 1
_HEAD = struct.Struct(">bqqqi")


class BufferedChange(Protocol):
    """What the buffer reads of a change it is given (the DSL's ``Change``)."""

    @property
    def new_value(self) -> object:
        """The value after the change (``None``: the key was deleted)."""
        ...

    @property
    def old_value(self) -> object:
        """The value before the change (``None``: none, or not sent)."""
        ...


class BufferRecordContext(NamedTuple):
    """The record context saved with a buffered change (the runtime's fields, by name)."""

    topic: str | None
    partition: int
    offset: int
    timestamp: int
    headers: tuple[Any, ...] = ()


class BufferValue(NamedTuple):
    """A buffered change in bytes, with the prior value and the record context."""

    prior_value: bytes | None
    old_value: bytes | None
    new_value: bytes | None
    record_context: BufferRecordContext


class Eviction(NamedTuple):
    """What ``evict_while`` hands to its callback (typed key and values)."""

    key: Any
    new_value: Any
    old_value: Any
    record_context: BufferRecordContext


def _context_of(record_context: object) -> BufferRecordContext:
    if record_context is None:
        return BufferRecordContext(None, -1, -1, -1, ())
    return BufferRecordContext(
        getattr(record_context, "topic", None),
        int(getattr(record_context, "partition", -1)),
        int(getattr(record_context, "offset", -1)),
        int(getattr(record_context, "timestamp", -1)),
        tuple(getattr(record_context, "headers", None) or ()),
    )


def _text(value: Any) -> bytes | None:
    return value.encode("utf-8") if isinstance(value, str) else value


def _size(key: bytes, value: BufferValue, old_is_prior: bool) -> int:
    """The entry's size estimate, as Kafka Streams counts it: the key, the record context, the
    prior and new values, and the old value unless it is the prior one (a key put while not yet
    buffered, whose prior value is its old value)."""
    context = value.record_context
    size = len(key) + 8 + 8 + 8 + 4 + len(_text(context.topic) or b"")
    for name, header_value in context.headers:
        size += len(_text(name) or b"") + len(_text(header_value) or b"")
    size += len(value.prior_value or b"") + len(value.new_value or b"")
    if not old_is_prior:
        size += len(value.old_value or b"")
    return size


def _put_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(data)) + data


def _get_bytes(data: bytes, offset: int) -> tuple[bytes | None, int]:
    (length,) = struct.unpack_from(">i", data, offset)
    offset += 4
    if length < 0:
        return None, offset
    return bytes(data[offset : offset + length]), offset + length


def encode_buffer_value(buffer_time: int, value: BufferValue) -> bytes:
    """The changelog value of a buffered entry (layout in the module docstring)."""
    context = value.record_context
    out = bytearray(_HEAD.pack(_VERSION, buffer_time, context.timestamp, context.offset, context.partition))
    _put_bytes(out, _text(context.topic))
    out += struct.pack(">i", len(context.headers))
    for name, header_value in context.headers:
        _put_bytes(out, _text(name))
        _put_bytes(out, _text(header_value))
    for part in (value.prior_value, value.old_value, value.new_value):
        _put_bytes(out, part)
    return bytes(out)


def decode_buffer_value(data: bytes) -> tuple[int, BufferValue]:
    """``(buffer_time, BufferValue)`` of a changelog value."""
    version, buffer_time, timestamp, offset, partition = _HEAD.unpack_from(data, 0)
    if version != _VERSION:
        raise ValueError(f"unknown suppression buffer changelog version {version}")
    position = _HEAD.size
    topic, position = _get_bytes(data, position)
    (count,) = struct.unpack_from(">i", data, position)
    position += 4
    headers = []
    for _ in range(count):
        name, position = _get_bytes(data, position)
        header_value, position = _get_bytes(data, position)
        headers.append(((name or b"").decode("utf-8"), header_value))
    parts = []
    for _ in range(3):
        part, position = _get_bytes(data, position)
        parts.append(part)
    context = BufferRecordContext(
        None if topic is None else topic.decode("utf-8"), partition, offset, timestamp, tuple(headers)
    )
    return buffer_time, BufferValue(parts[0], parts[1], parts[2], context)


@dataclass(eq=False)
class InMemoryTimeOrderedKeyValueBuffer:
    """A time-ordered, changelogged buffer of the latest change per key (module docstring).

    :param name: the store name (and changelog topic suffix).
    :param key_serde: the key serde (``None``: set later or the app's ``default_key_serde``).
    :param value_serde: the serde of the change's values (``None``: likewise).
    :param logging_enabled: write the changelog at ``flush``.
    """

    persistent = False

    name: str
    key_serde: Serde | None = None
    value_serde: Serde | None = None
    _: KW_ONLY
    logging_enabled: bool = True
    context: Any = field(default=None, init=False)
    topic: str = field(default="", init=False)
    _open: bool = field(default=False, init=False)
    _keys: Serde = field(init=False)  # the resolved serdes, set by init
    _values: Serde = field(init=False)

    def __post_init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._index: dict[bytes, int] = {}
        self._entries: dict[tuple[int, bytes], BufferValue] = {}
        self._order: list[tuple[int, bytes]] = []
        self._dirty: dict[bytes, None] = {}
        self._size_bytes = 0
        self._sizes: dict[bytes, int] = {}  # each entry's size estimate, as counted when put

    def set_serdes_if_none(self, key_serde: Serde | None, value_serde: Serde | None) -> None:
        """Fill in serdes the builder left ``None`` (the DSL knows them only at build time)."""
        self.key_serde = self.key_serde or key_serde
        self.value_serde = self.value_serde or value_serde

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Resolve serdes and register for restore (with the changelog topic when logging)."""
        self.context = context
        self._keys = self.key_serde = _resolve_serde(self.key_serde, context, "default_key_serde", self.name)
        self._values = self.value_serde = _resolve_serde(
            self.value_serde, context, "default_value_serde", self.name
        )
        self.topic = changelog_topic_name(context.application_id, self.name)
        self._reset()
        self._open = True
        changelog = self.topic if self.logging_enabled else None
        context.register(root if root is not None else self, self.restore_batch, changelog_topic=changelog)

    def is_open(self) -> bool:
        return self._open

    def close(self) -> None:
        self._open = False
        self._reset()

    def inner(self) -> InMemoryTimeOrderedKeyValueBuffer:
        return self

    # -- writes ------------------------------------------------------------------------------

    def put(self, time: int, key: Any, change: BufferedChange, record_context: object = None) -> None:
        """Buffer ``change`` (``.new_value``/``.old_value``) of ``key`` under buffer ``time``.

        A key already in the buffer keeps its earlier buffer time; only its value is replaced.

        :param record_context: the context to forward the change with later (default: current).
        """
        self._check_open()
        key_bytes = cast(bytes, serialize_or_raise(self._keys, self.topic, "key", key))
        new = serialize_or_raise(self._values, self.topic, "value", change.new_value)
        old = serialize_or_raise(self._values, self.topic, "value", change.old_value)
        previous_time = self._index.get(key_bytes)
        prior = old if previous_time is None else self._entries[(previous_time, key_bytes)].prior_value
        if record_context is None:
            record_context = self.context.record_context()
        # Non-resetting, as Kafka Streams' buffer: a key already buffered keeps its first buffer
        # time, so a key updated continuously is still evicted once that time has passed.
        time = int(time) if previous_time is None else previous_time
        value = BufferValue(prior, old, new, _context_of(record_context))
        self._clean_put(time, key_bytes, value, old_is_prior=previous_time is None)
        self._dirty[key_bytes] = None

    def _clean_put(self, time: int, key: bytes, value: BufferValue, old_is_prior: bool) -> None:
        self._remove(key)
        self._index[key] = time
        self._entries[(time, key)] = value
        bisect.insort(self._order, (time, key))
        size = _size(key, value, old_is_prior)
        self._sizes[key] = size
        self._size_bytes += size

    def _remove(self, key: bytes) -> BufferValue | None:
        time = self._index.pop(key, None)
        if time is None:
            return None
        value = self._entries.pop((time, key))
        del self._order[bisect.bisect_left(self._order, (time, key))]
        self._size_bytes -= self._sizes.pop(key)
        return value

    def evict_while(self, predicate: Callable[[], bool], callback: Callable[[Eviction], None]) -> None:
        """Evict the oldest entries while ``predicate()`` is true (see the module docstring)."""
        self._check_open()
        while self._order and predicate():
            time, key = self._order[0]
            value = self._entries[(time, key)]
            eviction = Eviction(
                deserialize_or_raise(self._keys, self.topic, "key", key),
                deserialize_or_raise(self._values, self.topic, "value", value.new_value),
                deserialize_or_raise(self._values, self.topic, "value", value.old_value),
                value.record_context,
            )
            callback(eviction)
            if self._index.get(key) == time:  # the callback may have re-buffered the key
                self._remove(key)
                self._dirty[key] = None

    # -- reads -------------------------------------------------------------------------------

    def prior_value_for_buffered(self, key: object) -> tuple[bool, Any]:
        """``(True, prior value)`` when ``key`` is buffered, else ``(False, None)``."""
        self._check_open()
        key_bytes = cast(bytes, serialize_or_raise(self._keys, self.topic, "key", key))
        time = self._index.get(key_bytes)
        if time is None:
            return False, None
        prior = self._entries[(time, key_bytes)].prior_value
        return True, deserialize_or_raise(self._values, self.topic, "value", prior)

    def min_timestamp(self) -> int:
        """The smallest buffer time, ``2**63-1`` when empty."""
        return self._order[0][0] if self._order else MAX_TIME

    def num_records(self) -> int:
        return len(self._order)

    def buffer_size(self) -> int:
        """The estimated bytes held (see the module docstring)."""
        return self._size_bytes

    # -- changelog ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Log each key changed since the last flush: its latest entry or a tombstone."""
        self._check_open()
        dirty, self._dirty = list(self._dirty), {}
        if not self.logging_enabled:
            return
        for key in dirty:
            time = self._index.get(key)
            if time is None:
                current = self.context.record_context()
                stamp = int(current.timestamp) if current is not None else int(wall_clock.time() * 1000)
                self.context.log_change(self.name, key, None, stamp)
            else:
                value = self._entries[(time, key)]
                self.context.log_change(
                    self.name, key, encode_buffer_value(time, value), value.record_context.timestamp
                )

    def restore_batch(self, records: Iterable[tuple[Any, ...]], changelog_offset: int | None = None) -> None:
        """Replay changelog records ``(key, value[, timestamp])``; tombstones remove the key."""
        self._check_open()
        for record in records:
            key, raw = bytes(record[0]), record[1]
            if raw is None:
                self._remove(key)
            else:
                buffer_time, value = decode_buffer_value(bytes(raw))
                self._clean_put(buffer_time, key, value, value.old_value == value.prior_value)

    def _check_open(self) -> None:
        if not self._open:
            raise InvalidStateStoreError(f"store {self.name} is not open")


class TimeOrderedKeyValueBufferBuilder(StoreBuilderSwitches):
    """Builds suppression buffers (logging on by default; never cached).

    :param name: the store name.
    :param key_serde: the key serde (``None``: the DSL sets it later or the app default).
    :param value_serde: the value serde (likewise).
    """

    persistent = False
    caching_enabled = False

    def __init__(self, name: str, key_serde: Serde | None = None, value_serde: Serde | None = None) -> None:
        self._name = name
        self._key_serde = key_serde
        self._value_serde = value_serde
        self._init_switches()

    @property
    def name(self) -> str:
        return self._name

    def with_caching_enabled(self) -> TimeOrderedKeyValueBufferBuilder:
        raise ValueError(f"suppression buffer {self._name!r} cannot be cached")

    def build(self) -> InMemoryTimeOrderedKeyValueBuffer:
        return InMemoryTimeOrderedKeyValueBuffer(
            self._name, self._key_serde, self._value_serde, logging_enabled=self._logging_enabled
        )
