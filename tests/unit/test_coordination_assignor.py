"""The coordination consumer's kafka-python assignor hands the group protocol to the GroupAssignor
it is given (the runtime's GroupMember), without knowing tasks: broker-free."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from streams_runtime.kafka.membership import PROTOCOL_NAME, GroupAssignor, _ProtocolAssignor


class RecordingAssignor:
    source_topics = ("orders", "clicks")

    def __init__(self) -> None:
        self.assigned: list[tuple[dict, dict]] = []
        self.synced: list[tuple[bytes | None, int]] = []

    def subscription_user_data(self) -> bytes:
        return b"sub"

    def assign_user_data(
        self, member_user_data: Mapping[str, bytes], partition_counts: Mapping[str, int]
    ) -> Mapping[str, bytes]:
        self.assigned.append((dict(member_user_data), dict(partition_counts)))
        return {member: data + b"-assigned" for member, data in member_user_data.items()}

    def on_sync(self, user_data: bytes | None, generation: int) -> None:
        self.synced.append((user_data, generation))


class Cluster:
    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return {"orders": {0, 1, 2}}.get(topic)


def _member(member_id: str, user_data: bytes | None) -> SimpleNamespace:
    return SimpleNamespace(member_id=member_id, metadata=SimpleNamespace(user_data=user_data))


def test_should_subscribe_with_the_assignors_user_data() -> None:
    assignor: GroupAssignor = RecordingAssignor()
    adapter = _ProtocolAssignor(assignor)
    subscription = adapter.metadata({"orders", "clicks"})
    assert adapter.name == PROTOCOL_NAME
    assert (list(subscription.topics), bytes(subscription.user_data)) == (["clicks", "orders"], b"sub")


def test_should_assign_through_the_assignor_with_partition_counts_and_no_partitions() -> None:
    assignor = RecordingAssignor()
    out = _ProtocolAssignor(assignor).assign(Cluster(), [_member("m1", b"a"), _member("m2", None)])
    # a missing topic counts 0 partitions; a member without user data sends empty bytes
    assert assignor.assigned == [({"m1": b"a", "m2": b""}, {"orders": 3, "clicks": 0})]
    assert {m: bytes(a.user_data) for m, a in out.items()} == {"m1": b"a-assigned", "m2": b"-assigned"}
    assert all(isinstance(a, ConsumerProtocolAssignment) and not a.assigned_partitions for a in out.values())


def test_should_hand_the_synced_user_data_and_generation_to_the_assignor() -> None:
    assignor = RecordingAssignor()
    assignment = ConsumerProtocolAssignment(version=0, assigned_partitions=[], user_data=b"info")
    _ProtocolAssignor(assignor).on_assignment(assignment, 7)
    assert assignor.synced == [(b"info", 7)]


def test_should_tell_outage_errors_from_the_rest() -> None:
    from kafka.errors import IllegalStateError, KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError

    from streams_runtime.kafka.membership import is_transient_group_error

    for transient in (KafkaConnectionError(), KafkaTimeoutError(), NodeNotReadyError()):
        assert is_transient_group_error(transient), transient
    for fatal in (IllegalStateError(), ValueError("bad"), RuntimeError()):
        assert not is_transient_group_error(fatal), fatal
