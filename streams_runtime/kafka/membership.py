"""The coordination group's client: the only module of streams_runtime that imports kafka-python.

librdkafka cannot run a custom assignor (docs/decisions/0002-membership-and-data-path.md), so
membership uses the classic group protocol through kafka-python, while every record still flows
through confluent-kafka with manual ``assign()``.
This module is the client side of that protocol and knows nothing of tasks: a
:class:`CoordinationConsumer` joins ``<application_id>-coordination`` (not the application id:
input offsets are committed under the application id by non-members, which a group rejects) and
runs the group protocol with a :class:`GroupAssignor` it is given, which supplies the
subscription's user data, computes every member's assignment user data on the leader and
receives this member's. The runtime's ``GroupMember``
(:mod:`streams_runtime.processor.internals.group_member`) is that assignor, as Kafka Streams'
assignor plugs into its consumer through ``partition.assignment.strategy``.

The consumer never fetches records: the consumer-protocol assignment names no partitions (the
tasks and their partitions travel in the user data), so kafka-python has nothing to fetch; it
subscribes to the source topics only so the leader sees their partition counts and the group
rebalances when they change. kafka-python calls the assignor on its own IO thread.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Protocol, TypedDict, Unpack

from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from kafka.coordinator.base import MemberState
from kafka.errors import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError
from kafka.errors import KafkaError as KafkaPythonError
from kafka.protocol.admin import DescribeGroupsResponse
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from streams_runtime.errors import StreamsConfigError, StreamsError
from streams_runtime.kafka.outage import quiet_connection_errors
from streams_runtime.kafka.profile import client_config

PROTOCOL_NAME = "streams"

#: kafka-python's IO loop warns when one of its steps runs over 0.1 s ("Task ... ran for 0.13s
#: (>0.100s threshold). It is blocking the event loop"), a threshold meant for its own tests that a
#: busy machine passes every few seconds while nothing is wrong (the coordination client does
#: little but heartbeat; KafkaConsumer does not accept the threshold as a config). Steps up to
#: this long are not logged; a longer one (a session timeout's order of magnitude) still is.
SLOW_STEP_WORTH_A_WARNING_S = 1.0
_SLOW_STEP = re.compile(r"ran for ([0-9.]+)s \(>")


class _SlowStepFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        found = _SLOW_STEP.search(record.getMessage())
        return found is None or float(found.group(1)) >= SLOW_STEP_WORTH_A_WARNING_S


logging.getLogger("kafka.net.selector").addFilter(_SlowStepFilter())
#: librdkafka profile keys that mean the same to kafka-python, and their kafka-python names
_PROFILE_KEYS = {
    "allow.auto.create.topics": "allow_auto_create_topics",
    "enable.auto.commit": "enable_auto_commit",
}


#: librdkafka's security settings and kafka-python's names for them (the membership's client
#: gets the cluster's security settings from the same ``client.*`` config as every other client)
SECURITY_KEYS = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.endpoint.identification.algorithm": "ssl_check_hostname",
}


def security_settings(client_settings: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's settings for the security part of librdkafka-style ``client_settings``
    (the rest is left to librdkafka). A ``sasl.*`` or ``ssl.*`` key without a kafka-python
    counterpart is an error naming it, never silently dropped."""
    translated: dict[str, Any] = {}
    for key, value in client_settings.items():
        if key in SECURITY_KEYS:
            name = SECURITY_KEYS[key]
            if name == "ssl_check_hostname":
                value = str(value).lower() == "https"
            elif name in ("security_protocol", "sasl_mechanism"):
                value = str(value).upper()
            translated[name] = value
        elif key.startswith(("sasl.", "ssl.")):
            raise StreamsConfigError(
                f"client.{key}: not supported for the group membership's client; supported "
                f"security settings: {', '.join(sorted(SECURITY_KEYS))}"
            )
    return translated


def coordination_group_id(application_id: str) -> str:
    """The membership group of an application; distinct from ``application_id``
    (docs/decisions/0002-membership-and-data-path.md)."""
    return f"{application_id}-coordination"


