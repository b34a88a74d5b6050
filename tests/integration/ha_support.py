"""Helpers for the high-availability tests and bench/failover.py: worker processes, an output
watcher that timestamps every record it reads, a steady "live" producer, checkpoint reading.

Instances run ``python -m streams_runtime.worker_instance`` with the app of
``tests/integration/ha_app.py`` (configured through ``$HA_TEST_CONFIG``), one thread each.
"""

from __future__ import annotations

import json
import re
import struct
import threading
import time
from pathlib import Path
from typing import Any

from streams_runtime.kafka.clients import TopicPartition, create_consumer, create_producer
from tests.integration.streams_support import WorkerProcess, wait_until

APP = "tests.integration.ha_app:app"
RESTORED = re.compile(r"task (\d+_\d+): restoration complete, (\d+) records restored in ([\d.]+)s")


class Instance(WorkerProcess):
    """One ``worker_instance`` process of the HA app, configured with ``settings``."""

    def __init__(
        self,
        index: int,
        bootstrap: str,
        settings: dict[str, Any],
        state_dir: Path,
        env: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        """``env`` is added to the instance's environment; ``options`` are
        :class:`WorkerProcess`' (``command_prefix``, ``extra_args``)."""
        env = {**(env or {}), "HA_TEST_CONFIG": json.dumps(settings)}
        super().__init__(APP, index, bootstrap, state_dir, env=env, **options)
        self.settings = settings

    def reports(self, role: str) -> list[tuple[float, set[str]]]:
        """Every ``<role> task(s)`` report (role: active | standby) with its time."""
        found = []
        for at, line in list(self.timed_lines):
            if f" {role} task(s)" in line:
                found.append((at, set(re.findall(r"\b\d+_\d+\b", line.split(f"{role} task(s)")[1]))))
        return found

    def tasks(self, role: str = "active") -> set[str]:
        """The tasks of ``role`` in the last report of either role (a report lists both)."""
        last_any = max((at for at, _ in self.reports("active") + self.reports("standby")), default=None)
        if last_any is None:
            return set()
        return {t for at, ts in self.reports(role) if at >= last_any - 0.05 for t in ts}

    def restorations(self, since: float = 0.0) -> list[tuple[float, str, int, float]]:
        """``(time, task, records restored, seconds)`` of each completed restoration after ``since``."""
        out = []
        for at, line in list(self.timed_lines):
            match = RESTORED.search(line)
            if match and at >= since:
                out.append((at, match.group(1), int(match.group(2)), float(match.group(3))))
        return out

    def checkpoint(self, app_id: str, task: str) -> dict[str, int]:
        path = self.state_dir / app_id / task / ".checkpoint"
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return {}


class OutputWatcher:
    """Reads a topic from the beginning on its own thread; every record with its arrival time."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.records: list[tuple[float, int, str, int]] = []  # (arrival, partition, key, count)
        self._stop = threading.Event()
        self._consumer = create_consumer(bootstrap, f"watcher-{time.monotonic_ns()}", low_latency=True)
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                for msg in self._consumer.consume(2000, 0.05):
                    if msg.error() is None:
                        self.records.append(
                            (
                                time.monotonic(),
                                msg.partition(),
                                msg.key().decode(),
                                struct.unpack(">q", msg.value())[0],
                            )
                        )
        finally:
            self._consumer.close()

    def count(self) -> int:
        return len(self.records)

    def first_after(self, since: float, partition: int | None = None) -> float | None:
        for at, p, _, _ in list(self.records):
            if at > since and (partition is None or p == partition):
                return at
        return None

    def arrivals(self, partition: int, start: float, end: float) -> list[float]:
        return [at for at, p, _, _ in list(self.records) if p == partition and start <= at <= end]

    def latest(self) -> dict[str, int]:
        return {key: value for _, _, key, value in list(self.records)}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


class LiveProducer:
    """Produces ``per_tick`` records to each partition every ``tick_s`` (keys ``live-<p>-<i>``)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        per_tick: int = 5,
        tick_s: float = 0.1,
        keys_per_partition: int = 5,
    ) -> None:
        self.produced: dict[str, int] = {}
        self._stop = threading.Event()
        self._args = (bootstrap, topic, partitions, per_tick, tick_s, keys_per_partition)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        bootstrap, topic, partitions, per_tick, tick_s, keys = self._args
        producer = create_producer(bootstrap, {"linger.ms": 5})
        n = 0
        while not self._stop.is_set():
            for p in range(partitions):
                for _ in range(per_tick):
                    key = f"live-{p}-{n % keys}"
                    producer.produce(topic, b"x", key.encode(), partition=p)
                    self.produced[key] = self.produced.get(key, 0) + 1
                    n += 1
            producer.poll(0)
            self._stop.wait(tick_s)
        assert producer.flush(30) == 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(35)


def max_gap(times: list[float], start: float, end: float) -> float:
    """The longest interval without an arrival in ``[start, end]`` (edges included)."""
    points = [start, *sorted(t for t in times if start <= t <= end), end]
    return max(b - a for a, b in zip(points, points[1:], strict=False))


#: the HA tests' name for streams_support.wait_until
wait_for = wait_until


def produce_keys(
    bootstrap: str,
    topic: str,
    count: int,
    prefix: str = "k",
    value: bytes = b"",
    partition: int | None = None,
) -> None:
    """``count`` distinct keys (``<prefix>0000000``...) with ``value``, to ``partition`` (default: by
    key, murmur2), one producer, as fast as it goes."""
    producer = create_producer(bootstrap, {"linger.ms": 20, "partitioner": "murmur2_random"})
    where = {} if partition is None else {"partition": partition}
    for i in range(count):
        key = f"{prefix}{i:07d}".encode()
        while True:
            try:
                producer.produce(topic, value, key, **where)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
