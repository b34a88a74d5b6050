"""Helpers for the KafkaStreams integration tests: topics, producing, reading to the end, waiting.

Test profile (docs/decisions/0001-embedded-broker.md): 2 s sessions and 200 ms heartbeats for the coordination
group (Tansu answers joins about session/2 late), short commit intervals, low-latency fetches.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from streams_runtime import KafkaStreams, KafkaStreamsState
from streams_runtime.kafka.clients import (
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_restore_consumer,
    create_topics,
)
from streams_runtime.kafka.offsets import EOF_OVERRIDES, scan_to_eof
from streams_runtime.kafka.offsets import read_to_end as read_partitions_to_end
from tests.conditions import wait_until  # noqa: F401 (re-exported: the integration tests import it from here)

FAST_CLIENT = {
    "consumer.session.timeout.ms": 2000,
    "consumer.heartbeat.interval.ms": 200,
    "consumer.fetch.wait.max.ms": 10,
    "commit_interval_ms": 200,
    "poll_ms": 20,
}


def streams_config(bootstrap: str, app_id: str, state_dir: Any, **extra: Any) -> dict[str, Any]:
    return {
        "application_id": app_id,
        "bootstrap_servers": bootstrap,
        "state_dir": str(state_dir),
        **FAST_CLIENT,
        **extra,
    }


def make_topics(bootstrap: str, replication_factor: int = 1, **partitions: int) -> None:
    specs = [TopicSpec(name, n, replication_factor) for name, n in partitions.items()]
    create_topics(create_admin(bootstrap), specs)


def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[tuple[bytes | None, bytes | None]],
    timestamp: int | None = None,
) -> int:
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


def read_latest_until(
    bootstrap: str,
    topic: str,
    partitions: int,
    decode: Callable[[Any], tuple[Any, Any]],
    expected: dict,
    timeout: float = 45.0,
) -> dict:
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
    """How many records ``topic`` holds: read every partition to its true end (EOF,
    docs/decisions/0001-embedded-broker.md)."""
    consumer = create_consumer(bootstrap, f"counter-{time.monotonic_ns()}", EOF_OVERRIDES, low_latency=True)
    seen: list[int] = []
    try:
        scan_to_eof(consumer, topic, dict.fromkeys(range(partitions), 0), lambda m: seen.append(1), timeout)
    finally:
        consumer.close()
    return len(seen)


def latest_until(
    bootstrap: str,
    topic: str,
    partitions: int,
    decode: Callable[[Any], tuple[Any, Any]],
    done: Callable[[dict], bool],
    timeout: float = 45.0,
) -> dict:
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


ROOT = Path(__file__).resolve().parents[2]


class WorkerProcess:
    """One ``python -m streams_runtime.worker_instance`` process (one stream thread) of a test app.

    Its output lines are read on a daemon thread and kept with their arrival times; ``env`` is added
    to the test's environment (the test apps read their topics or settings from there).
    ``command_prefix`` runs the process through another command (``ip netns exec NAME``: on
    another host of ``tests/integration/netns.py``), ``extra_args`` are more arguments of
    ``worker_instance`` (``--http-port``...).
    """

    def __init__(
        self,
        app: str,
        index: int,
        bootstrap: str,
        state_dir: Path,
        env: Mapping[str, str] | None = None,
        *,
        command_prefix: Sequence[str] = (),
        extra_args: Sequence[str] = (),
    ) -> None:
        self.index = index
        self.state_dir = state_dir
        self.process = subprocess.Popen(
            [
                *command_prefix,
                sys.executable,
                "-m",
                "streams_runtime.worker_instance",
                "--app",
                app,
                "--instance",
                str(index),
                "--threads",
                "1",
                "--bootstrap-servers",
                bootstrap,
                "--state-dir",
                str(state_dir),
                *extra_args,
            ],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.timed_lines: list[tuple[float, str]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:  # type: ignore[union-attr]
            self.timed_lines.append((time.monotonic(), line.rstrip("\n")))

    @property
    def lines(self) -> list[str]:
        """The output lines so far."""
        return [line for _, line in list(self.timed_lines)]

    def text(self) -> str:
        return "\n".join(self.lines)

    def active_partitions(self) -> set[int] | None:
        """Partitions of sub-topology 0's active tasks in the last report (printed on RUNNING), or
        None before the first one."""
        reports = [line for line in self.lines if "active task(s)" in line]
        if not reports:
            return None
        listed = reports[-1].split("active task(s)")[1]
        return {int(t.split("_")[1]) for t in re.findall(r"\b0_\d+\b", listed)}

    def kill(self) -> float:
        """SIGKILL (no commit, no close, no LeaveGroup); returns the monotonic time of the kill."""
        at = time.monotonic()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        return at

    def stop(self) -> None:
        """SIGTERM (after SIGCONT, in case a test froze it) and wait; SIGKILL after 30 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def read_to_end(
    bootstrap: str, topic: str, partitions: int, timeout: float = 30.0, isolation: str | None = None
) -> list[Any]:
    """Every record of ``topic`` from the beginning to each partition's true end (its EOF event),
    whatever their number: with at-least-once duplicates, a count of records read says nothing
    about which records arrived. ``isolation``: the consumer's ``isolation.level`` when given
    (librdkafka's default, read_committed, otherwise)."""
    consumer = create_restore_consumer(bootstrap, {"isolation.level": isolation} if isolation else None)
    out: list[Any] = []
    try:
        read_partitions_to_end(consumer, {(topic, p): 0 for p in range(partitions)}, out.append, timeout)
    finally:
        consumer.close()
    return out
