"""InMemoryKeyValueStore: a sorted bytes -> bytes store held in process memory.

Owner: one StreamTask (one instance per task and store name); used from the task's thread only.
Not persistent: after a restart its content comes back from the changelog only.

Layout: a ``dict`` for point lookups plus a sorted ``list`` of the keys for ordered scans
(``bisect``: O(log n) to find a range start, O(n) memmove to insert a new key). Python compares
``bytes`` by unsigned lexicographic order, which is the order the contract requires.

Invariants: ``set(self._keys) == set(self._data)`` and ``self._keys`` is sorted, after every
public method. A scan snapshots the keys of its range when it is created and reads their values
lazily, skipping keys deleted meanwhile (a scan never fails because the store changed).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from streams_runtime.state.internals.bytes_store import AbstractBytesStore
from streams_runtime.state.internals.iterators import key_slice

__all__ = ["InMemoryKeyValueStore"]


class InMemoryKeyValueStore(AbstractBytesStore):
    """A sorted in-memory key-value store of bytes.

    :param name: the store name.
    """

    persistent = False

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._data: dict[bytes, bytes] = {}
        self._keys: list[bytes] = []

    def _open_store(self, context: object) -> None:
        # Nothing to open; a re-init after close starts empty, like a fresh task.
        self._data = {}
        self._keys = []

    def _close_store(self) -> None:
        self._data = {}
        self._keys = []

    def _get(self, key: bytes) -> bytes | None:
        return self._data.get(key)

    def _put(self, key: bytes, value: bytes | None) -> None:
        if value is None:
            if self._data.pop(key, None) is not None:
                index = bisect.bisect_left(self._keys, key)
                del self._keys[index]
            return
        if key not in self._data:
            bisect.insort(self._keys, key)
        self._data[key] = value

    def _write_all(
        self, entries: list[tuple[bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None:
        for key, value in entries:
            self._put(key, value)

    def _scan(
        self, lower: bytes | None, upper: bytes | None, upper_inclusive: bool, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        snapshot = key_slice(self._keys, lower, upper, upper_inclusive)
        if reverse:
            snapshot.reverse()
        return self._values_of(snapshot)

    def _values_of(self, keys: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
        for key in keys:
            value = self._data.get(key)
            if value is not None:
                yield key, value

    def approximate_num_entries(self) -> int:
        """The exact number of keys."""
        self._check_open()
        return len(self._data)
