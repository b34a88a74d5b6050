"""Helpers for the KafkaStreams integration tests: topics, producing, reading to the end, waiting.

Test profile (D1): 2 s sessions and 200 ms heartbeats for the coordination group (Tansu answers
joins about session/2 late), short commit intervals, low-latency fetches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from streams_runtime import KafkaStreams, KafkaStreamsState
from streams_runtime.kafka.clients import (
    PARTITION_EOF,
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
)

FAST_CLIENT = {
    "consumer.session.timeout.ms": 2000,
    "consumer.heartbeat.interval.ms": 200,
    "consumer.fetch.wait.max.ms": 10,
    "commit_interval_ms": 200,
    "poll_ms": 20,
}


def streams_config(bootstrap: str, app_id: str, state_dir: Any, **extra: Any) -> dict[str, Any]:
    return {"application_id": app_id, "bootstrap_servers": bootstrap, "state_dir": str(state_dir),
            **FAST_CLIENT, **extra}


def make_topics(bootstrap: str, **partitions: int) -> None:
    create_topics(create_admin(bootstrap), [TopicSpec(name, n) for name, n in partitions.items()])


def produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes | None, bytes | None]],
            timestamp: int | None = None) -> int:
    """Produce keyed records with Kafka's default partitioner (murmur2); returns how many."""
    producer = create_producer(bootstrap, {"partitioner": "murmur2_random"})
    n = 0
    for key, value in records:
        if timestamp is None:
            producer.produce(topic, value, key)
        else:
            producer.produce(topic, value, key, timestamp=timestamp)
        n += 1
        if n % 10000 == 0:
            producer.poll(0)
    remaining = producer.flush(30)
    assert remaining == 0
    return n


def read_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout: float = 30.0) -> list[Any]:
    """Read ``topic`` from the beginning until ``expected`` records came (or the timeout); the
    messages are returned (fewer than expected on timeout, so the assertion shows the gap)."""
    consumer = create_consumer(bootstrap, f"reader-{time.monotonic_ns()}", low_latency=True)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    out.append(msg)
    finally:
        consumer.close()
    return out


def wait_until(predicate: Callable[[], bool], timeout: float, what: str | Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            description = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout}s waiting for {description}")
        time.sleep(0.05)


def wait_running(*clients: KafkaStreams, timeout: float = 30.0) -> None:
    def running() -> bool:
        failed = [c for c in clients if c.state in (KafkaStreamsState.PENDING_ERROR, KafkaStreamsState.ERROR)]
        if failed:
            errors = [repr(e) for c in failed for e in c.errors]
            raise AssertionError(f"client failed instead of running: {errors}")
        return all(c.state is KafkaStreamsState.RUNNING for c in clients)

    wait_until(running, timeout, lambda: f"RUNNING (states now: {[c.state.name for c in clients]})")


def active_task_counts(client: KafkaStreams) -> list[int]:
    return sorted(len(t.active_tasks) for t in client.metadata_for_local_threads())


def read_latest_until(bootstrap: str, topic: str, partitions: int, decode: Callable[[Any], tuple[Any, Any]],
                      expected: dict, timeout: float = 45.0) -> dict:
    """Read ``topic`` keeping the latest value per key until it equals ``expected`` (or timeout)."""
    consumer = create_consumer(bootstrap, f"reader-{time.monotonic_ns()}", low_latency=True)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    latest: dict = {}
    deadline = time.monotonic() + timeout
    try:
        while latest != expected and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    key, value = decode(msg)
                    latest[key] = value
    finally:
        consumer.close()
    return latest


def produce_to(bootstrap: str, topic: str, records: Iterable[tuple[bytes, bytes | None, int]]) -> int:
    """Produce ``(key, value, partition)`` records to explicit partitions; returns how many."""
    producer = create_producer(bootstrap)
    n = 0
    for key, value, partition in records:
        producer.produce(topic, value, key, partition=partition)
        n += 1
        if n % 10000 == 0:
            producer.poll(0)
    remaining = producer.flush(30)
    assert remaining == 0
    return n


def count_to_end(bootstrap: str, topic: str, partitions: int, timeout: float = 20.0) -> int:
    """How many records ``topic`` holds: read every partition to its true end (EOF, D1)."""
    consumer = create_consumer(bootstrap, f"counter-{time.monotonic_ns()}",
                               {"enable.partition.eof": True}, low_latency=True)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    n, at_end = 0, set()
    deadline = time.monotonic() + timeout
    try:
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}: no EOF on partitions {set(range(partitions)) - at_end}")
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    n += 1
                elif msg.error().code() == PARTITION_EOF:
                    at_end.add(msg.partition())
    finally:
        consumer.close()
    return n


def latest_until(bootstrap: str, topic: str, partitions: int, decode: Callable[[Any], tuple[Any, Any]],
                 done: Callable[[dict], bool], timeout: float = 45.0) -> dict:
    """Read ``topic`` keeping the latest value per key until ``done(latest)`` (or the timeout)."""
    consumer = create_consumer(bootstrap, f"reader-{time.monotonic_ns()}", low_latency=True)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    latest: dict = {}
    deadline = time.monotonic() + timeout
    try:
        while not done(latest) and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    key, value = decode(msg)
                    latest[key] = value
    finally:
        consumer.close()
    return latest
