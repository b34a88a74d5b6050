"""The outage log (streams_runtime/kafka/outage.py) on a fake clock and a fake timer: one WARNING
when Kafka becomes unreachable, one INFO with the duration when it is back, the clients'
per-retry lines folded in."""

from __future__ import annotations

import logging

import pytest

from streams_runtime.kafka.outage import SETTLE_S, BrokerOutage, ConnectionErrorFilter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Timers:
    """A fake ``schedule``: the test runs what is due."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.pending, self.delays = clock, [], []

    def __call__(self, delay_s: float, fn) -> None:
        self.delays.append(delay_s)
        self.pending.append((self.clock.now + delay_s, fn))

    def run_due(self) -> None:
        due = [fn for at, fn in self.pending if at <= self.clock.now]
        self.pending = [(at, fn) for at, fn in self.pending if at > self.clock.now]
        for fn in due:
            fn()


@pytest.fixture
def outage(caplog):
    caplog.set_level(logging.DEBUG, logger="test.outage")
    clock = Clock()
    timers = Timers(clock)
    return BrokerOutage(clock, logging.getLogger("test.outage"), schedule=timers), clock, timers


def lines(caplog) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "test.outage"]


def test_an_outage_is_one_warning_and_one_info_with_its_duration(outage, caplog) -> None:
    tracker, clock, timers = outage
    tracker.reachable()  # no outage: nothing to say
    for _ in range(60):  # a minute of retries, one a second
        tracker.unreachable("Connection refused")
        clock.now += 1
    assert tracker.unreachable_since == 1000.0
    clock.now += SETTLE_S
    tracker.reachable()
    tracker.reachable()
    assert tracker.unreachable_since is None
    [(level, warning), (info_level, info)] = lines(caplog)
    assert level == "WARNING" and "Kafka unreachable (Connection refused)" in warning
    assert info_level == "INFO"
    assert info == "Kafka reachable again after 65s (60 connection failures retried meanwhile)"
    assert timers.delays == []  # settled already at the first success


def test_a_success_ends_the_outage_only_when_no_failure_follows_it_for_the_settle_time(
    outage, caplog
) -> None:
    """Records fetched before the cut, or a reconnect that drops again, come between failures; the
    end is checked again by a timer, as no success may follow the last one."""
    tracker, clock, timers = outage
    assert SETTLE_S == 5.0
    tracker.unreachable("socket disconnected")  # t=0
    clock.now += 1
    tracker.reachable()  # t=1: a check is due at t=5
    clock.now += 1
    tracker.reachable()  # t=2: already due
    clock.now += 1
    tracker.unreachable("socket disconnected")  # t=3: failing again
    clock.now += 2
    timers.run_due()  # t=5: nothing settled
    assert [level for level, _ in lines(caplog)] == ["WARNING"]
    clock.now += 1
    tracker.reachable()  # t=6: a check is due at t=8
    clock.now += 1
    timers.run_due()  # t=7: not yet
    clock.now += 1
    timers.run_due()  # t=8: settled
    assert timers.delays == [4.0, 2.0] and timers.pending == []
    assert [level for level, _ in lines(caplog)] == ["WARNING", "INFO"]
    assert "after 6s (2 connection failures" in lines(caplog)[1][1]  # first failure to first success
    clock.now += SETTLE_S
    tracker.unreachable("again")  # a new outage is a new WARNING
    assert [level for level, _ in lines(caplog)] == ["WARNING", "INFO", "WARNING"]


def test_a_failure_reported_right_after_the_end_is_a_straggler_of_the_outage(outage, caplog) -> None:
    """librdkafka hands a rarely polled client its "all brokers are down" event late: seconds
    after the INFO, it does not begin an outage of its own."""
    tracker, clock, timers = outage
    tracker.unreachable("socket disconnected")
    clock.now += 65
    tracker.reachable()  # over at once: nothing failed for 65 s
    clock.now += 2
    tracker.unreachable("1/1 brokers are down")  # queued during the cut, delivered now
    assert tracker.unreachable_since is None
    assert [level for level, _ in lines(caplog)] == ["WARNING", "INFO", "DEBUG"]
    assert "straggler" in lines(caplog)[2][1]
    clock.now += SETTLE_S
    tracker.unreachable("socket disconnected")  # later: a new outage
    assert [level for level, _ in lines(caplog)][-1] == "WARNING" and tracker.unreachable_since is not None


def test_the_client_libraries_connection_errors_become_signals_and_nothing_else_does(outage) -> None:
    tracker, clock, _ = outage
    quiet = ConnectionErrorFilter(lambda: tracker)
    logger = logging.getLogger("test.clients")
    logger.setLevel(logging.WARNING)

    def record(level: int, msg: str, *args, exc: BaseException | None = None) -> logging.LogRecord:
        info = (type(exc), exc, None) if exc else None
        return logger.makeRecord(logger.name, level, __file__, 1, msg, args, info)

    kafka_python = [
        record(
            logging.ERROR,
            "<KafkaConnection node_id=1>: Connection lost: KafkaConnectionError: socket disconnected",
        ),
        record(logging.ERROR, "Error sending FindCoordinatorRequest to node 1 [KafkaConnectionError: x]"),
        record(
            logging.ERROR, "Error receiving network data closing socket", exc=ConnectionResetError(104, "x")
        ),
        record(logging.ERROR, "Metadata refresh: failed KafkaConnectionError: socket disconnected"),
    ]
    librdkafka = record(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", "Connect to ipv4#1 failed")
    for each in [*kafka_python, librdkafka]:
        assert quiet.filter(each) is False  # dropped: WARNING is the logger's level
    assert tracker.unreachable_since == clock.now
    others = [
        record(logging.ERROR, "member x sent undecodable subscription user data"),
        record(logging.ERROR, "%s [%s] %s", "TXNERR", "rdkafka#producer-1", "Current transaction failed"),
        record(logging.INFO, "Connection lost: KafkaConnectionError"),  # below WARNING: untouched
    ]
    assert all(quiet.filter(each) for each in others)
    assert [r.levelname for r in others] == ["ERROR", "ERROR", "INFO"]

    logger.setLevel(logging.DEBUG)  # with DEBUG on, the line is kept, as DEBUG
    kept = record(logging.ERROR, "Connection lost: KafkaConnectionError: socket disconnected")
    assert quiet.filter(kept) is True and kept.levelname == "DEBUG"
