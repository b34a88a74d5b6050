"""Which of the stream thread's events end a broker outage (streams_runtime/kafka/outage.py): an
answer the broker gave after the call (input offsets committed, a transaction committed), never a
record the consumer hands out, which it may have prefetched before the cut."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from streams_runtime.kafka import outage
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals.shared_record_collectors import commit_offsets
from tests.unit.kafka.test_outage import Clock, Timers
from tests.unit.runtime.test_commit_interleavings import Message
from tests.unit.runtime.test_task_manager_commit_path import RecordingProducers, manager


@pytest.fixture
def tracker(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="test.outage.signals")
    clock = Clock()
    timers = Timers(clock)
    fresh = outage.BrokerOutage(clock, logging.getLogger("test.outage.signals"), schedule=timers)
    monkeypatch.setattr(outage, "_TRACKER", fresh)
    return fresh, clock, timers


def outage_lines(caplog) -> list[str]:
    return [r.levelname for r in caplog.records if r.name == "test.outage.signals"]


class CommittingConsumer:
    def __init__(self) -> None:
        self.committed: list[Any] = []

    def commit(self, offsets: list[Any], asynchronous: bool) -> None:
        self.committed.extend(offsets)


def test_records_handed_out_during_an_outage_do_not_end_it(tmp_path, tracker, caplog) -> None:
    state, clock, timers = tracker
    tm, _ = manager(tmp_path, RecordingProducers(eos=False))
    state.unreachable("Disconnected")
    tm.add_records([Message(o, b"prefetched before the cut") for o in range(3)])
    assert tm.process(0) == 3
    clock.now += outage.SETTLE_S * 4  # quiet: librdkafka logs a repeated connection error once
    timers.run_due()
    assert state.unreachable_since is not None and outage_lines(caplog) == ["WARNING"]
    tm.close_all(clean=True)


def test_committed_offsets_end_it_once_no_failure_follows(tracker, caplog) -> None:
    state, clock, timers = tracker
    for _ in range(65):  # a commit retried through the cut, then the broker answers it
        state.unreachable("committing input offsets: Disconnected")
        clock.now += 1
    consumer = CommittingConsumer()
    commit_offsets(consumer, [TopicPartition("input", 0, 3)], task_timeout_ms=1000)
    assert consumer.committed and state.unreachable_since is not None  # not settled yet
    clock.now += outage.SETTLE_S
    timers.run_due()
    assert state.unreachable_since is None and outage_lines(caplog) == ["WARNING", "INFO"]
