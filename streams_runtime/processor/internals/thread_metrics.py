"""ThreadMetrics and RestoreProgress: what a StreamThread and its restores report, cheaply.

Owned by one StreamThread (ThreadMetrics) or one KafkaStreams client (RestoreProgress). Written
by one thread only (the stream thread: lock-free updates) and read by the metrics endpoint on
another: every value is a plain int/float attribute or a dict replaced whole, so a reader sees a
consistent value without a lock (the GIL makes each store atomic).

Recording is per loop iteration, never per record: the loop times its poll, its processing of the
whole batch and each commit with two clock reads each, and refreshes the per-partition records lag
at most once a second. Names are Kafka Streams' (``stream-thread-metrics``: process-rate/total,
process-latency-avg/max, poll-latency-avg/max, commit-latency-avg/max; the consumer's
``records-lag`` per input partition; restore-remaining-records and records-restored per changelog).

Rates are Kafka's sampled rates: counts over the current and the previous sample window
(``RATE_WINDOW_S`` each) divided by the time since the previous window began, so an idle thread's
rate decays to zero instead of freezing at its last value.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streams_runtime.processor.restore_listener import StateRestoreListener

#: seconds per rate sample window
RATE_WINDOW_S = 2.0
#: how often the loop refreshes records lag from the consumer (ms)
LAG_REFRESH_MS = 1000


class _Latency:
    """count / total seconds / max seconds of one timed operation."""

    __slots__ = ("count", "total_s", "max_s")

    def __init__(self) -> None:
        self.count = 0
        self.total_s = 0.0
        self.max_s = 0.0

    def record(self, seconds: float) -> None:
        self.count += 1
        self.total_s += seconds
        if seconds > self.max_s:
            self.max_s = seconds

    @property
    def avg_ms(self) -> float:
        return self.total_s * 1000 / self.count if self.count else 0.0

    @property
    def max_ms(self) -> float:
        return self.max_s * 1000


class _Rate:
    """Kafka's two-sample rate of a monotonically growing total."""

    __slots__ = ("total", "_prev_start", "_prev_count", "_cur_start", "_cur_count", "_clock")

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.total = 0
        now = clock()
        self._prev_start = now
        self._prev_count = 0
        self._cur_start = now
        self._cur_count = 0

    def add(self, n: int, now: float) -> None:
        self.total += n
        if now - self._cur_start >= RATE_WINDOW_S:
            self._prev_start, self._prev_count = self._cur_start, self._cur_count
            self._cur_start, self._cur_count = now, 0
        self._cur_count += n

    def rate(self, now: float | None = None) -> float:
        now = self._clock() if now is None else now
        prev_start, prev_count, cur_start, cur_count = (
            self._prev_start,
            self._prev_count,
            self._cur_start,
            self._cur_count,
        )
        if now - cur_start >= 2 * RATE_WINDOW_S:  # both samples expired: nothing recent
            return 0.0
        if now - cur_start >= RATE_WINDOW_S:  # the current sample ended: it is the previous one
            prev_start, prev_count, cur_count = cur_start, cur_count, 0
        elapsed = max(now - prev_start, RATE_WINDOW_S)
        return (prev_count + cur_count) / elapsed


