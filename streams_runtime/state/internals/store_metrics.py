"""StoreMetrics: per-store operation rates, latencies and size, kept in process.

Owner: one :class:`MeteredKeyValueStore` (the outermost layer of a store stack) owns one
:class:`StoreMetrics`; the runtime's metrics registry may read :meth:`StoreMetrics.snapshot`.
Names follow Kafka Streams' state-store metrics (``put-rate``, ``get-latency-avg``, ...), with
latencies in milliseconds and rates in operations per second over a sliding window.

Invariant: recording is O(1) and memory is bounded (one counter per second of the window).

Latencies are measured only when ``metrics_recording_level`` is ``debug`` or ``trace`` (as in
Kafka Streams, where store metrics are debug-level): at ``info`` the metered stores count each
operation (:meth:`Sensor.record_count`: total and rate) without reading a clock around it, and
the latency metrics stay 0. Counted operations reach the rate window in batches: the total is
exact at once, and the operations counted since the last batch are given to the window (with
one clock read) every :data:`COUNT_BATCH` operations and whenever the rate is read, so the hot
path reads no clock at all.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

__all__ = ["COUNT_BATCH", "OPERATIONS", "Sensor", "StoreMetrics"]

#: Counted operations handed to the rate window at once (one clock read per batch).
COUNT_BATCH = 256

OPERATIONS = (
    "put",
    "put-if-absent",
    "put-all",
    "get",
    "delete",
    "range",
    "prefix-scan",
    "all",
    "flush",
    "fetch",
    "remove",
)


class Sensor:
    """Count, latency and windowed rate of one operation.

    :param window_seconds: the width of the rate window.
    :param clock: seconds, monotonic (injectable for tests).
    """

    def __init__(self, window_seconds: int = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self._window = window_seconds
        self._clock = clock
        self._created = clock()
        self._buckets: deque[list[int]] = deque()
        self.count = 0
        self._unwindowed = 0  # counted, not yet in the rate window (see record_count)
        self.timed = 0  # the operations counted with a latency (record), of count
        self.total_latency_ns = 0
        self.max_latency_ns = 0

    def record(self, latency_ns: int) -> None:
        """Count one operation that took ``latency_ns``."""
        self.timed += 1
        self.total_latency_ns += latency_ns
        if latency_ns > self.max_latency_ns:
            self.max_latency_ns = latency_ns
        self.count += 1
        self._window_add(1)

    def record_count(self) -> None:
        """Count one operation whose latency was not measured (rate and total only).

        No clock read: the operation joins the rate window with its batch (module docstring).
        """
        self.count += 1
        self._unwindowed += 1
        if self._unwindowed >= COUNT_BATCH:
            self._window_add(0)

    def _window_add(self, operations: int) -> None:
        """Put ``operations`` plus the counted-only ones into the current second's bucket."""
        operations += self._unwindowed
        self._unwindowed = 0
        second = int(self._clock())
        buckets = self._buckets
        if buckets and buckets[-1][0] == second:
            buckets[-1][1] += operations
        else:
            buckets.append([second, operations])
            self._expire(second)

    def _expire(self, second: int) -> None:
        while self._buckets and self._buckets[0][0] <= second - self._window:
            self._buckets.popleft()

    def rate(self) -> float:
        """Operations per second over the window (or since creation, when younger)."""
        if self._unwindowed:
            self._window_add(0)
        now = self._clock()
        self._expire(int(now))
        span = min(float(self._window), max(now - self._created, 1.0))
        return sum(count for _, count in self._buckets) / span

    def latency_avg_ms(self) -> float:
        """Mean latency in milliseconds of the timed operations (0.0 before the first one)."""
        return self.total_latency_ns / self.timed / 1e6 if self.timed else 0.0

    def latency_max_ms(self) -> float:
        """Max latency in milliseconds."""
        return self.max_latency_ns / 1e6


class StoreMetrics:
    """The sensors of one store.

    :param task_id: the owning task (a tag).
    :param store_type: the metrics scope, e.g. ``"rocksdb"`` or ``"in-memory"`` (a tag).
    :param store_name: the store (a tag).
    :param size: returns the store's approximate number of entries.
    :param clock: seconds, monotonic (injectable for tests).
    """

    def __init__(
        self,
        task_id: object,
        store_type: str,
        store_name: str,
        size: Callable[[], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tags = {"task-id": str(task_id), "store-type": store_type, "store-name": store_name}
        self._size = size
        self.sensors = {operation: Sensor(clock=clock) for operation in OPERATIONS}

    def record(self, operation: str, latency_ns: int) -> None:
        """Record one ``operation`` (one of :data:`OPERATIONS`) that took ``latency_ns``."""
        self.sensors[operation].record(latency_ns)

    def snapshot(self) -> dict[str, float]:
        """Every metric by name: ``<op>-rate``, ``<op>-total``, ``<op>-latency-avg|max``, ``size``."""
        values: dict[str, float] = {}
        for operation, sensor in self.sensors.items():
            values[f"{operation}-rate"] = sensor.rate()
            values[f"{operation}-total"] = float(sensor.count)
            values[f"{operation}-latency-avg"] = sensor.latency_avg_ms()
            values[f"{operation}-latency-max"] = sensor.latency_max_ms()
        values["size"] = float(self._size())
        return values
