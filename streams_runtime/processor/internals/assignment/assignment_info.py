"""AssignmentInfo: what the leader tells one member at the end of a rebalance.

Computed by the leader (:class:`~.streams_assignor.StreamsAssignor`) for every member, carried as
the consumer-protocol assignment's user data, decoded by the member (``GroupMember``), which
turns the difference from its previous assignment into revoked/assigned task callbacks.

Fields:
  - ``active_tasks``, ``standby_tasks``, ``warmup_tasks``: this member's tasks. The three sets are
    disjoint. A warm-up is a standby placed to catch a task up before it moves here.
  - ``partitions_by_host`` / ``standby_partitions_by_host``: for interactive queries, every
    instance endpoint mapped to the source partitions of its active (standby and warm-up) tasks,
    for the whole group. Tasks withheld during a hand-off appear under no host (migrating).
  - ``rebalance``: what the member must do after applying the assignment: nothing, rejoin at once
    (a task hand-off is pending: the previous owner revokes, then the new owner gets the task), or
    rejoin after the probing interval (warm-ups are catching up).
  - ``error`` and ``error_message``: set when the leader could not compute tasks (missing source
    topic metadata, co-partitioning mismatch, undecodable subscriptions); then all task sets are
    empty and the member must surface the error rather than process nothing silently.
    ``SHUTDOWN_APPLICATION`` is the one error no leader failure causes: a member asked for the
    whole application to stop (see :class:`~.subscription_info.SubscriptionInfo`), and every
    member shuts its client down (PENDING_ERROR -> ERROR).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.processor.internals.assignment.wire import (
    AssignmentProtocolError,
    decode_payload,
    encode_payload,
    tasks_from_wire,
    tasks_to_wire,
)
from streams_runtime.processor.task_id import TaskId

ASSIGNMENT_VERSION = 1
SUPPORTED_ASSIGNMENT_VERSIONS = range(1, ASSIGNMENT_VERSION + 1)

HostPartitions = Mapping[str, frozenset[SourcePartition]]


class RebalanceRequest(IntEnum):
    """What the member does after applying its assignment."""

    NONE = 0
    #: a task hand-off is pending: rejoin as soon as the revoked tasks are closed
    IMMEDIATE = 1
    #: warm-ups are catching up: rejoin after ``probing_rebalance_interval_ms``
    PROBING = 2


class AssignorError(IntEnum):
    NONE = 0
    INCOMPLETE_SOURCE_TOPIC_METADATA = 1
    COPARTITIONING_MISMATCH = 2
    UNDECODABLE_SUBSCRIPTION = 3
    #: set by the member itself when the leader's bytes do not decode
    UNDECODABLE_ASSIGNMENT = 4
    #: a member's uncaught-exception handler asked to shut down every instance of the application
    SHUTDOWN_APPLICATION = 5


@dataclass(frozen=True)
class AssignmentInfo:
    """One member's assignment user data (see the module docstring for each field)."""

    active_tasks: frozenset[TaskId] = frozenset()
    standby_tasks: frozenset[TaskId] = frozenset()
    warmup_tasks: frozenset[TaskId] = frozenset()
    partitions_by_host: HostPartitions = field(default_factory=dict)
    standby_partitions_by_host: HostPartitions = field(default_factory=dict)
    rebalance: RebalanceRequest = RebalanceRequest.NONE
    error: AssignorError = AssignorError.NONE
    error_message: str = ""
    version: int = ASSIGNMENT_VERSION

    def __post_init__(self) -> None:
        overlap = (
            (self.active_tasks & self.standby_tasks)
            | (self.active_tasks & self.warmup_tasks)
            | (self.standby_tasks & self.warmup_tasks)
        )
        if overlap:
            raise ValueError(f"a task is in two roles of one assignment: {sorted(map(str, overlap))}")

    @property
    def replica_tasks(self) -> frozenset[TaskId]:
        """Standby and warm-up tasks: every task this member only replays the changelog of."""
        return self.standby_tasks | self.warmup_tasks

    def host_of(self, topic: str, partition: int) -> str | None:
        """The endpoint whose active task owns ``topic``-``partition``, if any."""
        wanted = SourcePartition(topic, partition)
        for host, partitions in self.partitions_by_host.items():
            if wanted in partitions:
                return host
        return None

    def encode(self) -> bytes:
        """Compact, deterministic bytes for the assignment's user data."""
        return encode_payload(
            self.version,
            {
                "active": tasks_to_wire(self.active_tasks),
                "standby": tasks_to_wire(self.standby_tasks),
                "warmup": tasks_to_wire(self.warmup_tasks),
                "hosts": _hosts_to_wire(self.partitions_by_host),
                "standby_hosts": _hosts_to_wire(self.standby_partitions_by_host),
                "rebalance": int(self.rebalance),
                "error": int(self.error),
                "error_message": self.error_message,
            },
        )

    @classmethod
    def decode(cls, data: bytes) -> AssignmentInfo:
        """Parse user data written by :meth:`encode`.

        :raises AssignmentProtocolError: corrupt bytes, an unknown version or invalid fields.
        """
        version, body = decode_payload(data, "assignment", SUPPORTED_ASSIGNMENT_VERSIONS)
        try:
            return cls(
                active_tasks=tasks_from_wire(body["active"], "assignment"),
                standby_tasks=tasks_from_wire(body["standby"], "assignment"),
                warmup_tasks=tasks_from_wire(body["warmup"], "assignment"),
                partitions_by_host=_hosts_from_wire(body["hosts"]),
                standby_partitions_by_host=_hosts_from_wire(body["standby_hosts"]),
                rebalance=RebalanceRequest(body["rebalance"]),
                error=AssignorError(body["error"]),
                error_message=str(body["error_message"]),
                version=version,
            )
        except AssignmentProtocolError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise AssignmentProtocolError(f"invalid assignment user data: {exc!r}") from exc


def _hosts_to_wire(hosts: HostPartitions) -> dict[str, dict[str, list[int]]]:
    wire: dict[str, dict[str, list[int]]] = {}
    for host, partitions in hosts.items():
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(partitions):
            by_topic.setdefault(topic, []).append(partition)
        wire[host] = by_topic
    return wire


def _hosts_from_wire(wire: Mapping[str, Mapping[str, list[int]]]) -> dict[str, frozenset[SourcePartition]]:
    return {
        host: frozenset(
            SourcePartition(topic, int(p)) for topic, partitions in by_topic.items() for p in partitions
        )
        for host, by_topic in wire.items()
    }
