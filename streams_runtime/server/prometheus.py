"""The ``/metrics`` body: one KafkaStreams client's metrics in the Prometheus text format.

A ``prometheus_client`` collector reads the client's sensors at scrape time (nothing is pushed
from the hot path): thread sensors (:class:`ThreadMetrics`), the tasks' registry
(:class:`StreamsMetrics`: dropped records...), records lag per input partition, restore progress
per changelog partition, standby lag, and the stores' sizes and operation counts. Names are Kafka
Streams' metric names in Prometheus spelling: ``kafka_streams_<group>_<name>`` with ``-`` as
``_``; counters end in ``_total``; latencies are milliseconds. Labels: ``thread_id``,
``task_id``, ``topic``, ``partition``, ``store``.

Store sizes and standby lags are read under each thread's ``query_lock``, skipped for a thread
that holds it longer than ``LOCK_TIMEOUT_S`` (a long restore step, closing its tasks): a scrape
never stalls behind the stream thread, and everything else is read without the lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from streams_runtime.processor.internals.metrics import RECORD_LATENESS
from streams_runtime.processor.task_id import TaskId
from streams_runtime.query.local_stores import for_each_task_manager
from streams_runtime.state.internals.rocksdb_store import shared_memory_figures

if TYPE_CHECKING:
    from streams_runtime.processor.internals.stream_thread import StreamThread
    from streams_runtime.processor.internals.task_manager import TaskManager

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LOCK_TIMEOUT_S = 0.25
PREFIX = "kafka_streams"
#: sensors of values (a record's lateness in ms), not counts: exported as their average and maximum
VALUE_SENSORS = frozenset({RECORD_LATENESS})

#: thread snapshot key -> (metric name, help, counter?)
_THREAD_METRICS = {
    "process-rate": ("stream_thread_process_rate", "Records processed per second by the thread.", False),
    "process-total": ("stream_thread_process", "Records processed by the thread.", True),
    "process-latency-avg": (
        "stream_thread_process_latency_avg",
        "Average time (ms) of one loop iteration's processing.",
        False,
    ),
    "process-latency-max": (
        "stream_thread_process_latency_max",
        "Longest processing of one loop iteration (ms).",
        False,
    ),
    "poll-total": ("stream_thread_poll", "Consumer polls of the thread.", True),
    "poll-records-total": ("stream_thread_poll_records", "Records returned by the thread's polls.", True),
    "poll-latency-avg": ("stream_thread_poll_latency_avg", "Average consumer poll time (ms).", False),
    "poll-latency-max": ("stream_thread_poll_latency_max", "Longest consumer poll (ms).", False),
    "commit-rate": ("stream_thread_commit_rate", "Commits per second.", False),
    "commit-total": ("stream_thread_commit", "Commits of the thread.", True),
    "commit-latency-avg": ("stream_thread_commit_latency_avg", "Average commit time (ms).", False),
    "commit-latency-max": ("stream_thread_commit_latency_max", "Longest commit (ms).", False),
}

#: shared_memory_figures() key -> help (gauges kafka_streams_rocksdb_<key>[_bytes])
_ROCKSDB_METRICS = {
    "block_cache_capacity": "Capacity of the block cache all RocksDB stores of the process share.",
    "block_cache_usage": "Bytes in the shared block cache (memtables charged to it included).",
    "block_cache_pinned_usage": "Bytes of the shared block cache pinned (in use, not evictable).",
    "memtable_budget": "The part of the shared block cache memtables may use.",
    "open_databases": "RocksDB databases open in the process (one per persistent store of a task).",
}


def _name(raw: str) -> str:
    return raw.replace("-", "_").replace(".", "_")


def _gauge(name: str, help_text: str, *labels: str) -> GaugeMetricFamily:
    """A gauge family ``kafka_streams_<name>`` with these label names."""
    return GaugeMetricFamily(f"{PREFIX}_{name}", help_text, labels=list(labels))


def _counter(name: str, help_text: str, *labels: str) -> CounterMetricFamily:
    """A counter family ``kafka_streams_<name>`` (exposed as ``..._total``) with these label names."""
    return CounterMetricFamily(f"{PREFIX}_{name}", help_text, labels=list(labels))


class StreamsCollector(Collector):
    """Collects one KafkaStreams client's metrics at scrape time (module docstring)."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams

    def collect(self) -> Iterator[Metric]:
        streams = self._streams
        threads = streams.local_threads()
        yield from self._client(streams, threads)
        yield from self._threads(threads)
        yield from self._records_lag(threads)
        yield from self._task_sensors(threads)
        yield from self._restore(streams)
        yield from self._under_locks(threads)
        yield from self._rocksdb()

    @staticmethod
    def _client(streams: Any, threads: list[Any]) -> Iterator[Metric]:
        state = _gauge("client_state", "1 for the client's current state.", "state")
        state.add_metric([streams.state.name], 1)
        yield state
        alive = _gauge("alive_stream_threads", "Live stream threads of the client.")
        alive.add_metric([], len(threads))
        yield alive

    @staticmethod
    def _threads(threads: list[Any]) -> Iterator[Metric]:
        families: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
        for key, (name, help_text, counter) in _THREAD_METRICS.items():
            families[key] = (_counter if counter else _gauge)(name, help_text, "thread_id")
        for thread in threads:
            for key, value in thread.metrics.snapshot().items():
                if key in families:
                    families[key].add_metric([thread.name], value)
        yield from families.values()

    @staticmethod
    def _records_lag(threads: list[Any]) -> Iterator[Metric]:
        lag = _gauge(
            "consumer_records_lag",
            "Records between the consumer's position and the partition's high "
            "watermark (the last fetch's), per input partition.",
            "thread_id",
            "topic",
            "partition",
        )
        for thread in threads:
            for (topic, partition), value in sorted(thread.metrics.records_lag.items()):
                lag.add_metric([thread.name, topic, str(partition)], value)
        yield lag

    @staticmethod
    def _task_sensors(threads: list[Any]) -> Iterator[Metric]:
        """Every sensor of the threads' StreamsMetrics registries (dropped-records...) as a counter of
        its total; a sensor of values, not counts (``record-lateness``), as Kafka Streams names it:
        gauges ``<name>_avg`` and ``<name>_max`` (ms)."""
        label_names: dict[str, list[str]] = {}
        samples: dict[tuple[str, str], list[tuple[list[str], float]]] = {}
        for thread in threads:
            for sensor in thread.streams_metrics.sensors():
                name = f"{PREFIX}_{_name(sensor.group.removesuffix('-metrics'))}_{_name(sensor.name)}"
                keys = ["thread_id", *(_name(k) for k, _ in sensor.tags)]
                if label_names.setdefault(name, keys) != keys:
                    continue
                labels = [thread.name, *(str(v) for _, v in sensor.tags)]
                if sensor.name in VALUE_SENSORS:
                    if sensor.count:
                        samples.setdefault((f"{name}_avg", "gauge"), []).append((labels, sensor.avg()))
                        samples.setdefault((f"{name}_max", "gauge"), []).append((labels, sensor.max))
                else:
                    samples.setdefault((name, "counter"), []).append((labels, sensor.total))
        for (name, kind), rows in samples.items():
            base = name.removesuffix("_avg").removesuffix("_max") if kind == "gauge" else name
            family_type = GaugeMetricFamily if kind == "gauge" else CounterMetricFamily
            family = family_type(name, f"Kafka Streams sensor {name}.", labels=label_names[base])
            for labels, value in rows:
                family.add_metric(labels, value)
            yield family

    @staticmethod
    def _restore(streams: Any) -> Iterator[Metric]:
        labels = ("task_id", "store", "topic", "partition")
        remaining = _gauge(
            "restore_remaining_records",
            "Changelog records still to restore, per changelog partition.",
            *labels,
        )
        restored = _counter(
            "restore_records_restored", "Changelog records restored, per changelog partition.", *labels
        )
        progress = streams.restore_progress
        tasks = _store_subtopologies(streams)
        if progress is not None:
            for (topic, partition), entry in sorted(progress.snapshot().items()):
                sub = tasks.get(entry.store)
                task = str(TaskId(sub, partition)) if sub is not None else ""
                values = [task, entry.store, topic, str(partition)]
                remaining.add_metric(values, entry.remaining)
                restored.add_metric(values, entry.restored)
        yield remaining
        yield restored

    @staticmethod
    def _rocksdb() -> Iterator[Metric]:
        """The process's RocksDB memory (one budget for every store: rocksdb_block_cache_bytes);
        nothing before the first RocksDB store opened."""
        figures = shared_memory_figures()
        if figures is None:
            return
        for key, help_text in _ROCKSDB_METRICS.items():
            family = _gauge(f"rocksdb_{key}" + ("" if key == "open_databases" else "_bytes"), help_text)
            family.add_metric([], figures[key])
            yield family

    @staticmethod
    def _under_locks(threads: list[Any]) -> Iterator[Metric]:
        entries = _gauge(
            "state_store_entries",
            "Approximate number of entries of a store of a task.",
            "thread_id",
            "task_id",
            "store",
        )
        operations = _counter(
            "state_store_operations",
            "Operations on a store of a task.",
            "thread_id",
            "task_id",
            "store",
            "operation",
        )
        standby = _gauge(
            "standby_records_lag",
            "Changelog records a standby task is behind its active.",
            "thread_id",
            "task_id",
            "topic",
            "partition",
        )
        running = _gauge(
            "stream_task_running",
            "1 for an active task that is RUNNING, 0 while it restores.",
            "thread_id",
            "task_id",
        )

        def of_manager(thread: StreamThread, manager: TaskManager) -> None:
            for task_id, task in sorted(manager.tasks.items()):
                running.add_metric([thread.name, str(task_id)], 0 if manager.is_restoring(task_id) else 1)
                for name, store in task.stores.items():
                    try:
                        entries.add_metric([thread.name, str(task_id), name], store.approximate_num_entries())
                    except Exception:  # a store closing or not queryable: left out
                        continue
                    metrics = getattr(store, "store_metrics", None)
                    if metrics is not None:
                        for op, sensor in metrics.sensors.items():
                            operations.add_metric([thread.name, str(task_id), name, op], sensor.count)
            standby_lags = getattr(manager, "standby_lags", None)
            if standby_lags is not None:
                for task_id, by_tp in sorted((standby_lags() or {}).items()):
                    for (topic, partition), lag in sorted(by_tp.items()):
                        standby.add_metric([thread.name, str(task_id), topic, str(partition)], lag)

        for_each_task_manager(threads, LOCK_TIMEOUT_S, of_manager)
        yield running
        yield entries
        yield operations
        yield standby


def _store_subtopologies(streams: Any) -> dict[str, int]:
    subtopologies: dict[str, int] = streams.interactive_queries.local.store_subtopologies()
    return subtopologies


def render(streams: Any) -> bytes:
    """The Prometheus text exposition of ``streams``' metrics."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StreamsCollector(streams))
    return generate_latest(registry)
