"""The demo's live results view when the live read skips a batch that is in the log, broker-free.

On the embedded broker a live consumer of a partition written by two producers at once can move
past a batch stored late (docs/decisions/0001-embedded-broker.md); a fresh read to the true end
finds it. The fake log below hands the live consumer the records above such a batch first.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from streams_runtime.demo import run as demo_run
from streams_runtime.demo.results import Ledger, ResultsView
from streams_runtime.kafka.clients import PARTITION_EOF
from tests.fakes import FakeError, FakeMessage

TOPIC = "results"


class Log:
    """One partition of results; offsets in ``late`` are not visible to a live fetch until
    ``store_late()``, and a live fetch above them moves the position past them."""

    def __init__(self, records: list[tuple[str, dict[str, int]]], late: set[int]) -> None:
        self.records = [(k.encode(), json.dumps(v).encode()) for k, v in records]
        self.late, self.consumers = set(late), []

    def store_late(self) -> None:
        self.late.clear()

    def factory(self, bootstrap: str, group: str, overrides: Any = None, **_: Any) -> LogConsumer:
        consumer = LogConsumer(self, eof=bool(overrides and overrides.get("enable.partition.eof")))
        self.consumers.append(consumer)
        return consumer


class LogConsumer:
    def __init__(self, log: Log, eof: bool) -> None:
        self.log, self.eof, self.position, self.closed = log, eof, None, False

    def assign(self, tps: list[Any]) -> None:
        self.position = tps[0].offset

    def unassign(self) -> None:
        self.position = None

    def consume(self, num_messages: int = 1, timeout: float = 0.0) -> list[FakeMessage]:
        if self.position is None:
            return []
        out = []
        end = len(self.log.records)
        while self.position < end:
            if self.position in self.log.late:
                self.position += 1  # the fetch answered the batch above: this offset is passed over
                continue
            key, value = self.log.records[self.position]
            out.append(FakeMessage(self.position, key, value, topic=TOPIC))
            self.position += 1
        if self.eof and self.position == end:
            out.append(FakeMessage(end, topic=TOPIC, error=FakeError(PARTITION_EOF)))
            self.position += 1
        return out

    def close(self) -> None:
        self.closed = True


def _ledger(counts: dict[str, int]) -> Ledger:
    ledger = Ledger()
    for user, n in counts.items():
        for _ in range(n):
            ledger.add({"user": user, "amount": 1.0})
    return ledger


RECORDS = [
    ("u0", {"count": 1, "total_cents": 100}),
    ("u1", {"count": 1, "total_cents": 100}),
    ("u0", {"count": 2, "total_cents": 200}),  # offset 2: the late batch, u0's last update
    ("u1", {"count": 2, "total_cents": 200}),
]


def test_a_skipped_batch_leaves_the_live_view_stale_and_a_resync_finds_it_in_the_log() -> None:
    log = Log(RECORDS, late={2})
    view = ResultsView("bootstrap", TOPIC, 1, consumer_factory=log.factory)
    assert view.poll() == 3
    log.store_late()
    assert view.poll() == 0  # the live consumer never goes back to offset 2
    assert view.latest["u0"]["count"] == 1
    assert view.compare(_ledger({"u0": 2, "u1": 2}))[0] is False

    view.resync()
    assert view.latest == {"u0": RECORDS[2][1], "u1": RECORDS[3][1]}
    assert view.compare(_ledger({"u0": 2, "u1": 2})) == (True, [])
    assert log.consumers[1].closed
    # the live read goes on from the true end: a new result is read once, nothing twice
    log.records.append((b"u1", json.dumps({"count": 3, "total_cents": 300}).encode()))
    assert view.poll() == 1
    assert view.latest["u1"]["count"] == 3


class Launcher:
    def reap(self) -> None:
        pass

    def alive(self) -> bool:
        return True


def test_the_demo_watch_resyncs_when_results_stop_changing_short_of_the_ledger(monkeypatch) -> None:
    log = Log(RECORDS, late={2})
    view = ResultsView("bootstrap", TOPIC, 1, consumer_factory=log.factory)
    view.poll()
    log.store_late()
    monkeypatch.setattr(demo_run, "RESYNC_AFTER_QUIET_S", 0.0)
    assert demo_run._watch_loop(view, _ledger({"u0": 2, "u1": 2}), Launcher(), threading.Event(), 5.0, None)
    assert view.resyncs == 1


def test_without_a_resync_the_demo_watch_times_out_stale(monkeypatch) -> None:
    log = Log(RECORDS, late={2})
    view = ResultsView("bootstrap", TOPIC, 1, consumer_factory=log.factory)
    view.poll()
    log.store_late()
    monkeypatch.setattr(demo_run, "RESYNC_AFTER_QUIET_S", 1e9)
    assert not demo_run._watch_loop(
        view, _ledger({"u0": 2, "u1": 2}), Launcher(), threading.Event(), 0.5, None
    )
    assert view.resyncs == 0
