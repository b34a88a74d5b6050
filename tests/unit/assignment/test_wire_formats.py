"""SubscriptionInfo and AssignmentInfo: versioned, deterministic bytes that round-trip."""

from __future__ import annotations

import json

import pytest

from streams_runtime.processor.internals.assignment import (
    LATEST_OFFSET,
    AssignmentInfo,
    AssignmentProtocolError,
    AssignorError,
    RebalanceRequest,
    SourcePartition,
    SubscriptionInfo,
    TaskId,
)


def test_task_id_prints_and_parses_in_kafka_streams_form() -> None:
    assert str(TaskId(0, 3)) == "0_3"
    assert TaskId.parse("12_7") == TaskId(12, 7)
    assert sorted([TaskId(1, 0), TaskId(0, 10), TaskId(0, 2)]) == [TaskId(0, 2), TaskId(0, 10), TaskId(1, 0)]


def test_should_round_trip_subscription_info() -> None:
    info = SubscriptionInfo(
        "proc-1", "10.0.0.5:7070", {TaskId(0, 1): LATEST_OFFSET, TaskId(1, 3): 4200}, thread_count=3
    )
    decoded = SubscriptionInfo.decode(info.encode())
    assert decoded == info
    assert decoded.active_tasks == {TaskId(0, 1)}
    assert decoded.standby_or_idle_state == {TaskId(1, 3)}
    assert json.loads(info.encode())["v"] == 1


def test_subscription_bytes_are_deterministic_and_compact() -> None:
    a = SubscriptionInfo("p", None, {TaskId(1, 0): 5, TaskId(0, 0): 7})
    b = SubscriptionInfo("p", None, {TaskId(0, 0): 7, TaskId(1, 0): 5})
    assert a.encode() == b.encode()
    assert b" " not in a.encode()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"process_id": ""}, "process_id"),
        ({"process_id": "p", "endpoint": "no-port"}, "host:port"),
        ({"process_id": "p", "endpoint": "h:99999"}, "host:port"),
        ({"process_id": "p", "thread_count": 0}, "thread_count"),
        ({"process_id": "p", "task_offset_sums": {TaskId(0, 0): -5}}, "LATEST_OFFSET"),
    ],
)
def test_subscription_rejects_invalid_fields(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SubscriptionInfo(**kwargs)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"\xff\x00", "corrupt"),
        (b"[1,2]", "version"),
        (b'{"v":99,"pid":"p"}', "version 99 is not supported"),
        (b'{"v":1,"pid":"p","ep":null,"threads":1,"sums":{"x_y":1}}', "malformed task id"),
        (b'{"v":1,"pid":"p"}', "invalid subscription"),
    ],
)
def test_subscription_decode_rejects_bad_bytes_with_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(AssignmentProtocolError, match=message):
        SubscriptionInfo.decode(data)


def test_should_round_trip_assignment_info() -> None:
    info = AssignmentInfo(
        active_tasks=frozenset({TaskId(0, 0), TaskId(1, 0)}),
        standby_tasks=frozenset({TaskId(0, 1)}),
        warmup_tasks=frozenset({TaskId(1, 1)}),
        partitions_by_host={
            "a:1": frozenset({SourcePartition("orders", 0), SourcePartition("users", 0)}),
            "b:1": frozenset({SourcePartition("orders", 1)}),
        },
        standby_partitions_by_host={"b:1": frozenset({SourcePartition("orders", 0)})},
        rebalance=RebalanceRequest.PROBING,
    )
    decoded = AssignmentInfo.decode(info.encode())
    assert decoded == info
    assert decoded.replica_tasks == {TaskId(0, 1), TaskId(1, 1)}
    assert decoded.host_of("orders", 1) == "b:1"
    assert decoded.host_of("orders", 9) is None


def test_assignment_carries_errors_and_rejects_a_task_in_two_roles() -> None:
    error = AssignmentInfo(error=AssignorError.COPARTITIONING_MISMATCH, error_message="a: 2, b: 3")
    assert AssignmentInfo.decode(error.encode()) == error
    with pytest.raises(ValueError, match="two roles"):
        AssignmentInfo(active_tasks=frozenset({TaskId(0, 0)}), standby_tasks=frozenset({TaskId(0, 0)}))
    with pytest.raises(AssignmentProtocolError, match="version 2"):
        AssignmentInfo.decode(b'{"v":2}')
