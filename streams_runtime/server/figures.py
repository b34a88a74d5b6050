"""Figures: one sample of a KafkaStreams client's figures for the console's history.

Read from what the client already keeps, never from the broker and never per record: the
threads' sensors (:class:`~streams_runtime.processor.internals.thread_metrics.ThreadMetrics`),
their StreamsMetrics registries, the restore progress and each input partition's position and
high watermark as the stream loop last refreshed them (at most once a second). One sample:

* ``process_rate``: records processed per second since the previous sample (None in the first);
* ``commit_latency_ms``: average commit time since the previous sample (None without a commit);
* ``dropped``, ``dead_lettered``: records dropped (every kind) and sent to the dead-letter topic,
  totals since the client started;
* ``restore_remaining``, ``restored``: changelog records still to restore and restored, summed
  over the changelog partitions;
* ``offsets``: ``"<topic>/<partition>" -> [committed, position, end]`` of every input partition
  of this instance: the next offset to read as last committed by its task (before its first
  commit: the group's committed offset when the partition was assigned; None when there was
  none), the consumer's position (None before it read
  anything of the partition) and the high watermark.

The committed offsets are read under each thread's ``query_lock`` (skipped for a thread that
holds it longer than ``LOCK_TIMEOUT_S``); everything else is read without a lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.processor.internals.metrics import DEAD_LETTER_RECORDS, DROPPED_RECORDS
from streams_runtime.query.local_stores import for_each_task_manager

if TYPE_CHECKING:
    from streams_runtime.processor.internals.stream_thread import StreamThread
    from streams_runtime.processor.internals.task_manager import TaskManager

LOCK_TIMEOUT_S = 0.25


class Figures:
    """Reads samples of ``streams`` (module docstring); keeps the totals of the previous one."""

    def __init__(self, streams: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self._streams = streams
        self._clock = clock
        self._previous: tuple[float, float, int, float] | None = None

    def read(self) -> dict[str, Any]:
        threads = list(self._streams.local_threads())
        now = self._clock()
        processed = float(sum(t.metrics.process.total for t in threads))
        commits = sum(t.metrics.commit.count for t in threads)
        commit_s = sum(t.metrics.commit.total_s for t in threads)
        rate = latency = None
        if self._previous is not None:
            then, processed_then, commits_then, commit_s_then = self._previous
            if now > then:
                rate = round(max(0.0, processed - processed_then) / (now - then), 3)
            if commits > commits_then:
                latency = round((commit_s - commit_s_then) * 1000 / (commits - commits_then), 3)
        self._previous = (now, processed, commits, commit_s)
        remaining, restored = _restore(self._streams)
        return {
            "process_rate": rate,
            "commit_latency_ms": latency,
            "dropped": _sensor_total(threads, DROPPED_RECORDS),
            "dead_lettered": _sensor_total(threads, DEAD_LETTER_RECORDS),
            "restore_remaining": remaining,
            "restored": restored,
            "offsets": _offsets(threads),
        }


def _sensor_total(threads: list[Any], name: str) -> int:
    return int(sum(t.streams_metrics.total(name) for t in threads))


def _restore(streams: Any) -> tuple[int, int]:
    progress = getattr(streams, "restore_progress", None)
    if progress is None:
        return 0, 0
    entries = progress.snapshot().values()
    return sum(e.remaining for e in entries), sum(e.restored for e in entries)


def _offsets(threads: list[Any]) -> dict[str, list[int | None]]:
    out: dict[str, list[int | None]] = {}
    for thread in threads:
        committed = _committed(thread)
        for (topic, partition), (position, end) in sorted(thread.metrics.records_offsets.items()):
            out[f"{topic}/{partition}"] = [committed.get((topic, partition)), position, end]
    return out


def _committed(thread: StreamThread) -> dict[tuple[str, int], int]:
    """The next offset to read of each input partition, as its task last committed it."""
    out: dict[tuple[str, int], int] = {}
    if not thread.query_lock.acquire(timeout=LOCK_TIMEOUT_S):
        return out
    try:
        manager = thread.task_manager
        for task in list(manager.tasks.values()) if manager is not None else []:
            for tp, offset in dict(getattr(task, "assigned_offsets", {})).items():
                out[(tp[0], tp[1])] = offset  # committed before the task ran
            for tp, offset in dict(getattr(task, "committed_offsets", {})).items():
                out[(tp[0], tp[1])] = offset + 1
    finally:
        thread.query_lock.release()
    return out


def store_sizes(threads: list[Any]) -> dict[str, int]:
    """Approximate entries of each store over this instance's active tasks (under the threads'
    locks, skipping a busy thread and a store that cannot answer)."""
    sizes: dict[str, int] = {}

    def add_sizes(_thread: StreamThread, manager: TaskManager) -> None:
        for task in list(manager.tasks.values()):
            for name, store in getattr(task, "stores", {}).items():
                try:
                    sizes[name] = sizes.get(name, 0) + int(store.approximate_num_entries())
                except Exception:  # a store closing or not queryable: left out
                    continue

    for_each_task_manager(threads, LOCK_TIMEOUT_S, add_sizes)
    return dict(sorted(sizes.items()))
