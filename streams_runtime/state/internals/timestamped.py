"""Timestamped values in bytes stores: the serde and the changelog restore converter.

Owner: the state side. A timestamped store keeps ``<8-byte big-endian signed timestamp><value
bytes>`` under each key (Kafka Streams' layout), while its changelog topic holds the plain value
bytes with the timestamp as the record timestamp. Restore therefore converts each changelog
record back: :func:`record_converter_for` tells the state manager which conversion a store
needs, decided by the outermost store of the stack (``timestamped`` attribute).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, overload

from streams_runtime.serdes import Serde, is_long_serde
from streams_runtime.state.value_and_timestamp import ValueAndTimestamp

__all__ = [
    "ValueAndTimestampSerde",
    "raw_value_to_timestamped",
    "read_timestamp",
    "record_converter_for",
    "split_timestamped",
]

TIMESTAMP_BYTES = 8
_TIMESTAMP = struct.Struct(">q")  # the same bytes as int.to_bytes(8, "big", signed=True)
_TIMESTAMP_AND_LONG = struct.Struct(">qq")  # <timestamp><Serdes.Long value>, e.g. a count

RecordConverter = Callable[[bytes, "bytes | None", int], "tuple[bytes, bytes | None]"]


@overload
def raw_value_to_timestamped(value: bytes, timestamp: int) -> bytes: ...


@overload
def raw_value_to_timestamped(value: None, timestamp: int) -> None: ...


def raw_value_to_timestamped(value: bytes | None, timestamp: int) -> bytes | None:
    """``<timestamp><value>`` for a plain changelog value; ``None`` stays ``None``."""
    if value is None:
        return None
    return int(timestamp).to_bytes(TIMESTAMP_BYTES, "big", signed=True) + value


def read_timestamp(data: bytes) -> int:
    """The timestamp of ``<timestamp><value>`` (as ``int.from_bytes(data[:8], "big", signed=True)``)."""
    if len(data) >= TIMESTAMP_BYTES:
        timestamp: int = _TIMESTAMP.unpack_from(data)[0]
        return timestamp
    return int.from_bytes(data[:TIMESTAMP_BYTES], "big", signed=True)


def split_timestamped(data: bytes) -> tuple[bytes, int]:
    """Split ``<timestamp><value>`` into ``(value_bytes, timestamp)``."""
    if len(data) < TIMESTAMP_BYTES:
        raise ValueError(f"a timestamped value has at least 8 bytes, got {len(data)}")
    return data[TIMESTAMP_BYTES:], int.from_bytes(data[:TIMESTAMP_BYTES], "big", signed=True)


class ValueAndTimestampSerde(Serde):
    """Serde of :class:`ValueAndTimestamp` around the serde of the plain value.

    :param value_serde: the serde of ``ValueAndTimestamp.value``.
    """

    def __init__(self, value_serde: Serde) -> None:
        super().__init__(f"ValueAndTimestamp({getattr(value_serde, 'name', type(value_serde).__name__)})")
        self.value_serde = value_serde
        # Serdes.Long values (counts): timestamp and value in one struct call each way
        self._long_values = is_long_serde(value_serde)

    # serialize/deserialize: the whole operation in one frame (the hot path of every
    # timestamped store); the same checks, results and exceptions as _serialize/_deserialize.
    def serialize(self, topic: str, data: object) -> bytes | None:
        if (
            self._long_values
            and type(data) is ValueAndTimestamp
            and type(data.value) is int
            and type(data.timestamp) is int
        ):
            try:
                return _TIMESTAMP_AND_LONG.pack(data.timestamp, data.value)
            except struct.error:
                pass  # out of range: the general path raises what the serdes raise
        if data is None:
            return None
        if type(data) is not ValueAndTimestamp and not isinstance(data, ValueAndTimestamp):
            raise TypeError(f"expected ValueAndTimestamp, got {type(data).__name__}")
        raw = self.value_serde.serialize(topic, data.value)
        if raw is None:
            raise ValueError("the value serde returned None for a non-None value")
        timestamp = data.timestamp
        if type(timestamp) is not int:
            return raw_value_to_timestamped(raw, timestamp)
        try:
            return _TIMESTAMP.pack(timestamp) + raw
        except struct.error:
            return raw_value_to_timestamped(raw, timestamp)  # raises what it always raised

    def deserialize(self, topic: str, data: bytes | None) -> Any:
        if self._long_values and type(data) is bytes and len(data) == 16:
            timestamp, value = _TIMESTAMP_AND_LONG.unpack(data)
            return ValueAndTimestamp(value, timestamp)
        if data is None:
            return None
        if type(data) is not bytes:
            data = bytes(data)
        if self._long_values and len(data) == 16:
            timestamp, value = _TIMESTAMP_AND_LONG.unpack(data)
            return ValueAndTimestamp(value, timestamp)
        if len(data) < TIMESTAMP_BYTES:
            raise ValueError(f"a timestamped value has at least 8 bytes, got {len(data)}")
        return ValueAndTimestamp(
            self.value_serde.deserialize(topic, data[TIMESTAMP_BYTES:]), _TIMESTAMP.unpack_from(data)[0]
        )

    def _serialize(self, topic: str, data: Any) -> bytes:
        if not isinstance(data, ValueAndTimestamp):
            raise TypeError(f"expected ValueAndTimestamp, got {type(data).__name__}")
        raw = self.value_serde.serialize(topic, data.value)
        if raw is None:
            raise ValueError("the value serde returned None for a non-None value")
        return raw_value_to_timestamped(raw, data.timestamp)

    def _deserialize(self, topic: str, data: bytes) -> ValueAndTimestamp:
        raw, timestamp = split_timestamped(bytes(data))
        return ValueAndTimestamp(self.value_serde.deserialize(topic, raw), timestamp)


def _identity(key: bytes, value: bytes | None, timestamp: int) -> tuple[bytes, bytes | None]:
    return key, value


def _to_timestamped(key: bytes, value: bytes | None, timestamp: int) -> tuple[bytes, bytes | None]:
    return key, raw_value_to_timestamped(value, timestamp)


def _to_versioned(key: bytes, value: bytes | None, timestamp: int) -> tuple[bytes, Any]:
    return key, (value, timestamp)


def record_converter_for(store: object) -> RecordConverter:
    """How to turn a changelog record ``(key, value, timestamp)`` into a store entry.

    :param store: the store as registered (the outermost store of the stack).
    :returns: a function ``(key, value, timestamp) -> (key, store_value)``; a versioned store
        gets ``(key, (value, timestamp))`` (a tombstone keeps its timestamp).
    """
    if getattr(store, "versioned", False):
        return _to_versioned
    return _to_timestamped if getattr(store, "timestamped", False) else _identity
