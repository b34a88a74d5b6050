"""The source partitioning check: a keyed record not on the partition Kafka's default partitioner
(murmur2) gives its key is counted on its task's ``mispartitioned-records`` and warned about once
per partition; ``fail`` stops with an error naming it; placed records, null keys, one-partition
topics and topics written by a sink's own partitioner are left alone; after the first records of
a partition only a sample is hashed."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from streams_runtime import Produced, Repartitioned, Serdes, StreamsBuilder
from streams_runtime.errors import SourcePartitioningError
from streams_runtime.kafka.partitioner import partition_for
from streams_runtime.kstream import Consumed
from streams_runtime.processor.internals.metrics import TASK_GROUP, StreamsMetrics
from streams_runtime.processor.internals.partitioning_check import (
    SENSOR,
    SourcePartitioningCheck,
    topics_with_own_partitioner,
)
from tests.conditions import wait_until
from tests.fakes import FakeMessage
from tests.unit.runtime.stream_thread_harness import INPUT, STRING, start_thread, upper_topology
from tests.unit.runtime.stream_thread_harness import PARTITIONS as HARNESS_PARTITIONS

ORDERS, SINGLE = "orders", "single"
PARTITIONS = 4
COUNTS = {ORDERS: PARTITIONS, SINGLE: 1}


class _Info:
    def __init__(self, *topics: str) -> None:
        self.source_topics = list(topics)


SUBTOPOLOGIES = {0: _Info(ORDERS), 1: _Info(SINGLE)}


def key_on(partition: int, partitions: int = PARTITIONS, start: int = 0) -> bytes:
    """A key Kafka's default partitioner puts on ``partition``."""
    i = start
    while partition_for(f"key-{i}".encode(), partitions) != partition:
        i += 1
    return f"key-{i}".encode()


def key_off(partition: int, start: int = 0) -> bytes:
    """A key Kafka's default partitioner puts anywhere but on ``partition``."""
    return key_on((partition + 1) % PARTITIONS, start=start)


def records(partition: int, keys: list[bytes | None], topic: str = ORDERS, first: int = 0) -> list[Any]:
    return [FakeMessage(first + i, key, b"v", topic=topic, partition=partition) for i, key in enumerate(keys)]


def make(metrics: StreamsMetrics, **options: Any) -> SourcePartitioningCheck:
    return SourcePartitioningCheck(lambda: COUNTS, lambda: SUBTOPOLOGIES, metrics, **options)


def misplaced(metrics: StreamsMetrics, task: str, topic: str = ORDERS) -> float:
    return metrics.value(SENSOR, TASK_GROUP, {"task-id": task, "topic": topic})


def test_should_count_misplaced_records_and_warn_once_per_partition(caplog: pytest.LogCaptureFixture) -> None:
    metrics = StreamsMetrics()
    check = make(metrics)
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    check.check(records(1, [key_off(1), key_on(1), key_off(1, start=50)]) + records(2, [key_off(2)]))
    check.check(records(1, [key_off(1, start=99)], first=3))
    assert misplaced(metrics, "0_1") == 3
    assert misplaced(metrics, "0_2") == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2  # one per partition, not one per record
    first = warnings[0]
    assert f"the record at offset 0 of {ORDERS}-1 has key {key_off(1)!r}" in first
    assert f"puts on partition {partition_for(key_off(1), PARTITIONS)} of {PARTITIONS}" in first
    assert "partitioner=murmur2_random" in first and "source_partitioning_check='off'" in first


def test_should_say_nothing_of_records_where_kafka_puts_them(caplog: pytest.LogCaptureFixture) -> None:
    metrics = StreamsMetrics()
    check = make(metrics)
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    for partition in range(PARTITIONS):
        check.check(records(partition, [key_on(partition, start=s) for s in (0, 40, 80)] + [None]))
    assert all(misplaced(metrics, f"0_{p}") == 0 for p in range(PARTITIONS))
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_should_fail_naming_topic_partition_key_and_where_it_belongs() -> None:
    metrics = StreamsMetrics()
    check = make(metrics, fail=True)
    key = key_off(3)
    with pytest.raises(SourcePartitioningError) as raised:
        check.check(records(3, [key_on(3), key], first=10))
    message = str(raised.value)
    expected = partition_for(key, PARTITIONS)
    assert f"the record at offset 11 of {ORDERS}-3 has key {key!r}" in message
    assert f"puts on partition {expected} of {PARTITIONS}" in message
    assert "source_partitioning_check='fail'" in message and "partitioner=murmur2_random" in message
    assert misplaced(metrics, "0_3") == 1


