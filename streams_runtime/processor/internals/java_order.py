"""Java collection iteration orders, so describe() prints sets exactly as Kafka Streams does.

Kafka Streams prints topic and store sets with ``HashSet.toString()``; their order is the bucket
order of Java's ``HashMap`` (``String.hashCode`` spread by ``h ^ (h >>> 16)``, masked by the
table size), insertion order within a bucket. Only the printed text depends on this.
"""

from __future__ import annotations

from collections.abc import Iterable


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (32-bit signed arithmetic over UTF-16 code units)."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def _table_size(count: int) -> int:
    wanted = max(int(count / 0.75) + 1, 16)
    size = 1
    while size < wanted:
        size <<= 1
    return size


def java_hash_set_order(items: Iterable[str]) -> list[str]:
    """The iteration order of ``new HashSet<>(items)`` for distinct strings."""
    unique = list(dict.fromkeys(items))
    mask = _table_size(len(unique)) - 1

    def bucket(text: str) -> int:
        h = java_string_hash(text)
        return (h ^ (h >> 16)) & mask

    return sorted(unique, key=bucket)  # sorted() is stable: insertion order within a bucket


def java_set_string(items: Iterable[str]) -> str:
    """``HashSet.toString()``: ``[a, b]``."""
    return "[" + ", ".join(java_hash_set_order(items)) + "]"


def java_hash_map_order(keys: list[str]) -> list[str]:
    """The iteration order of a ``new HashMap<>()`` the distinct ``keys`` were put into, in order
    (default capacity 16, doubled whenever the size passes three quarters of it)."""
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 0.75:
        capacity <<= 1
    mask = capacity - 1

    def bucket(text: str) -> int:
        h = java_string_hash(text)
        return (h ^ (h >> 16)) & mask

    return sorted(unique, key=bucket)
