"""Kafka's default partitioner for keyed records, written out here independently of librdkafka.

Java's ``Utils.murmur2`` (the 32-bit MurmurHash2 with seed 0x9747b28c that
``BuiltInPartitioner.partitionForKey`` applies to the key bytes), and the partition it gives:
``toPositive(murmur2(key)) % partitions``. ``tests/tools/test_produce_offline.py``
checks it against the values Kafka's own unit tests expect.
"""

from __future__ import annotations

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Java's ``Utils.murmur2(data)`` as a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = data[whole:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: bytes, partitions: int) -> int:
    """Where a Java producer (and Kafka Streams) puts a record with this key."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions
