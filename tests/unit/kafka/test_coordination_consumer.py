"""The coordination consumer finishes a join it left in flight (streams_runtime/kafka/membership.py):
kafka-python takes a join's SyncGroup answer only in a poll that still needs a rejoin, and a
leader's own assignment can end that need while the join is in flight. Broker-free: the
consumer never connects (nothing here sends a request)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka.coordinator.base import MemberState

from streams_runtime.kafka.membership import CoordinationConsumer


@pytest.fixture
def coordinator() -> Iterator[object]:
    consumer = CoordinationConsumer(bootstrap_servers="127.0.0.1:1", group_id="g", api_version=(2, 5))
    consumer.subscribe(["input"])
    try:
        yield consumer._coordinator  # noqa: SLF001 (the state under test has no public accessor)
    finally:
        consumer.close(autocommit=False, timeout_ms=100)


def test_a_member_in_the_middle_of_a_join_needs_a_rejoin_until_a_poll_finished_it(coordinator) -> None:
    # joined once; a rejoin asked for because the metadata changed, then met by the leader's own
    # assignment
    coordinator._joined_subscription = {"input"}  # noqa: SLF001
    coordinator.rejoin_needed = False
    coordinator.state = MemberState.REBALANCING  # JoinGroup sent, the poll timed out
    assert coordinator.need_rejoin(), "the join in flight would never be finished"
    coordinator.state = MemberState.STABLE  # a poll took the SyncGroup answer
    assert not coordinator.need_rejoin()


def test_an_asked_rejoin_is_still_needed_outside_a_join(coordinator) -> None:
    coordinator.state = MemberState.STABLE
    coordinator.request_rejoin()
    assert coordinator.need_rejoin()
