"""Change: a KTable update (new value, old value) and its serde for repartition topics.

KTable processors forward ``Record(key, Change(new, old))``. ``old`` is only filled where
Kafka Streams sends old values (downstream asked for them with ``enable_sending_old_values``).

ChangeSerde wire format (ours; only our own runtime reads these internal topics):
one flag byte (bit 0: new present, bit 1: old present, bit 2: is_latest), a 4-byte big-endian
length of the new value's bytes, the new value's bytes, then the old value's bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams_runtime.serdes import Serde, bound_serde


class Change:
    __slots__ = ("new_value", "old_value", "is_latest")

    def __init__(self, new_value: Any, old_value: Any = None, is_latest: bool = True) -> None:
        self.new_value = new_value
        self.old_value = old_value
        self.is_latest = is_latest

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Change)
            and self.new_value == other.new_value
            and self.old_value == other.old_value
        )

    def __hash__(self) -> int:
        return hash((self.new_value, self.old_value))

    def __repr__(self) -> str:
        return f"({self.new_value!r}<-{self.old_value!r})"


class ChangeSerde(Serde):
    """Serializes a Change with an inner value serde (None: the app's default, set at init)."""

    def __init__(self, inner: Serde | None) -> None:
        super().__init__(f"Change({getattr(inner, 'name', 'default')})")
        self.inner = inner

    def with_default_inner(self, default: Callable[[], Serde]) -> ChangeSerde:
        return self if self.inner is not None else ChangeSerde(default())

    def _serialize(self, topic: str, data: Any) -> bytes:
        inner = bound_serde(self.inner, self.name)
        new = inner.serialize(topic, data.new_value)
        old = inner.serialize(topic, data.old_value)
        flags = (new is not None) | ((old is not None) << 1) | (bool(data.is_latest) << 2)
        new = new or b""
        return bytes((flags,)) + len(new).to_bytes(4, "big") + new + (old or b"")

    def _deserialize(self, topic: str, data: bytes) -> Change:
        flags = data[0]
        length = int.from_bytes(data[1:5], "big")
        inner = bound_serde(self.inner, self.name)
        new = inner.deserialize(topic, data[5 : 5 + length]) if flags & 1 else None
        old = inner.deserialize(topic, data[5 + length :]) if flags & 2 else None
        return Change(new, old, bool(flags & 4))
