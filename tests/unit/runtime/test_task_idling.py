"""When a task with several inputs, one of them empty, may process (TaskExecutor._processable).

Kafka Streams' rule (KIP-695): an empty input whose records are on the broker but not fetched yet
(lag unknown or positive) makes the task wait for the fetch; an empty input known to be at its
end makes it wait ``max_task_idle_ms`` for new records; then it processes what it has. Here the
first wait is bounded by ``FETCH_WAIT_MS`` (librdkafka's cached lag is the high watermark's, which
an open transaction upstream keeps positive); ``max_task_idle_ms = -1`` never waits.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals.task_executor import FETCH_WAIT_MS, TaskExecutor

STREAM, TABLE = ("orders", 0), ("users", 0)


class _Consumer:
    """Positions and cached watermarks per (topic, partition); -1001 = not known yet."""

    def __init__(self, position: int, high: int, low: int = 0) -> None:
        self.at = {TABLE: (position, low, high)}

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return [
            TopicPartition(tp.topic, tp.partition, self.at[(tp.topic, tp.partition)][0]) for tp in partitions
        ]

    def get_watermark_offsets(self, tp: TopicPartition, timeout: float = -1, cached: bool = False):
        assert cached, "the hot path must not ask the broker"
        _, low, high = self.at[(tp.topic, tp.partition)]
        return low, high


def _executor(consumer: _Consumer, max_task_idle_ms: int = 0) -> TaskExecutor:
    return TaskExecutor(
        registry=None,  # type: ignore[arg-type]
        consumer=consumer,  # type: ignore[arg-type]
        producers=None,  # type: ignore[arg-type]
        on_migrated=lambda ids: None,
        max_task_idle_ms=max_task_idle_ms,
        task_timeout_ms=300_000,
    )


def _task_with_an_empty_table() -> tuple[SimpleNamespace, list[SimpleNamespace]]:
    queues = [
        SimpleNamespace(topic=STREAM[0], partition=STREAM[1], head=object()),
        SimpleNamespace(topic=TABLE[0], partition=TABLE[1], head=None),
    ]
    return SimpleNamespace(idle_since=None, fetch_wait_since=None), queues


@pytest.mark.parametrize(
    ("position", "high", "low"),
    [(5, 10, 0), (-1001, -1001, -1001), (-1001, 10, 0)],
    ids=["records-on-the-broker", "no-fetch-answered-yet", "nothing-consumed-yet"],
)
def test_should_wait_for_records_of_an_empty_input_that_are_on_the_broker_then_process(position, high, low):
    task, queues = _task_with_an_empty_table()
    executor = _executor(_Consumer(position, high, low))
    assert not executor._processable(task, queues, now_ms=1_000)
    assert not executor._processable(task, queues, now_ms=1_000 + FETCH_WAIT_MS - 1)
    assert executor._processable(task, queues, now_ms=1_000 + FETCH_WAIT_MS)  # enforced: bounded
    assert task.idle_since == 1_000 + FETCH_WAIT_MS


def test_should_stop_waiting_once_the_records_arrive():
    task, queues = _task_with_an_empty_table()
    consumer = _Consumer(5, 10)
    executor = _executor(consumer)
    assert not executor._processable(task, queues, now_ms=1_000)
    queues[1].head = object()  # fetched
    assert executor._processable(task, queues, now_ms=1_010)
    assert task.fetch_wait_since is None and task.idle_since is None


@pytest.mark.parametrize(("position", "high"), [(10, 10), (-1001, 0)], ids=["at-its-end", "empty-topic"])
def test_should_not_wait_for_an_input_at_its_end_beyond_max_task_idle(position, high):
    task, queues = _task_with_an_empty_table()
    assert _executor(_Consumer(position, high))._processable(task, queues, now_ms=1_000)
    task, queues = _task_with_an_empty_table()
    executor = _executor(_Consumer(position, high), max_task_idle_ms=100)
    assert not executor._processable(task, queues, now_ms=1_000)
    assert not executor._processable(task, queues, now_ms=1_099)
    assert executor._processable(task, queues, now_ms=1_100)


def test_should_never_wait_with_max_task_idle_disabled():
    task, queues = _task_with_an_empty_table()
    assert _executor(_Consumer(5, 10), max_task_idle_ms=-1)._processable(task, queues, now_ms=1_000)


def test_should_not_wait_when_the_lag_cannot_be_read():
    class Failing(_Consumer):
        def get_watermark_offsets(self, tp, timeout=-1, cached=False):
            raise RuntimeError("no metadata")

    task, queues = _task_with_an_empty_table()
    assert _executor(Failing(5, 10))._processable(task, queues, now_ms=1_000)