class ThreadMetrics:
    """The sensors of one StreamThread (see the module docstring); ``thread_id`` is its label."""

    def __init__(self, thread_id: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.thread_id = thread_id
        self._clock = clock
        self.process = _Rate(clock)
        self.poll_records = 0
        self.poll = _Latency()
        self.process_latency = _Latency()
        self.commit = _Latency()
        self.commit_rate = _Rate(clock)
        #: ``(topic, partition) -> records lag`` of the thread's input partitions (replaced whole)
        self.records_lag: dict[tuple[str, int], int] = {}
        #: ``(topic, partition) -> (position, high watermark)`` of the same refresh (replaced whole;
        #: position None for a partition the consumer has no position of yet)
        self.records_offsets: dict[tuple[str, int], tuple[int | None, int]] = {}
        self._next_lag_refresh = 0.0

    # ------------------------------------------------------------------ recording (stream thread)
    def record_iteration(self, poll_s: float, polled: int, process_s: float, processed: int) -> None:
        """One loop iteration: its consumer wait, and the processing of everything buffered."""
        self.poll.record(poll_s)
        self.poll_records += polled
        if processed:
            self.process_latency.record(process_s)
            self.process.add(processed, self._clock())

    def record_commit(self, seconds: float) -> None:
        self.commit.record(seconds)
        self.commit_rate.add(1, self._clock())

    def maybe_refresh_lag(self, now_ms: int, consumer: Any, partitions: Callable[[], list[Any]]) -> None:
        """At most every LAG_REFRESH_MS: records lag = cached fetch high watermark - position (the
        fetch response's high watermark is the true end, also on Tansu:
        docs/decisions/0001-embedded-broker.md)."""
        if now_ms < self._next_lag_refresh:
            return
        assigned = partitions()
        if not assigned:  # nothing to measure yet: look again next iteration
            self.records_lag = {}
            self.records_offsets = {}
            return
        self._next_lag_refresh = now_ms + LAG_REFRESH_MS
        lags: dict[tuple[str, int], int] = {}
        offsets: dict[tuple[str, int], tuple[int | None, int]] = {}
        if assigned:
            for tp in consumer.position(assigned):
                try:
                    _, high = consumer.get_watermark_offsets(tp, cached=True)
                except Exception:  # no fetch answered for it yet
                    continue
                if high is None or high < 0:
                    continue
                if tp.offset < 0:  # nothing read yet: the end is known, the lag is not
                    offsets[(tp.topic, tp.partition)] = (None, high)
                    continue
                lags[(tp.topic, tp.partition)] = max(0, high - tp.offset)
                offsets[(tp.topic, tp.partition)] = (tp.offset, high)
        self.records_lag = lags
        self.records_offsets = offsets

    # ------------------------------------------------------------------ reading (any thread)
    def snapshot(self) -> dict[str, float]:
        """Every thread-level metric by its Kafka Streams name."""
        return {
            "process-rate": self.process.rate(),
            "process-total": float(self.process.total),
            "process-latency-avg": self.process_latency.avg_ms,
            "process-latency-max": self.process_latency.max_ms,
            "poll-total": float(self.poll.count),
            "poll-records-total": float(self.poll_records),
            "poll-latency-avg": self.poll.avg_ms,
            "poll-latency-max": self.poll.max_ms,
            "commit-rate": self.commit_rate.rate(),
            "commit-total": float(self.commit.count),
            "commit-latency-avg": self.commit.avg_ms,
            "commit-latency-max": self.commit.max_ms,
        }


@dataclass
class ChangelogRestore:
    """Restore progress of one changelog partition (one store of one task)."""

    store: str
    start_offset: int
    end_offset: int
    current_offset: int
    restored: int = 0
    done: bool = False

    @property
    def remaining(self) -> int:
        return 0 if self.done else max(0, self.end_offset - self.current_offset)


class RestoreProgress(StateRestoreListener):
    """A restore listener that keeps every changelog partition's progress, then forwards to the
    user's listener (if any). Called on the restoring stream threads; read by the metrics endpoint
    and ``all_local_store_partition_lags``."""

    def __init__(self, delegate: StateRestoreListener | None = None) -> None:
        self._delegate = delegate
        self._lock = threading.Lock()
        self.changelogs: dict[tuple[str, int], ChangelogRestore] = {}

    def on_restore_start(
        self, tp: tuple[str, int], store_name: str, start_offset: int, end_offset: int
    ) -> None:
        with self._lock:
            self.changelogs[(tp[0], tp[1])] = ChangelogRestore(
                store_name, start_offset, end_offset, start_offset
            )
        if self._delegate is not None:
            self._delegate.on_restore_start(tp, store_name, start_offset, end_offset)

    def on_batch_restored(
        self, tp: tuple[str, int], store_name: str, batch_end_offset: int, num_restored: int
    ) -> None:
        entry = self.changelogs.get((tp[0], tp[1]))
        if entry is not None:
            entry.current_offset = batch_end_offset + 1
            entry.restored += num_restored
        if self._delegate is not None:
            self._delegate.on_batch_restored(tp, store_name, batch_end_offset, num_restored)

    def on_restore_end(self, tp: tuple[str, int], store_name: str, total_restored: int) -> None:
        entry = self.changelogs.get((tp[0], tp[1]))
        if entry is not None:
            entry.done = True
            entry.current_offset = max(entry.current_offset, entry.end_offset)
            entry.restored = total_restored
        if self._delegate is not None:
            self._delegate.on_restore_end(tp, store_name, total_restored)

    def snapshot(self) -> dict[tuple[str, int], ChangelogRestore]:
        with self._lock:
            return dict(self.changelogs)
