"""Thread sensors (rates, latencies, records lag), restore progress and their Prometheus text."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from prometheus_client.parser import text_string_to_metric_families

from streams_runtime.processor.internals.thread_metrics import RATE_WINDOW_S, RestoreProgress, ThreadMetrics
from streams_runtime.server.prometheus import render
from tests.unit.query.fakes import FakeClient, FakeThread


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_should_rate_over_the_current_and_previous_window_and_decay_when_idle():
    clock = Clock()
    metrics = ThreadMetrics("t", clock=clock)
    for _ in range(10):
        clock.now += RATE_WINDOW_S / 5
        metrics.record_iteration(0.01, 100, 0.02, 100)
    snapshot = metrics.snapshot()
    assert snapshot["process-total"] == 1000
    assert 200 <= snapshot["process-rate"] <= 300  # 100 records every 0.4 s
    assert snapshot["process-latency-max"] == pytest.approx(20.0)
    assert snapshot["poll-latency-avg"] == pytest.approx(10.0)
    clock.now += 3 * RATE_WINDOW_S
    assert metrics.snapshot()["process-rate"] == 0.0


def test_should_compute_records_lag_from_the_cached_high_watermark_at_most_once_a_second():
    tps = [
        SimpleNamespace(topic="in", partition=0, offset=40),
        SimpleNamespace(topic="in", partition=1, offset=-1001),
    ]
    consumer = SimpleNamespace(
        position=lambda assigned: tps, get_watermark_offsets=lambda tp, cached: (0, 50)
    )
    metrics = ThreadMetrics("t")
    metrics.maybe_refresh_lag(1000, consumer, lambda: tps)
    assert metrics.records_lag == {("in", 0): 10}  # no position yet for partition 1: left out
    assert metrics.records_offsets == {("in", 0): (40, 50), ("in", 1): (None, 50)}
    tps[0].offset = 50
    metrics.maybe_refresh_lag(1500, consumer, lambda: tps)
    assert metrics.records_lag == {("in", 0): 10}
    metrics.maybe_refresh_lag(2000, consumer, lambda: tps)
    assert metrics.records_lag == {("in", 0): 0}


def test_should_track_restore_progress_and_forward_to_the_user_listener():
    heard = []
    user = SimpleNamespace(
        on_restore_start=lambda *a: heard.append("start"),
        on_batch_restored=lambda *a: heard.append("batch"),
        on_restore_end=lambda *a: heard.append("end"),
    )
    progress = RestoreProgress(user)
    progress.on_restore_start(("c", 1), "counts", 10, 110)
    progress.on_batch_restored(("c", 1), "counts", 59, 50)
    entry = progress.snapshot()[("c", 1)]
    assert (entry.restored, entry.remaining) == (50, 50)
    progress.on_restore_end(("c", 1), "counts", 100)
    assert progress.snapshot()[("c", 1)].remaining == 0
    assert heard == ["start", "batch", "end"]


def _samples(text: bytes) -> dict[str, list]:
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def test_should_render_thread_task_store_restore_and_standby_metrics_as_prometheus_text():
    thread = FakeThread("app-StreamThread-1")
    thread.host(0, {"a": 1, "b": 2})
    thread.host_standby(3, {})
    thread.metrics.record_iteration(0.001, 5, 0.002, 5)
    thread.metrics.record_commit(0.004)
    thread.metrics.records_lag = {("input", 0): 12}
    thread.streams_metrics.dropped_records("0_0").increment(2)
    for lateness in (0, 30, 90):  # recorded at the debug level: ms behind the task's stream time
        thread.streams_metrics.record_lateness("0_0").record(lateness)
    thread.streams_metrics.sensor(
        "mispartitioned-records", tags={"task-id": "0_1", "topic": "input"}
    ).increment()
    client = FakeClient([thread])
    client.restore_progress = RestoreProgress()
    client.restore_progress.on_restore_start(("app-counts-changelog", 2), "counts", 0, 100)
    samples = _samples(render(client))
    label = {"thread_id": "app-StreamThread-1"}
    assert samples["kafka_streams_stream_thread_process_total"] == [(label, 5.0)]
    assert samples["kafka_streams_stream_thread_commit_latency_max"] == [(label, 4.0)]
    assert samples["kafka_streams_consumer_records_lag"] == [
        ({**label, "topic": "input", "partition": "0"}, 12.0)
    ]
    assert samples["kafka_streams_stream_task_dropped_records_total"] == [({**label, "task_id": "0_0"}, 2.0)]
    # Kafka Streams' record-lateness-avg and -max, not a sum of milliseconds
    assert samples["kafka_streams_stream_task_record_lateness_avg"] == [({**label, "task_id": "0_0"}, 40.0)]
    assert samples["kafka_streams_stream_task_record_lateness_max"] == [({**label, "task_id": "0_0"}, 90.0)]
    assert "kafka_streams_stream_task_record_lateness_total" not in samples
    assert samples["kafka_streams_stream_task_mispartitioned_records_total"] == [
        ({**label, "task_id": "0_1", "topic": "input"}, 1.0)
    ]
    assert samples["kafka_streams_state_store_entries"] == [
        ({**label, "task_id": "0_0", "store": "counts"}, 2.0)
    ]
    assert samples["kafka_streams_restore_remaining_records"] == [
        ({"task_id": "0_2", "store": "counts", "topic": "app-counts-changelog", "partition": "2"}, 100.0)
    ]
    assert samples["kafka_streams_standby_records_lag"] == [
        ({**label, "task_id": "0_3", "topic": "app-counts-changelog", "partition": "3"}, 7.0)
    ]
    assert samples["kafka_streams_client_state"] == [({"state": "RUNNING"}, 1.0)]


def test_should_report_the_process_rocksdb_memory_once_a_store_opened(tmp_path, monkeypatch):
    from streams_runtime.state.internals import rocksdb_store

    monkeypatch.setattr(rocksdb_store, "_SHARED", rocksdb_store._SharedMemory())  # noqa: SLF001
    client = FakeClient([FakeThread("app-StreamThread-1")])
    assert not [name for name in _samples(render(client)) if "rocksdb" in name]  # none opened yet
    store = rocksdb_store.RocksDBStore("counts")
    store.init(SimpleNamespace(state_dir=tmp_path, app_configs=None, register=lambda *a, **k: None))
    store.put(b"k", b"v" * 100_000)
    store.flush()
    try:
        samples = _samples(render(client))
    finally:
        store.close()
    per_store = rocksdb_store.WRITE_BUFFER_BYTES_PER_STORE
    capacity = rocksdb_store.DEFAULT_BLOCK_CACHE_BYTES + per_store
    assert samples["kafka_streams_rocksdb_block_cache_capacity_bytes"] == [({}, float(capacity))]
    assert samples["kafka_streams_rocksdb_memtable_budget_bytes"] == [
        ({}, float(rocksdb_store.DEFAULT_WRITE_BUFFER_BYTES + per_store))
    ]
    assert samples["kafka_streams_rocksdb_open_databases"] == [({}, 1.0)]
    [(_, usage)] = samples["kafka_streams_rocksdb_block_cache_usage_bytes"]
    assert 100_000 <= usage <= capacity  # the memtable holding the value is charged to the cache
    assert "kafka_streams_rocksdb_block_cache_pinned_usage_bytes" in samples
