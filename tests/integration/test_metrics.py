"""``/metrics`` scraped during a run shows a non-zero process rate, records lag
falling to zero, and restore progress during a restore; ``/health/ready`` follows the tasks.

One scenario per module. Phase 1: a count over 4 partitions whose processing is slowed (a peek
sleeping every 50 records: ~5 s) so several scrapes land while it works through a backlog. Phase 2:
the client is replaced by one with an empty state directory, whose restore is slowed by a restore
listener sleeping after each batch (RestoreProgress records the batch before the user's listener
runs), so scrapes land mid-restore.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from streams_runtime import Consumed, KafkaStreams, Materialized, Serdes, StateRestoreListener, StreamsBuilder
from tests.integration.streams_support import make_topics, produce, streams_config, wait_running, wait_until
from tests.ports import free_port

PARTITIONS = 4
RECORDS = 6000
KEYS = 3000


def _scrape(port: int) -> dict[str, list[tuple[dict, float]]]:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    out: dict[str, list[tuple[dict, float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def _total(scrape: dict, name: str) -> float:
    return sum(v for _, v in scrape.get(name, []))


class _SlowRestore(StateRestoreListener):
    def __init__(self) -> None:
        self.batches = 0

    def on_batch_restored(self, tp, store_name, batch_end_offset, num_restored) -> None:
        self.batches += 1
        time.sleep(0.6)


@dataclass
class Scenario:
    run: list[dict] = field(default_factory=list)  # scrapes while processing
    restore: list[dict] = field(default_factory=list)  # scrapes while restoring
    ready_during_restore: list[int] = field(default_factory=list)
    ready_after: int = 0


def _poll(port: int, into: list, stop: threading.Event, ready: list | None = None) -> None:
    while not stop.is_set():
        try:
            into.append(_scrape(port))
            if ready is not None:
                ready.append(httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=10).status_code)
        except httpx.HTTPError:
            pass  # the server is not up yet or already stopped
        time.sleep(0.1)


@pytest.fixture(scope="module")
def scenario(kafka_broker, tmp_path_factory) -> Scenario:
    bootstrap = kafka_broker
    suffix = tmp_path_factory.mktemp("metrics").name
    source, app = f"metrics-in-{suffix}", f"metrics-app-{suffix}"
    make_topics(bootstrap, **{source: PARTITIONS})
    produce(bootstrap, source, ((f"k{i % KEYS}".encode(), b"v") for i in range(RECORDS)))
    seen = [0]

    def slow(key, value) -> None:
        seen[0] += 1
        if seen[0] % 50 == 0:
            time.sleep(0.04)

    def topology():
        builder = StreamsBuilder()
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).peek(
            slow
        ).group_by_key().count(Materialized.as_("counts"))
        return builder.build()

    result = Scenario()
    port = free_port()
    config = dict(application_server=f"127.0.0.1:{port}", statestore_cache_max_bytes=0)
    first = KafkaStreams(topology(), streams_config(bootstrap, app, tmp_path_factory.mktemp("m1"), **config))
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(port, result.run, stop), daemon=True)
    try:
        first.start()
        poller.start()
        wait_running(first, timeout=60)
        wait_until(
            lambda: bool(result.run)
            and _total(result.run[-1], "kafka_streams_stream_thread_process_total") >= RECORDS,
            60,
            "every record processed",
        )

        def lag_settled() -> bool:  # the records lag is refreshed once a second
            last = result.run[-1]
            lag = last.get("kafka_streams_consumer_records_lag", [])
            commits = _total(last, "kafka_streams_stream_thread_commit_total")
            return len(lag) == PARTITIONS and all(v == 0 for _, v in lag) and commits > 0

        wait_until(lag_settled, 30, lambda: f"every partition's records lag at 0: {result.run[-1]}")
        stop.set()
        poller.join(10)
    finally:
        stop.set()
        first.close(timeout=30)

    # Phase 2: a fresh state directory restores the whole changelog, slowly
    second = KafkaStreams(topology(), streams_config(bootstrap, app, tmp_path_factory.mktemp("m2"), **config))
    listener = _SlowRestore()
    second.set_global_state_restore_listener(listener)
    stop = threading.Event()
    poller = threading.Thread(
        target=_poll, args=(port, result.restore, stop, result.ready_during_restore), daemon=True
    )
    try:
        second.start()
        poller.start()
        wait_running(second, timeout=60)
        stop.set()
        poller.join(10)
        result.ready_after = httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=10).status_code
        result.restore.append(_scrape(port))
    finally:
        stop.set()
        second.close(timeout=30)
    assert listener.batches >= 2, "the restore was too small to observe"
    return result


def test_should_show_a_nonzero_process_rate_during_the_run(scenario):
    rates = [_total(s, "kafka_streams_stream_thread_process_rate") for s in scenario.run]
    assert max(rates) > 0
    labels = scenario.run[-1]["kafka_streams_stream_thread_process_rate"][0][0]
    assert labels["thread_id"].endswith("StreamThread-1")


def test_should_show_records_lag_per_partition_falling_to_zero(scenario):
    lags = [s.get("kafka_streams_consumer_records_lag", []) for s in scenario.run]
    positive = [sum(v for _, v in lag) for lag in lags if lag and sum(v for _, v in lag) > 0]
    assert positive, "no scrape saw the backlog"
    last = lags[-1]
    assert sorted(int(labels["partition"]) for labels, _ in last) == list(range(PARTITIONS))
    assert all(v == 0 for _, v in last)


def test_should_time_polls_processing_and_commits(scenario):
    last = scenario.run[-1]
    assert _total(last, "kafka_streams_stream_thread_commit_total") > 0
    assert _total(last, "kafka_streams_stream_thread_commit_latency_max") > 0
    assert _total(last, "kafka_streams_stream_thread_poll_total") > 0
    assert _total(last, "kafka_streams_stream_thread_process_latency_avg") > 0
    assert _total(last, "kafka_streams_state_store_entries") >= KEYS  # RocksDB's estimate counts updates too
    assert "kafka_streams_stream_task_dropped_records_total" in last


def test_should_show_restore_progress_during_a_restore(scenario):
    mid = [
        s
        for s in scenario.restore
        if _total(s, "kafka_streams_restore_remaining_records") > 0
        and _total(s, "kafka_streams_restore_records_restored_total") > 0
    ]
    assert mid, "no scrape landed mid-restore"
    remaining = [
        _total(s, "kafka_streams_restore_remaining_records")
        for s in scenario.restore
        if "kafka_streams_restore_remaining_records" in s
    ]
    assert remaining[-1] == 0
    restored = _total(scenario.restore[-1], "kafka_streams_restore_records_restored_total")
    assert restored >= RECORDS  # no cache: every update of the count went to the changelog
    labels = scenario.restore[-1]["kafka_streams_restore_remaining_records"][0][0]
    assert labels["store"] == "counts" and labels["task_id"] in {f"0_{p}" for p in range(PARTITIONS)}


def test_should_be_ready_only_when_every_active_task_runs(scenario):
    assert 503 in scenario.ready_during_restore
    assert scenario.ready_after == 200
