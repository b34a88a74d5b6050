"""Kafka's DefaultPartitioner for keyed records: ``toPositive(murmur2(key bytes)) % partitions``.

The one home of the rule, in the client boundary so every layer may ask it. Every producer of
the project places keyed records with librdkafka's ``murmur2_random`` partitioner (the client
profile, :mod:`streams_runtime.kafka.profile`), which is the same function as the Java client's;
interactive queries compute the partition of a key here, without a producer, to find the task
(and so the instance) that owns it; the stream threads' source partitioning check
(:mod:`streams_runtime.processor.internals.partitioning_check`) asks here where a record they
read belongs.
"""

from __future__ import annotations

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """The 32-bit murmur2 hash of ``data`` as Kafka computes it (a signed 32-bit int)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    end = length - length % 4
    for i in range(0, end, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length % 4
    if rest == 3:
        h ^= data[end + 2] << 16
    if rest >= 2:
        h ^= data[end + 1] << 8
    if rest >= 1:
        h ^= data[end]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives the serialized ``key``."""
    if partitions <= 0:
        raise ValueError(f"partition count must be positive, got {partitions}")
    return (murmur2(key) & 0x7FFFFFFF) % partitions