class GroupAssignor(Protocol):
    """What the coordination consumer runs the group protocol with (called on kafka-python's IO
    thread; keep it fast and thread-safe)."""

    @property
    def source_topics(self) -> Sequence[str]:
        """The topics whose partition counts the leader's assignment depends on."""
        ...

    def subscription_user_data(self) -> bytes:
        """JoinGroup: this member's subscription user data."""
        ...

    def assign_user_data(
        self, member_user_data: Mapping[str, bytes], partition_counts: Mapping[str, int]
    ) -> Mapping[str, bytes]:
        """Leader: every member's assignment user data, from their subscriptions' user data."""
        ...

    def on_sync(self, user_data: bytes | None, generation: int) -> None:
        """SyncGroup: this member's assignment user data for ``generation``."""
        ...


class CoordinationConsumer(KafkaConsumer):
    """KafkaConsumer plus the coordinator calls its public API lacks (ask for a rejoin, is a join
    in flight, is this member the leader), and a join in flight always finished.

    kafka-python (3.0.12) leaves a join whose poll timed out in flight and finishes it in a later
    poll only while the coordinator still "needs a rejoin". When the rejoin was asked for because
    the topic metadata changed, the leader's own assignment records the new metadata, so from then
    on no rejoin is needed: the join's SyncGroup answer is never taken, the heartbeat stays off,
    the group drops the member once its session expires, and the member, never told, goes on
    running its tasks while the next member to join gets them too (seen on Apache Kafka, where a
    new changelog topic's metadata arrives between the first two joins). Here a member in the
    middle of a join (kafka-python's REBALANCING) needs a rejoin until a poll has finished it.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        coordinator = self._coordinator
        needs_rejoin = coordinator.need_rejoin

        def need_rejoin() -> bool:
            return bool(needs_rejoin()) or coordinator.state is MemberState.REBALANCING

        coordinator.need_rejoin = need_rejoin

    def request_rejoin(self) -> None:
        self._coordinator.request_rejoin()

    def rebalancing(self) -> bool:
        """This member is between JoinGroup and the end of SyncGroup (kafka-python's REBALANCING)."""
        return self._coordinator.state is MemberState.REBALANCING

    def is_leader(self) -> bool:
        """This member computed the assignment of the generation it is in."""
        return bool(self._coordinator._is_leader)  # noqa: SLF001 (no public accessor)

    def close_without_leaving(self, timeout_ms: int) -> None:
        """Close without LeaveGroup: the group drops this member when its session expires."""
        self._coordinator.maybe_leave_group = lambda *args, **kwargs: None
        self.close(autocommit=False, timeout_ms=timeout_ms)


class _ProtocolAssignor(AbstractPartitionAssignor):
    """The kafka-python face of a :class:`GroupAssignor`; owned by one coordination consumer."""

    name = PROTOCOL_NAME
    version = 0

    def __init__(self, assignor: GroupAssignor) -> None:
        self._assignor = assignor

    def metadata(self, topics: set[str]) -> ConsumerProtocolSubscription:
        user_data = self._assignor.subscription_user_data()
        return ConsumerProtocolSubscription(version=0, topics=sorted(topics), user_data=user_data)

    def assign(
        self, cluster: ClusterMetadata, members: Sequence[Any]
    ) -> dict[str, ConsumerProtocolAssignment]:
        counts = {t: len(cluster.partitions_for_topic(t) or ()) for t in self._assignor.source_topics}
        user_data = {m.member_id: bytes(m.metadata.user_data or b"") for m in members}
        out = self._assignor.assign_user_data(user_data, counts)
        return {
            mid: ConsumerProtocolAssignment(version=0, assigned_partitions=[], user_data=data)
            for mid, data in out.items()
        }

    def on_assignment(self, assignment: ConsumerProtocolAssignment, generation: int) -> None:
        self._assignor.on_sync(assignment.user_data, generation)


def is_transient_group_error(exc: BaseException) -> bool:
    """A kafka-python error an outage causes (the client recovers once the broker answers)."""
    if not isinstance(exc, KafkaPythonError):
        return False
    return isinstance(exc, KafkaConnectionError | KafkaTimeoutError | NodeNotReadyError) or bool(
        getattr(exc, "retriable", False)
    )


class CoordinationSettings(TypedDict):
    """The keywords a coordination-group consumer is made with (by :func:`create_coordination_consumer`
    and every client supplier's ``get_coordination_consumer``)."""

    bootstrap_servers: str
    group_id: str
    client_id: str
    #: the group protocol the member runs
    assignor: GroupAssignor
    session_timeout_ms: int
    heartbeat_interval_ms: int
    #: kafka-python settings that win over the shared profile
    overrides: NotRequired[Mapping[str, Any] | None]


def create_coordination_consumer(**settings: Unpack[CoordinationSettings]) -> CoordinationConsumer:
    """A consumer of the coordination group ``group_id`` running the group protocol with
    ``assignor``; ``overrides`` are kafka-python settings that win over the shared profile.
    kafka-python's per-retry connection errors are folded into the outage log (:mod:`.outage`)."""
    quiet_connection_errors()
    bootstrap_servers = settings["bootstrap_servers"]
    profile = client_config("consumer", bootstrap_servers)
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers,
        "group_id": settings["group_id"],
        "client_id": settings["client_id"],
        "session_timeout_ms": settings["session_timeout_ms"],
        "heartbeat_interval_ms": settings["heartbeat_interval_ms"],
        "partition_assignment_strategy": [_ProtocolAssignor(settings["assignor"])],
        **{name: profile[key] for key, name in _PROFILE_KEYS.items() if key in profile},
        **(settings.get("overrides") or {}),
    }
    return CoordinationConsumer(**config)


