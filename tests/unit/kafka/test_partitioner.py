"""Kafka's DefaultPartitioner: murmur2 of the serialized key, made positive, modulo partitions."""

from __future__ import annotations

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from streams_runtime.kafka.partitioner import murmur2, partition_for

# from the Java client's UtilsTest
JAVA_VECTORS = {
    "21": -973932308,
    "foobar": -790332482,
    "a-little-bit-long-string": -985981536,
    "a-little-bit-longer-string": -1486304829,
    "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    "abc": 479470107,
}


@pytest.mark.parametrize(("text", "expected"), sorted(JAVA_VECTORS.items()))
def test_should_hash_like_the_java_client(text, expected):
    assert murmur2(text.encode()) == expected


def test_should_agree_with_kafka_python_on_every_length():
    for n in range(0, 40):
        data = bytes((i * 37 + n) % 256 for i in range(n))
        assert murmur2(data) & 0xFFFFFFFF == kafka_python_murmur2(data)


def test_should_place_keys_with_the_positive_hash_modulo_partitions():
    assert partition_for(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7
    assert all(0 <= partition_for(str(i).encode(), 5) < 5 for i in range(200))


def test_should_reject_a_partition_count_below_one():
    with pytest.raises(ValueError, match="positive"):
        partition_for(b"k", 0)
