"""InMemoryGroup: the coordination group of an in-memory supplier, with assignments a test controls.

Each ``GroupMember`` of a thread gets an :class:`InMemoryCoordinationConsumer` (the supplier's
``get_coordination_consumer``), which joins this group and runs the group protocol with the
member as its assignor, as kafka-python's consumer does, without a broker:

- **automatic** (``auto_assign=True``, the default): whenever a member subscribes or asks to
  rejoin, the next poll runs a rebalance: the first member is the leader, the runtime's own
  assignor (:meth:`GroupAssignor.assign_user_data`) computes every member's assignment from their
  subscriptions and the cluster's partition counts, and each member receives its own;
- **by the test** (``auto_assign=False``): nothing is assigned until the test calls
  :meth:`InMemoryGroup.assign` with the active (and standby) tasks of a member; a rejoin request
  is only counted (:attr:`InMemoryCoordinationConsumer.rejoin_requests`).

:meth:`InMemoryGroup.drop` makes a member lose its membership (its tasks are revoked as lost).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from types import SimpleNamespace
from typing import Any

from streams_runtime.kafka.membership import GroupAssignor
from streams_runtime.processor.internals.assignment import AssignmentInfo, TaskId
from streams_runtime.testing.in_memory_cluster import InMemoryCluster

__all__ = ["InMemoryCoordinationConsumer", "InMemoryGroup"]


class InMemoryGroup:
    """See the module docstring."""

    def __init__(self, cluster: InMemoryCluster, *, auto_assign: bool = True) -> None:
        self.cluster = cluster
        self.auto_assign = auto_assign
        self.generation = 0
        self.members: list[InMemoryCoordinationConsumer] = []
        self._lock = threading.RLock()
        self._rebalance_needed = False
        #: every rebalance run, as ``{member client id: AssignmentInfo}``
        self.history: list[dict[str, AssignmentInfo]] = []

    def join(self, member: InMemoryCoordinationConsumer) -> None:
        with self._lock:
            if member not in self.members:
                self.members.append(member)
            self._rebalance_needed = True

    def leave(self, member: InMemoryCoordinationConsumer) -> None:
        with self._lock:
            if member in self.members:
                self.members.remove(member)
                self._rebalance_needed = True

    def request_rebalance(self) -> None:
        with self._lock:
            self._rebalance_needed = True

    def maybe_rebalance(self) -> None:
        """Automatic mode: run the pending rebalance (the leader's assignor over every member)."""
        with self._lock:
            if not (self.auto_assign and self._rebalance_needed and self.members):
                return
            self._rebalance_needed = False
            self.generation += 1
            members = {m.member_id: m for m in self.members}
            leader = self.members[0].assignor
            counts = {
                t: self.cluster.partition_count(t) for t in leader.source_topics if t in self.cluster.topics()
            }
            user_data = {mid: m.assignor.subscription_user_data() for mid, m in members.items()}
            assigned = leader.assign_user_data(user_data, counts)
            self.history.append(
                {members[mid].client_id: AssignmentInfo.decode(data) for mid, data in assigned.items()}
            )
            for mid, data in assigned.items():
                members[mid].deliver(data, self.generation)

    def member(self, index: int = 0) -> InMemoryCoordinationConsumer:
        """The ``index``-th member that joined (and has not left)."""
        with self._lock:
            return self.members[index]

    def assign(
        self,
        member: InMemoryCoordinationConsumer | int = 0,
        active: Iterable[TaskId | str] = (),
        standby: Iterable[TaskId | str] = (),
    ) -> None:
        """Give ``member`` (or the member at that index) a new generation's assignment; its
        GroupMember hands the difference to its thread at the next poll."""
        target = self.member(member) if isinstance(member, int) else member
        info = AssignmentInfo(active_tasks=_task_ids(active), standby_tasks=_task_ids(standby))
        with self._lock:
            self.generation += 1
            self.history.append({target.client_id: info})
            target.deliver(info.encode(), self.generation)

    def drop(self, member: InMemoryCoordinationConsumer | int = 0) -> None:
        """The group loses ``member`` (session expired): its GroupMember revokes its tasks as lost."""
        target = self.member(member) if isinstance(member, int) else member
        target.generation_id = -1


def _task_ids(tasks: Iterable[TaskId | str]) -> frozenset[TaskId]:
    return frozenset(t if isinstance(t, TaskId) else TaskId.parse(t) for t in tasks)


class InMemoryCoordinationConsumer:
    """The coordination consumer of one GroupMember, in an :class:`InMemoryGroup`."""

    def __init__(self, group: InMemoryGroup, assignor: GroupAssignor, group_id: str, client_id: str) -> None:
        self.group = group
        self.assignor = assignor
        self.group_id = group_id
        self.client_id = client_id
        self.member_id = f"{client_id}-{id(self):x}"
        self.generation_id = -1
        self.subscription: list[str] = []
        #: how often the member asked to rejoin (a rebalance request, a fenced task, ...)
        self.rejoin_requests = 0
        self.closed = False
        self._wake = threading.Event()

    def topics(self) -> set[str]:
        return set(self.group.cluster.topics())

    def subscribe(self, topics: Sequence[str]) -> None:
        self.subscription = list(topics)
        self.group.join(self)
        self._wake.set()

    def request_rejoin(self) -> None:
        self.rejoin_requests += 1
        self.group.request_rebalance()
        self._wake.set()

    def deliver(self, user_data: bytes, generation: int) -> None:
        """SyncGroup's answer: this member's assignment user data for ``generation``."""
        self.generation_id = generation
        self.assignor.on_sync(user_data, generation)
        self._wake.set()

    def poll(self, timeout_ms: int = 0) -> dict[Any, Any]:
        self.group.maybe_rebalance()
        self._wake.wait(timeout_ms / 1000)
        self._wake.clear()
        return {}

    def rebalancing(self) -> bool:
        return False

    def is_leader(self) -> bool:
        return bool(self.group.members) and self.group.members[0] is self

    def group_metadata(self) -> SimpleNamespace:
        return SimpleNamespace(generation_id=self.generation_id, member_id=self.member_id)

    def close(self, autocommit: bool = False, timeout_ms: int = 0) -> None:
        self.closed = True
        self.group.leave(self)

    def close_without_leaving(self, timeout_ms: int = 0) -> None:
        self.closed = True
        self.group.leave(self)