# -- reading the group from outside (status and reset tools) ---------------------------------


class _ToolsAdmin(KafkaAdminClient):
    """kafka-python's admin client, not decoding the groups' authorized operations (brokers such
    as Tansu report values kafka-python's enum does not know, which would fail the whole call),
    and handing back each member's subscription user data as the bytes the member sent (its
    dict form decodes them as UTF-8 text, which a binary SubscriptionInfo does not survive)."""

    def _process_acl_operations(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj.pop("authorized_operations", None)
        return obj

    def _describe_groups_process_response(
        self, response: DescribeGroupsResponse
    ) -> dict[str, dict[str, Any]]:
        raw: dict[tuple[str, str], bytes] = {}
        for group in response.groups:
            for member in group.members:
                if member.member_metadata:
                    try:
                        decoded = ConsumerProtocolSubscription.decode(member.member_metadata)
                    except Exception:  # kafka-python logs and keeps the raw metadata itself
                        continue
                    if decoded.user_data is not None:
                        raw[(group.group_id, member.member_id)] = bytes(decoded.user_data)
        results: dict[str, dict[str, Any]] = super()._describe_groups_process_response(response)
        for group_id, group in results.items():
            for member in group.get("members") or []:
                user_data = raw.get((group_id, member.get("member_id")))
                metadata = member.get("member_metadata")
                if user_data is not None and isinstance(metadata, dict):
                    metadata["user_data"] = user_data
        return results


def describe_coordination_group(
    bootstrap_servers: str, application_id: str, timeout: float = 10.0
) -> tuple[str, list[Mapping[str, Any]]]:
    """The coordination group's state (``Empty``, ``Stable``, ``Dead``...) and its members as
    DescribeGroups returns them (kafka-python's dicts, subscription user data undecoded)."""
    try:
        admin = _ToolsAdmin(
            bootstrap_servers=bootstrap_servers,
            client_id=f"{application_id}-tools",
            request_timeout_ms=int(timeout * 1000),
        )
        try:
            group = admin.describe_groups([coordination_group_id(application_id)])[
                coordination_group_id(application_id)
            ]
        finally:
            admin.close()
    except KafkaPythonError as exc:
        raise StreamsError(
            f"cannot describe the group of {application_id} at {bootstrap_servers}: {exc}"
        ) from exc
    if group.get("error") and "GroupIdNotFound" in str(group["error"]):
        return "Dead", []  # never joined (Apache Kafka 4 answers so; Tansu answers Dead)
    if group.get("error"):
        raise StreamsError(f"cannot describe the group of {application_id}: {group['error']}")
    return str(group.get("group_state", "")), list(group.get("members", []))
