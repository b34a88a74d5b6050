"""A real StreamThread on the in-memory clients, its repartition reader hit by the embedded
broker's fetch race (a fetch answers records above offsets not readable yet, the consumer's
position moves past them: ``Faults.skip_once``): with the gap guard (at-least-once) the count
downstream of the repartition still takes every record, in offset order, as a Kafka consumer
would have delivered them; without it the passed-over records are never processed."""

from __future__ import annotations

from collections import Counter
from typing import Any

from streams_runtime.brokers.tansu.gap_guard import METRICS_GROUP, SEEKS_SENSOR
from streams_runtime.kstream import Consumed, Grouped, Produced, StreamsBuilder
from streams_runtime.processor.internals import stream_thread
from streams_runtime.processor.internals.stream_thread import RUNNING
from streams_runtime.serdes import Serdes
from streams_runtime.testing import InMemoryClientSupplier, InMemoryCluster
from tests.conditions import wait_until
from tests.unit.runtime.stream_thread_harness import APP, INPUT, OUTPUT, PARTITIONS, STRING, start_thread

LONG = Serdes.Long()
REPARTITION = f"{APP}-by-word-repartition"
#: one to four words on each repartition partition (the in-memory producer places a key by murmur2)
WORDS = ["nut", "pear", "cherry", "date", "kiwi", "apple", "banana", "fig"]
RECORDS = 96
#: per repartition partition, the offsets the first fetch reaching above them passes over (0 and 1
#: on partition 0: before any commit, so the expected start is the log start)
SKIPS = {0: [0, 1], 1: [2, 3, 4], 2: [5]}
ALL_TASKS = {f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)}


def count_by_word() -> Any:
    """input (key, word) -> group_by(word) [repartition "by-word"] -> count -> output (word, count)."""
    builder = StreamsBuilder()
    (
        builder.stream(INPUT, Consumed.with_(STRING, STRING))
        .group_by(lambda key, word: word, Grouped.with_(STRING, STRING, name="by-word"))
        .count()
        .to_stream()
        .to(OUTPUT, Produced.with_(STRING, LONG))
    )
    return builder.build({"application_id": APP})


def run_with_skips(tmp_path: Any) -> tuple[Any, Counter[str]]:
    """Start a thread on the count against a cluster that says it is Tansu (the broker whose
    fetches can pass over offsets), make the repartition fetches pass over SKIPS, stream RECORDS
    words in and wait until the repartition topic holds them all and the thread went quiet."""
    supplier = InMemoryClientSupplier(InMemoryCluster(cluster_id="tansu_cluster"))
    h = start_thread(tmp_path, count_by_word(), supplier, commit_interval_ms=50)
    h.wait_tasks(ALL_TASKS)
    assert supplier.cluster.partition_count(REPARTITION) == PARTITIONS
    for partition, offsets in SKIPS.items():
        supplier.cluster.faults.skip_once(REPARTITION, partition, offsets)
    sent: Counter[str] = Counter()
    for i in range(RECORDS):
        word = WORDS[(i * 5) % len(WORDS)]
        h.send(i % PARTITIONS, f"k{i}", word)
        sent[word] += 1
    wait_until(
        lambda: len(supplier.cluster.records(REPARTITION)) == RECORDS,
        10,
        lambda: f"{RECORDS} repartition records, have {len(supplier.cluster.records(REPARTITION))}",
    )
    # every injected race happened: each partition's fetch passed over its offsets once
    wait_until(
        lambda: dict(supplier.cluster.faults.skipped) == {(REPARTITION, p): o for p, o in SKIPS.items()},
        10,
        lambda: f"the fetches to pass over {SKIPS}, have {dict(supplier.cluster.faults.skipped)}",
    )
    return h, sent


def counts_by_word(h: Any) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in h.cluster.records(OUTPUT):
        out.setdefault(STRING.deserialize(OUTPUT, r.key), []).append(LONG.deserialize(OUTPUT, r.value))
    return out


def test_should_process_every_repartition_record_a_fetch_passed_over(tmp_path):
    h, sent = run_with_skips(tmp_path)
    try:
        # every word's count went 1, 2, ..., n: no input lost, none twice, in order
        expected = {word: list(range(1, n + 1)) for word, n in sent.items()}
        wait_until(lambda: counts_by_word(h) == expected, 10, lambda: f"counts {counts_by_word(h)}")
        # the repartition input was committed to its end, partition by partition
        ends = {(REPARTITION, p): len(h.cluster.records(REPARTITION, p)) for p in range(PARTITIONS)}
        wait_until(
            lambda: {tp: o for tp, o in h.cluster.committed(APP).items() if tp[0] == REPARTITION} == ends,
            10,
            lambda: f"committed {ends}, have {h.cluster.committed(APP)}",
        )
        guard = h.thread._gap_guard
        assert guard is not None and guard.seeks == len(SKIPS) and guard.accepted == 0
        for partition in SKIPS:
            tags = {"topic": REPARTITION, "partition": partition}
            assert h.thread.streams_metrics.value(SEEKS_SENSOR, METRICS_GROUP, tags) == 1
        assert h.thread.state == RUNNING
    finally:
        h.stop()
    assert h.errors == []


def test_should_not_guard_on_a_broker_that_is_not_tansu(tmp_path):
    """Apache Kafka never passes over a readable offset: no guard, no seek, no metric."""
    supplier = InMemoryClientSupplier(InMemoryCluster(cluster_id="MkU3OEVBNTcwNTJENDM2Qk"))
    h = start_thread(tmp_path, count_by_word(), supplier, commit_interval_ms=50)
    try:
        h.wait_tasks(ALL_TASKS)
        assert h.thread._gap_guard is None
        for i in range(20):
            h.send(i % PARTITIONS, f"k{i}", WORDS[i % len(WORDS)])
        wait_until(lambda: len(h.cluster.records(OUTPUT)) == 20, 10, "the counts")
    finally:
        h.stop()
    assert h.errors == []


def test_without_the_guard_the_records_a_fetch_passed_over_are_never_counted(tmp_path, monkeypatch):
    """The control: the injected race does lose input when nothing guards the reader."""
    monkeypatch.setattr(stream_thread.RepartitionGapGuard, "for_runtime", classmethod(lambda *a, **k: None))
    h, sent = run_with_skips(tmp_path)
    try:
        missed = sum(len(o) for o in SKIPS.values())
        wait_until(
            lambda: sum(len(c) for c in counts_by_word(h).values()) == RECORDS - missed,
            10,
            lambda: f"{RECORDS - missed} count updates, have {counts_by_word(h)}",
        )
        assert h.thread._gap_guard is None
        finals = {word: counts[-1] for word, counts in counts_by_word(h).items()}
        assert sum(finals.values()) == RECORDS - missed
        assert any(finals.get(word, 0) < n for word, n in sent.items())
    finally:
        h.stop()