def test_should_leave_null_keys_and_single_partition_topics_alone() -> None:
    metrics = StreamsMetrics()
    check = make(metrics, fail=True)
    check.check(records(2, [None, None]) + records(0, [b"anything", b"else"], topic=SINGLE))
    check.check(records(0, [b"x"], topic="not-read-here"))


def test_should_hash_every_record_first_then_one_in_sample_every() -> None:
    metrics = StreamsMetrics()
    check = make(metrics, full_checks=3, sample_every=4)
    bad = [key_off(0, start=i * 10) for i in range(20)]
    # in batches of 5: records 0-2 checked one by one, then records 3, 7, 11, 15, 19
    for first in range(0, 20, 5):
        check.check(records(0, bad[first : first + 5], first=first))
    assert misplaced(metrics, "0_0") == 3 + 5


def test_topics_a_sink_writes_with_its_own_partitioner_are_not_checked() -> None:
    strings = Serdes.String()
    builder = StreamsBuilder()
    stream = builder.stream(ORDERS, Consumed.with_(strings, strings))
    stream.to("by-region", Produced.with_(strings, strings, partitioner=lambda topic, key, value: 0))
    stream.to("plain", Produced.with_(strings, strings))
    stream.repartition(
        Repartitioned.as_("fixed")
        .with_stream_partitioner(lambda topic, key, value: 1)
        .with_number_of_partitions(2)
    )
    stream.repartition(Repartitioned.as_("hashed").with_number_of_partitions(2))
    topology = builder.build({"application_id": "app"})
    assert topics_with_own_partitioner(topology.internal_builder) == {"by-region", "app-fixed-repartition"}


# ---------------------------------------------------------------------------- on a stream thread
def misplaced_key(partition: int, start: int = 0) -> str:
    """A string key Kafka's default partitioner puts anywhere but on ``partition`` of INPUT."""
    i = start
    while partition_for(f"k{i}".encode(), HARNESS_PARTITIONS) == partition:
        i += 1
    return f"k{i}"


def test_a_stream_thread_counts_and_processes_misplaced_records_by_default(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    h = start_thread(tmp_path, upper_topology(), commit_interval_ms=50)
    try:
        h.wait_tasks({"0_0", "0_1", "0_2"})
        h.send(1, misplaced_key(1), "a")
        h.send(1, misplaced_key(1, start=100), "b")
        placed = next(f"p{i}" for i in range(100) if partition_for(f"p{i}".encode(), HARNESS_PARTITIONS) == 2)
        h.send(2, placed, "c")
        wait_until(lambda: len(h.outputs(value_serde=STRING)) == 3, 10, lambda: "the 3 outputs")
        metrics = h.thread.streams_metrics
        assert metrics.value(SENSOR, TASK_GROUP, {"task-id": "0_1", "topic": INPUT}) == 2
        assert metrics.value(SENSOR, TASK_GROUP, {"task-id": "0_2", "topic": INPUT}) == 0
    finally:
        h.stop()
    assert h.errors == []
    warned = [r for r in caplog.records if SENSOR in r.getMessage()]
    assert len(warned) == 1 and f"of {INPUT}-1 has key" in warned[0].getMessage()


def test_a_stream_thread_stops_before_processing_a_misplaced_record_under_fail(tmp_path: Any) -> None:
    h = start_thread(tmp_path, upper_topology(), commit_interval_ms=50, source_partitioning_check="fail")
    h.wait_tasks({"0_0", "0_1", "0_2"})
    h.send(0, misplaced_key(0), "a")
    wait_until(lambda: h.died, 10, lambda: "the thread to stop")
    h.thread.join(10)
    h.setup.close()
    assert [type(e) for e in h.errors] == [SourcePartitioningError]
    assert f"of {INPUT}-0 has key" in str(h.errors[0])
    assert h.outputs(value_serde=STRING) == []
    assert h.committed() == {}
