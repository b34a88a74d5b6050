"""A lightly loaded stream thread sends its outputs when it runs out of input instead of letting
them wait out the producer's linger; a busy one keeps batching (record_collector's docstring)."""

from __future__ import annotations

from streams_runtime.processor.internals.record_collector import SEND_NOW_S
from streams_runtime.processor.internals.stream_thread import SEND_NOW_BELOW
from streams_runtime.testing import InMemoryClientSupplier
from tests.conditions import wait_until
from tests.unit.runtime.stream_thread_harness import INPUT, PARTITIONS, STRING, start_thread, upper_topology

ALL_TASKS = {f"0_{p}" for p in range(PARTITIONS)}
#: no commit (which flushes too) while a test runs
NO_COMMIT = 600_000


def _thread_producer(h):
    (producer,) = [p for p in h.supplier.producers if p.transactional_id is None]
    return producer


def test_a_thread_that_ran_out_of_input_after_a_few_records_sends_them_at_once(tmp_path):
    h = start_thread(tmp_path, upper_topology(), commit_interval_ms=NO_COMMIT)
    try:
        h.wait_tasks(ALL_TASKS)
        producer = _thread_producer(h)
        assert producer.flushes == []  # nothing processed yet: no idle flush
        h.send(0, "a", "x")
        wait_until(lambda: producer.flushes, 10, "an idle flush after the record")
        assert producer.flushes[0] == SEND_NOW_S
        assert h.outputs(value_serde=STRING) == [("a", "X")]
        flushed = len(producer.flushes)
        h.send(1, "b", "y")
        wait_until(lambda: len(producer.flushes) > flushed, 10, "a second idle flush")
        seen = len(producer.flushes)
        wait_until(lambda: len(h.outputs(value_serde=STRING)) == 2, 10, "both outputs")
        assert len(producer.flushes) == seen  # idle without new records: no more flushes
    finally:
        h.stop()
    assert h.errors == []


def test_a_busy_thread_leaves_its_records_to_the_linger(tmp_path):
    supplier = InMemoryClientSupplier()
    supplier.cluster.create_topic(INPUT, PARTITIONS)
    backlog = SEND_NOW_BELOW + 100  # all there at the first poll: one batch above the threshold
    for i in range(backlog):
        supplier.cluster.append(
            INPUT, 0, STRING.serialize(INPUT, f"k{i}"), STRING.serialize(INPUT, "v"), 1_000
        )
    h = start_thread(tmp_path, upper_topology(), supplier, commit_interval_ms=NO_COMMIT)
    try:
        h.wait_tasks(ALL_TASKS)
        wait_until(lambda: len(h.outputs(value_serde=STRING)) == backlog, 10, "every output")
        assert _thread_producer(h).flushes == []
    finally:
        h.stop()
    assert h.errors == []


def test_an_exactly_once_thread_does_not_flush_when_idle(tmp_path):
    h = start_thread(
        tmp_path, upper_topology(), processing_guarantee="exactly_once_v2", commit_interval_ms=NO_COMMIT
    )
    try:
        h.wait_tasks(ALL_TASKS)
        h.send(0, "a", "x")
        wait_until(lambda: h.outputs(value_serde=STRING) == [("a", "X")], 10, "the output")
        assert all(p.flushes == [] for p in h.supplier.producers)
    finally:
        h.stop()
