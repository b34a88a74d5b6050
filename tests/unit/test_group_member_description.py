"""DescribeGroups members read for status and reset: with and without the subscription."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from streams_runtime.processor.internals.assignment import SubscriptionInfo
from streams_runtime.processor.internals.group_member import member_description

PROCESS = "20416f83-48fc-44cf-8a7c-8928461a5cea"
MEMBER = f"app-coordination-{PROCESS}-12859b12-917f-449b-b707-a22e5712ddc9"


def test_should_read_endpoint_and_process_from_the_subscription():
    user_data = SubscriptionInfo(PROCESS, "10.0.0.5:7070", {}, 2).encode()
    subscription = ConsumerProtocolSubscription(version=0, topics=["in"], user_data=user_data)
    for metadata in (subscription, {"topics": ["in"], "user_data": user_data}):
        member = member_description({"member_id": MEMBER, "client_id": "c", "member_metadata": metadata})
        assert (member.process_id, member.endpoint, member.thread_count) == (PROCESS, "10.0.0.5:7070", 2)


def test_should_fall_back_to_the_member_id_when_the_broker_returns_no_subscription():
    member = member_description({"member_id": MEMBER, "client_id": "", "member_metadata": ""})
    assert (member.process_id, member.endpoint) == (PROCESS, None)
    garbage = member_description({"member_id": "other", "member_metadata": {"user_data": b"not json"}})
    assert (garbage.process_id, garbage.endpoint) == (None, None)
