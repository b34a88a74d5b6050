"""Foreign-key join wire formats: the subscription and response wrappers, their serdes, the
combined (foreign key, primary key) store key, and the 128-bit murmur3 hash of a value.

A foreign-key join sends each left-hand row to the partition of its foreign key (a
*subscription*), joins it there with the right-hand row and sends the *response* back to the
left-hand row's partition. A response carries the hash of the left-hand value it was computed
for; the response resolver drops it when the left-hand value changed meanwhile (the hash no
longer matches), so a stale foreign key never produces a result.

Formats (all integers big-endian):

* subscription: ``version(1) | instruction(1) | has_hash(1) [| hash(16)] | partition(4, -1 =
  unknown) | primary key bytes``;
* response: ``version(1) | has_hash(1) [| hash(16)] | partition(4) | foreign value bytes`` (no
  bytes for a null foreign value);
* subscription store key: ``len(fk)(4) | fk bytes | pk bytes``, so a prefix scan over
  ``len(fk) | fk`` finds every primary key subscribed to one foreign key.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from streams_runtime.processor.api import ProcessorContext
from streams_runtime.serdes import Serde

VERSION = 0
SEED = 104729  # the seed Kafka Streams hashes foreign-key join values with

_MASK = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_PARTITION = struct.Struct(">i")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    k ^= k >> 33
    return k


def _mix_k1(k1: int) -> int:
    return (_rotl((k1 * _C1) & _MASK, 31) * _C2) & _MASK


def _mix_k2(k2: int) -> int:
    return (_rotl((k2 * _C2) & _MASK, 33) * _C1) & _MASK


def murmur3_128(data: bytes, seed: int = SEED) -> tuple[int, int]:
    """MurmurHash3 x64 128-bit of ``data`` as two unsigned 64-bit halves."""
    length = len(data)
    h1 = h2 = seed & _MASK
    blocks = length // 16
    for i in range(blocks):
        k1, k2 = struct.unpack_from("<QQ", data, i * 16)
        h1 ^= _mix_k1(k1)
        h1 = _rotl(h1, 27)
        h1 = (h1 + h2) & _MASK
        h1 = (h1 * 5 + 0x52DCE729) & _MASK
        h2 ^= _mix_k2(k2)
        h2 = _rotl(h2, 31)
        h2 = (h2 + h1) & _MASK
        h2 = (h2 * 5 + 0x38495AB5) & _MASK
    tail = data[blocks * 16 :]
    k1 = k2 = 0
    for i in range(len(tail) - 1, 7, -1):
        k2 ^= tail[i] << ((i - 8) * 8)
    if len(tail) > 8:
        h2 ^= _mix_k2(k2)
    for i in range(min(len(tail), 8) - 1, -1, -1):
        k1 ^= tail[i] << (i * 8)
    if tail:
        h1 ^= _mix_k1(k1)
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & _MASK
    h2 = (h2 + h1) & _MASK
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & _MASK
    h2 = (h2 + h1) & _MASK
    return h1, h2


def hash_bytes(data: bytes | None) -> bytes | None:
    """The 16-byte murmur3 hash of ``data`` (``None`` for ``None``)."""
    if data is None:
        return None
    h1, h2 = murmur3_128(data)
    return struct.pack(">QQ", h1, h2)


class Instruction(IntEnum):
    """What the foreign side does with a subscription (Kafka Streams' instruction names)."""

    DELETE_KEY_AND_PROPAGATE = 0
    DELETE_KEY_NO_PROPAGATE = 1
    PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE = 2
    PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE = 3


@dataclass(frozen=True)
class SubscriptionWrapper:
    hash: bytes | None
    instruction: Instruction
    primary_key: Any
    primary_partition: int | None
    version: int = VERSION


@dataclass(frozen=True)
class SubscriptionResponseWrapper:
    original_value_hash: bytes | None
    foreign_value: Any
    primary_partition: int | None
    version: int = VERSION


class _DefaultSerde(Serde):
    """Stands for the application's default key or value serde until ``bind`` resolves it."""

    def __init__(self, side: str) -> None:
        super().__init__(f"default {side} serde")
        self.side = side

    def _serialize(self, topic: str, data: object) -> bytes:
        raise RuntimeError(f"the {self.name} of a foreign-key join is used before bind()")

    def _deserialize(self, topic: str, data: bytes) -> object:
        raise RuntimeError(f"the {self.name} of a foreign-key join is used before bind()")


def _given(serde: Serde | None, side: str) -> Serde:
    """``serde``, or the stand-in of the default serde of ``side`` (``"key"`` or ``"value"``)."""
    return serde if serde is not None else _DefaultSerde(side)


def _default(serde: Serde, context: ProcessorContext) -> Serde:
    """``serde``, with the stand-in of a default serde resolved from the application's config."""
    if isinstance(serde, _DefaultSerde):
        default: Serde = context.app_configs.default_serde(serde.side)
        return default
    return serde


class SubscriptionWrapperSerde(Serde):
    """Serde of :class:`SubscriptionWrapper`; ``primary_key_serde`` None = the default key serde."""

    def __init__(self, primary_key_serde: Serde | None) -> None:
        super().__init__("SubscriptionWrapperSerde")
        self.primary_key_serde = _given(primary_key_serde, "key")
        self.topic = ""

    def bind(self, context: ProcessorContext, pk_topic: str) -> None:
        self.primary_key_serde = _default(self.primary_key_serde, context)
        self.topic = pk_topic

    def _serialize(self, topic: str, data: SubscriptionWrapper) -> bytes:
        pk = self.primary_key_serde.serialize(self.topic, data.primary_key) or b""
        head = bytes([data.version, int(data.instruction), 0 if data.hash is None else 1])
        partition = -1 if data.primary_partition is None else data.primary_partition
        return head + (data.hash or b"") + _PARTITION.pack(partition) + pk

    def _deserialize(self, topic: str, data: bytes) -> SubscriptionWrapper:
        version, instruction, has_hash = data[0], data[1], data[2]
        pos = 3
        digest = None
        if has_hash:
            digest, pos = bytes(data[3:19]), 19
        (partition,) = _PARTITION.unpack_from(data, pos)
        pk = self.primary_key_serde.deserialize(self.topic, bytes(data[pos + 4 :]))
        return SubscriptionWrapper(
            digest, Instruction(instruction), pk, None if partition < 0 else partition, version
        )


class SubscriptionResponseWrapperSerde(Serde):
    """Serde of :class:`SubscriptionResponseWrapper`; ``foreign_value_serde`` None = default."""

    def __init__(self, foreign_value_serde: Serde | None) -> None:
        super().__init__("SubscriptionResponseWrapperSerde")
        self.foreign_value_serde = _given(foreign_value_serde, "value")

    def bind(self, context: ProcessorContext) -> None:
        self.foreign_value_serde = _default(self.foreign_value_serde, context)

    def _serialize(self, topic: str, data: SubscriptionResponseWrapper) -> bytes:
        value = self.foreign_value_serde.serialize(topic, data.foreign_value)
        head = bytes([data.version, 0 if data.original_value_hash is None else 1])
        partition = -1 if data.primary_partition is None else data.primary_partition
        tail = b"" if value is None else b"\x01" + value
        return head + (data.original_value_hash or b"") + _PARTITION.pack(partition) + tail

    def _deserialize(self, topic: str, data: bytes) -> SubscriptionResponseWrapper:
        version, has_hash = data[0], data[1]
        pos = 2
        digest = None
        if has_hash:
            digest, pos = bytes(data[2:18]), 18
        (partition,) = _PARTITION.unpack_from(data, pos)
        rest = bytes(data[pos + 4 :])
        value = self.foreign_value_serde.deserialize(topic, rest[1:]) if rest else None
        return SubscriptionResponseWrapper(digest, value, None if partition < 0 else partition, version)


class CombinedKeySchema:
    """The subscription store's key: ``len(fk) | fk | pk`` (see the module docstring)."""

    def __init__(self, foreign_key_serde: Serde | None, primary_key_serde: Serde | None) -> None:
        self.foreign_key_serde = _given(foreign_key_serde, "key")
        self.primary_key_serde = _given(primary_key_serde, "key")
        self.fk_topic = self.pk_topic = ""

    def bind(self, context: ProcessorContext, fk_topic: str, pk_topic: str) -> None:
        self.foreign_key_serde = _default(self.foreign_key_serde, context)
        self.primary_key_serde = _default(self.primary_key_serde, context)
        self.fk_topic, self.pk_topic = fk_topic, pk_topic

    def prefix(self, foreign_key: object) -> bytes:
        fk = self.foreign_key_serde.serialize(self.fk_topic, foreign_key) or b""
        return _PARTITION.pack(len(fk)) + fk

    def to_bytes(self, foreign_key: object, primary_key: object) -> bytes:
        return self.prefix(foreign_key) + (
            self.primary_key_serde.serialize(self.pk_topic, primary_key) or b""
        )

    def primary_key(self, data: bytes) -> object:
        (length,) = _PARTITION.unpack_from(data, 0)
        return self.primary_key_serde.deserialize(self.pk_topic, bytes(data[4 + length :]))
