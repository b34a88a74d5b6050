"""Read what an exactly-once application committed, on any broker: ``read_committed_topic``.

A read_committed consumer trusts the broker to leave out the records of aborted transactions.
Apache Kafka does (its fetch responses list the aborted transactions); the embedded broker
(Tansu) does not, so a plain librdkafka reader there sees a fenced writer's aborted outputs as
duplicates. This reader consumes with ``isolation.level=read_committed`` and then drops every
record whose transaction the log's own COMMIT/ABORT markers say was aborted, or that has no
marker at all once the topic is read to its end (a fenced writer's abandoned transaction)
(:class:`~streams_runtime.brokers.tansu.transaction_markers.AbortedFilter`), so it returns exactly the
committed records on both brokers. For tests, the demo and tools; not a hot path.
"""

from __future__ import annotations

import time
from typing import Any

from streams_runtime.brokers.tansu import AbortedFilter
from streams_runtime.kafka.clients import TopicPartition, create_consumer
from streams_runtime.kafka.offsets import is_partition_eof

__all__ = ["read_committed_topic"]


def read_committed_topic(
    bootstrap_servers: str, topic: str, partitions: int, timeout_s: float = 30.0
) -> list[Any]:
    """Every committed record of ``topic`` (partitions ``0..partitions-1``), read from the start
    to each partition's end, aborted transactions left out; in offset order per partition.

    :raises TimeoutError: when a partition does not reach its end within ``timeout_s`` (an open
        transaction holds the last stable offset back).
    """
    consumer = create_consumer(
        bootstrap_servers,
        f"committed-reader-{time.monotonic_ns()}",
        {"enable.partition.eof": True},
        read_committed=True,
        low_latency=True,
    )
    aborted = AbortedFilter(bootstrap_servers)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    per_partition: dict[int, list[Any]] = {p: [] for p in range(partitions)}
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                missing = sorted(set(range(partitions)) - at_end)
                raise TimeoutError(f"{topic}: partitions {missing} did not reach their end in {timeout_s}s")
            for msg in consumer.consume(1000, 0.2):
                error, partition = msg.error(), msg.partition()
                if partition is None:
                    continue
                if error is None:
                    per_partition[partition].append(msg)
                    at_end.discard(partition)
                elif is_partition_eof(error):
                    at_end.add(partition)
        return [
            m
            for p in range(partitions)
            for m in aborted.committed((topic, p), per_partition[p], drop_open=True)
        ]
    finally:
        consumer.close()
        aborted.close()
