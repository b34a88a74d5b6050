"""A restored task whose committed offsets the broker does not answer stays RESTORING and is asked
again, for up to ``task_timeout_ms``; only then does the error reach the stream thread.

Found by ``tests/integration/test_multi_host.py`` on a machine so loaded (load average 50 on 2
cores) that its one Apache Kafka node stalled for more than 30 s: the OffsetFetch of a task that
had just restored timed out after the one 30 s attempt the task manager made ("Failed to get
committed offsets: Local: Timed out"), the stream thread died, and the instance answered every
key ``store_migrating`` from then on, although the broker came back. Kafka Streams retries a
task's initialization within ``task.timeout.ms`` (5 minutes by default); so does the runtime now.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from streams_runtime.kafka.clients import KafkaError
from streams_runtime.processor.internals import task_manager
from streams_runtime.testing.in_memory_clients import InMemoryConsumer
from streams_runtime.testing.in_memory_cluster import kafka_error
from tests.conditions import wait_until
from tests.unit.runtime.stream_thread_harness import (
    INPUT,
    OUTPUT,
    counting_topology,
    start_thread,
    upper_topology,
)


@pytest.fixture
def broker_silent_until(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """``committed`` of the stream threads' consumers times out until the monotonic time in the
    list (infinity: forever); one attempt lasts 0.2 s instead of 5 s."""
    until = [float("inf")]
    answer = InMemoryConsumer.committed

    def committed(self: InMemoryConsumer, partitions: list[Any], timeout: float = -1) -> list[Any]:
        if time.monotonic() < until[0]:
            raise kafka_error(KafkaError._TIMED_OUT, "Failed to get committed offsets: Local: Timed out")  # noqa: SLF001
        return answer(self, partitions, timeout)

    monkeypatch.setattr(InMemoryConsumer, "committed", committed)
    monkeypatch.setattr(task_manager, "COMMITTED_ATTEMPT_S", 0.2)
    return until


def test_a_task_waits_for_its_offsets_through_an_outage_longer_than_one_attempt(
    tmp_path, broker_silent_until
) -> None:
    broker_silent_until[0] = time.monotonic() + 2.0  # ten attempts' worth
    harness = start_thread(tmp_path, counting_topology(), task_timeout_ms=30_000)
    try:
        harness.send(0, "a", "x")
        harness.send(1, "b", "x")
        harness.wait_tasks({"0_0", "0_1", "0_2"}, timeout=20)
        assert time.monotonic() >= broker_silent_until[0], "the tasks ran before the broker answered"
        harness.send(0, "a", "x")
        wait_until(lambda: sorted(harness.outputs()) == [("a", 1), ("a", 2), ("b", 1)], 10, "the counts")
        assert harness.errors == [] and harness.died == []
    finally:
        harness.stop()


def test_the_error_reaches_the_thread_once_task_timeout_ms_passed(tmp_path, broker_silent_until) -> None:
    began = time.monotonic()
    harness = start_thread(tmp_path, counting_topology(), task_timeout_ms=1_500)
    try:
        wait_until(lambda: harness.died, 20, "the stream thread to give up")
        assert time.monotonic() - began >= 1.5
        [error] = harness.errors
        assert "task_timeout_ms (1500 ms)" in str(error) and "committed offsets" in str(error)
        assert harness.cluster.records(OUTPUT) == []
    finally:
        harness.stop()


@pytest.mark.parametrize(
    ("topology", "kind"), [(upper_topology, "stateless"), (counting_topology, "restored")]
)
def test_the_tasks_of_an_assignment_ask_for_their_offsets_in_one_request(
    tmp_path, monkeypatch: pytest.MonkeyPatch, topology: Any, kind: str
) -> None:
    requests: list[list[tuple[str, int]]] = []
    answer = InMemoryConsumer.committed

    def committed(self: InMemoryConsumer, partitions: list[Any], timeout: float = -1) -> list[Any]:
        requests.append(sorted((tp.topic, tp.partition) for tp in partitions))
        return answer(self, partitions, timeout)

    monkeypatch.setattr(InMemoryConsumer, "committed", committed)
    harness = start_thread(tmp_path, topology())
    try:
        harness.wait_tasks({"0_0", "0_1", "0_2"}, timeout=20)
        task_requests = [r for r in requests if r and all(topic == INPUT for topic, _ in r)]
        # three tasks: one request for the three partitions (restored tasks may finish restoring
        # in different steps, each step asks once for the ones it finished)
        assert sorted(p for r in task_requests for _, p in r) == [0, 1, 2], task_requests
        if kind == "stateless":
            assert len(task_requests) == 1, task_requests
    finally:
        harness.stop()
