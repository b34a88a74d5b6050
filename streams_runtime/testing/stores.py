"""KeyValueStoreFacade: plain-value access to a timestamped store (what get_key_value_store returns).

Kafka Streams' driver does the same: DSL stores hold ValueAndTimestamp, tests usually want the
value. Writes through the facade store the value with timestamp -1 (no timestamp).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from streams_runtime.state import KeyValue, ValueAndTimestamp
from streams_runtime.state.interfaces import KeyValueIterator, StateStore, TimestampedKeyValueStore

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde

NO_TIMESTAMP = -1

#: the timestamped store a facade shows with plain values
S = TypeVar("S", bound=StateStore)


def is_timestamped(store: object) -> bool:
    return bool(getattr(store, "timestamped", False))


def _value(value_and_timestamp: ValueAndTimestamp | None) -> object:
    return None if value_and_timestamp is None else value_and_timestamp.value


class _PlainValues:
    """Wraps a store iterator, yielding KeyValue(key, plain value); closes the inner iterator."""

    def __init__(self, inner: KeyValueIterator) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[KeyValue]:
        return self

    def __next__(self) -> KeyValue:
        key, value = next(self._inner)
        return KeyValue(key, _value(value))

    def peek_next_key(self) -> Any:
        return self._inner.peek_next_key()

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _PlainValues:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class StoreFacade(Generic[S]):
    """What every facade of a timestamped store passes on unchanged to the store (``inner``)."""

    def __init__(self, inner: S) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    def flush(self) -> None:
        self.inner.flush()


class KeyValueStoreFacade(StoreFacade[TimestampedKeyValueStore[Any]]):
    """A timestamped key-value store seen as a plain key-value store."""

    @property
    def persistent(self) -> bool:
        return self.inner.persistent

    def is_open(self) -> bool:
        return self.inner.is_open()

    def get(self, key: object) -> Any:
        return _value(self.inner.get(key))

    def put(self, key: Any, value: Any) -> None:
        self.inner.put(key, ValueAndTimestamp.make(value, NO_TIMESTAMP))

    def put_if_absent(self, key: Any, value: Any) -> Any:
        return _value(self.inner.put_if_absent(key, ValueAndTimestamp.make(value, NO_TIMESTAMP)))

    def put_all(self, entries: Sequence[tuple[Any, Any]]) -> None:
        self.inner.put_all([(k, ValueAndTimestamp.make(v, NO_TIMESTAMP)) for k, v in entries])

    def delete(self, key: Any) -> Any:
        return _value(self.inner.delete(key))

    def range(self, from_key: Any = None, to_key: Any = None) -> _PlainValues:
        return _PlainValues(self.inner.range(from_key, to_key))

    def reverse_range(self, from_key: Any = None, to_key: Any = None) -> _PlainValues:
        return _PlainValues(self.inner.reverse_range(from_key, to_key))

    def all(self) -> _PlainValues:
        return _PlainValues(self.inner.all())

    def reverse_all(self) -> _PlainValues:
        return _PlainValues(self.inner.reverse_all())

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> _PlainValues:
        return _PlainValues(self.inner.prefix_scan(prefix, prefix_key_serde))

    def approximate_num_entries(self) -> int:
        return self.inner.approximate_num_entries()
