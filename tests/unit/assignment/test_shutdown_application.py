"""SHUTDOWN_APPLICATION: one member's shutdown flag becomes every member's assignment error."""

from __future__ import annotations

import json

import pytest

from streams_runtime.processor.internals.assignment import (
    AssignmentInfo,
    AssignorError,
    StreamsAssignor,
    SubscriptionInfo,
    TaskId,
)
from tests.unit.assignment.helpers import members, single_source


def test_one_shutdown_request_gives_every_member_the_shutdown_error() -> None:
    subtopologies, counts = single_source(4)
    subs = members({"a": 2, "b": 1})
    subs["b-t0"] = SubscriptionInfo("b", "b:8080", {TaskId(0, 1): 7}, shutdown_requested=True)
    group = StreamsAssignor(subtopologies).assign(subs, counts)
    assert set(group.assignments) == set(subs)
    for info in group.assignments.values():
        assert info.error is AssignorError.SHUTDOWN_APPLICATION
        assert "b" in info.error_message
        assert not (info.active_tasks or info.standby_tasks or info.warmup_tasks)


def test_without_a_shutdown_request_tasks_are_assigned() -> None:
    subtopologies, counts = single_source(4)
    group = StreamsAssignor(subtopologies).assign(members({"a": 2, "b": 1}), counts)
    assert all(info.error is AssignorError.NONE for info in group.assignments.values())
    assert sum(len(info.active_tasks) for info in group.assignments.values()) == 4


def test_wire_level_shutdown_reaches_even_a_member_with_undecodable_user_data() -> None:
    subtopologies, counts = single_source(2)
    user_data = {
        "m1": SubscriptionInfo("p1").encode(),
        "m2": SubscriptionInfo("p2", shutdown_requested=True).encode(),
        "m3": b"garbage",
    }
    out = StreamsAssignor(subtopologies).assign_user_data(user_data, counts)
    assert set(out) == set(user_data)
    errors = {AssignmentInfo.decode(data).error for data in out.values()}
    assert errors == {AssignorError.SHUTDOWN_APPLICATION}


def test_shutdown_flag_is_version_2_and_ordinary_subscriptions_stay_version_1() -> None:
    plain = SubscriptionInfo("p", None, {TaskId(0, 0): 3})
    flagged = SubscriptionInfo("p", None, {TaskId(0, 0): 3}, shutdown_requested=True)
    assert json.loads(plain.encode()) == {"v": 1, "pid": "p", "ep": None, "threads": 1, "sums": {"0_0": 3}}
    assert json.loads(flagged.encode())["v"] == 2 and json.loads(flagged.encode())["shutdown"] is True
    assert SubscriptionInfo.decode(flagged.encode()) == flagged
    assert SubscriptionInfo.decode(plain.encode()).shutdown_requested is False
    assert SubscriptionInfo.decode(b'{"v":2,"pid":"p","ep":null,"threads":1,"sums":{},"shutdown":false}') == (
        SubscriptionInfo("p", version=2)
    )
    with pytest.raises(ValueError, match="version >= 2"):
        SubscriptionInfo("p", version=1, shutdown_requested=True)
