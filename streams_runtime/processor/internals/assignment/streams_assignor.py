"""StreamsAssignor: the leader's whole assignment, from member subscriptions to member assignments.

Pure (no client library): the kafka-python adapter in :mod:`streams_runtime.kafka.membership`
hands it the members' user data and the source topics' partition counts and sends back what it
returns. Owned by the group leader for the duration of one rebalance; holds no state between
rebalances (everything sticky comes from what members report).

Steps of :meth:`StreamsAssignor.assign`:
  0. If any member's subscription asks for an application shutdown, every member (also one whose
     user data did not decode) gets an empty assignment with ``AssignorError.SHUTDOWN_APPLICATION``.
  1. Tasks from the sub-topologies and partition counts (co-partitioning checked). On a missing
     source topic or a co-partitioning mismatch every member gets an empty assignment carrying
     the error, never a silently partial one.
  2. Clients: members grouped by process id; capacity = the sum of their thread counts; offset
     sums merged; lags computed (see :mod:`.client_state`).
  3. Tasks over clients: :class:`~.task_assignor.TaskAssignor` (balance, stickiness, standbys,
     warm-ups).
  4. Each client's tasks over its members: :func:`~.consumer_distribution.distribute_tasks`.
  5. Hand-off (cooperative, per task): an active task whose new member is not the member that
     reports running it now is withheld from the new member in this generation; the current
     owner sees it revoked and is told to rejoin at once (``RebalanceRequest.IMMEDIATE``); in the
     next generation nobody claims it and it goes to its new member. So no task is ever active
     on two members at once, as long as members report what they run.
  6. Host maps for interactive queries (withheld tasks are under no host: migrating), then one
     :class:`~.assignment_info.AssignmentInfo` per member.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from streams_runtime.errors import MissingSourceTopicError
from streams_runtime.processor.internals.assignment.assignment_info import (
    AssignmentInfo,
    AssignorError,
    RebalanceRequest,
)
from streams_runtime.processor.internals.assignment.client_state import (
    ClientState,
    compute_task_lags,
    merge_offset_sums,
)
from streams_runtime.processor.internals.assignment.consumer_distribution import (
    ConsumerBin,
    MemberTasks,
    distribute_tasks,
)
from streams_runtime.processor.internals.assignment.partition_grouper import (
    CopartitioningError,
    SourcePartition,
    SubtopologySources,
    partition_groups,
    stateful_tasks,
)
from streams_runtime.processor.internals.assignment.subscription_info import SubscriptionInfo
from streams_runtime.processor.internals.assignment.task_assignor import (
    AssignorConfig,
    TaskAssignmentResult,
    TaskAssignor,
)
from streams_runtime.processor.internals.assignment.wire import AssignmentProtocolError
from streams_runtime.processor.task_id import TaskId

log = logging.getLogger(__name__)


@dataclass
class GroupAssignment:
    """The outcome of one rebalance on the leader."""

    assignments: dict[str, AssignmentInfo]
    tasks: dict[TaskId, tuple[SourcePartition, ...]] = field(default_factory=dict)
    result: TaskAssignmentResult = field(default_factory=TaskAssignmentResult)
    #: tasks withheld this generation because their previous member must revoke them first
    withheld: frozenset[TaskId] = frozenset()


class StreamsAssignor:
    """Computes assignments for a topology's sub-topologies under one :class:`AssignorConfig`."""

    def __init__(
        self, subtopologies: Sequence[SubtopologySources], config: AssignorConfig | None = None
    ) -> None:
        self.subtopologies = tuple(sorted(subtopologies, key=lambda s: s.subtopology))
        self.config = config or AssignorConfig()
        self._task_assignor = TaskAssignor(self.config)

    def assign_user_data(
        self,
        user_data: Mapping[str, bytes],
        partition_counts: Mapping[str, int],
        end_offset_sums: Mapping[TaskId, int] | None = None,
    ) -> dict[str, bytes]:
        """Wire-level entry point: member id -> subscription bytes in, assignment bytes out.

        A member whose user data does not decode gets an error assignment and is left out of
        the balance; the others are assigned as if it were absent.
        """
        subscriptions: dict[str, SubscriptionInfo] = {}
        out: dict[str, bytes] = {}
        for member, data in user_data.items():
            try:
                subscriptions[member] = SubscriptionInfo.decode(data)
            except AssignmentProtocolError as exc:
                log.error("member %s sent undecodable subscription user data: %s", member, exc)
                out[member] = AssignmentInfo(
                    error=AssignorError.UNDECODABLE_SUBSCRIPTION, error_message=str(exc)
                ).encode()
        group = self.assign(subscriptions, partition_counts, end_offset_sums)
        if any(s.shutdown_requested for s in subscriptions.values()):  # Step 0, for every member
            shutdown = next(iter(group.assignments.values())).encode()
            return {member: shutdown for member in user_data}
        out.update({member: info.encode() for member, info in group.assignments.items()})
        return out

    def assign(
        self,
        subscriptions: Mapping[str, SubscriptionInfo],
        partition_counts: Mapping[str, int],
        end_offset_sums: Mapping[TaskId, int] | None = None,
    ) -> GroupAssignment:
        """Assign tasks to the members of ``subscriptions`` (member id -> SubscriptionInfo)."""
        members = sorted(subscriptions)
        # Step 0
        requesters = sorted({s.process_id for s in subscriptions.values() if s.shutdown_requested})
        if requesters:
            return _error_assignment(
                members,
                AssignorError.SHUTDOWN_APPLICATION,
                f"application shutdown requested by instance(s) {', '.join(requesters)}",
            )
        # Step 1
        try:
            tasks = partition_groups(self.subtopologies, partition_counts)
        except MissingSourceTopicError as exc:
            return _error_assignment(members, AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA, str(exc))
        except CopartitioningError as exc:
            return _error_assignment(members, AssignorError.COPARTITIONING_MISMATCH, str(exc))
        stateful = stateful_tasks(self.subtopologies, tasks)

        # Step 2
        by_process: dict[str, list[str]] = defaultdict(list)
        for member in members:
            by_process[subscriptions[member].process_id].append(member)
        offset_sums = {
            pid: {
                t: s
                for t, s in merge_offset_sums(subscriptions[m].task_offset_sums for m in ms).items()
                if t in tasks
            }
            for pid, ms in by_process.items()
        }
        lags = compute_task_lags(offset_sums, tasks, stateful, end_offset_sums)
        clients = {
            pid: ClientState(
                process_id=pid,
                capacity=sum(subscriptions[m].thread_count for m in ms),
                endpoint=next((subscriptions[m].endpoint for m in ms if subscriptions[m].endpoint), None),
                previous_active=frozenset(t for t in offset_sums[pid] if offset_sums[pid][t] < 0),
                local_state=frozenset(offset_sums[pid]),
                lags=lags[pid],
            )
            for pid, ms in sorted(by_process.items())
        }

        # Step 3
        result = self._task_assignor.assign(clients, tasks, stateful)

        # Step 4
        member_tasks: dict[str, MemberTasks] = {}
        for pid, client in clients.items():
            bins = {
                m: ConsumerBin(subscriptions[m].thread_count, subscriptions[m].task_offset_sums)
                for m in by_process[pid]
            }
            member_tasks.update(distribute_tasks(bins, client.active, client.standby, client.warmup))

        # Step 5
        claims: dict[TaskId, set[str]] = defaultdict(set)
        for member in members:
            for task in subscriptions[member].active_tasks:
                claims[task].add(member)
        withheld: set[TaskId] = set()
        revoking: set[str] = set()
        for member in members:
            for task in sorted(member_tasks[member].active):
                others = claims.get(task, set()) - {member}
                if others:
                    member_tasks[member].active.discard(task)
                    withheld.add(task)
                    revoking |= others

        # Step 6
        hosts: dict[str, set[SourcePartition]] = {}
        standby_hosts: dict[str, set[SourcePartition]] = {}
        for pid, client in clients.items():
            if client.endpoint is None:
                continue
            mine = [member_tasks[m] for m in by_process[pid]]
            hosts[client.endpoint] = {p for mt in mine for t in mt.active for p in tasks[t]}
            standby_hosts[client.endpoint] = {
                p for mt in mine for t in (mt.standby | mt.warmup) for p in tasks[t]
            }
        frozen_hosts = {h: frozenset(ps) for h, ps in hosts.items()}
        frozen_standby_hosts = {h: frozenset(ps) for h, ps in standby_hosts.items()}
        assignments: dict[str, AssignmentInfo] = {}
        for member in members:
            if member in revoking:
                rebalance = RebalanceRequest.IMMEDIATE
            elif result.probing_rebalance_needed:
                rebalance = RebalanceRequest.PROBING
            else:
                rebalance = RebalanceRequest.NONE
            mt = member_tasks[member]
            assignments[member] = AssignmentInfo(
                active_tasks=frozenset(mt.active),
                standby_tasks=frozenset(mt.standby),
                warmup_tasks=frozenset(mt.warmup),
                partitions_by_host=frozen_hosts,
                standby_partitions_by_host=frozen_standby_hosts,
                rebalance=rebalance,
            )
        if result.unfilled_standbys:
            log.warning(
                "%d standby replicas could not be placed: %d instances for %d replicas per task",
                result.unfilled_standbys,
                len(clients),
                self.config.num_standby_replicas,
            )
        return GroupAssignment(assignments, tasks, result, frozenset(withheld))


def _error_assignment(members: Sequence[str], error: AssignorError, message: str) -> GroupAssignment:
    log.error("assignment failed (%s): %s", error.name, message)
    info = AssignmentInfo(error=error, error_message=message)
    return GroupAssignment({member: info for member in members})
