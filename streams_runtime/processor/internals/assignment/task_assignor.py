"""TaskAssignor: active, standby and warm-up tasks over clients (processes), state-aware and sticky.

Owned and called by :class:`~.streams_assignor.StreamsAssignor` on the group leader. It fills in
the ``active``, ``standby`` and ``warmup`` sets of the :class:`~.client_state.ClientState` it is
given and returns whether a probing rebalance is needed. It follows the semantics of Kafka
Streams' high-availability assignor; the algorithm is ours.

Steps of :meth:`TaskAssignor.assign`:
  1. For every stateful task, find its caught-up clients: lag <= ``acceptable_recovery_lag``.
  2. Place stateful active tasks, balanced over clients by capacity (threads) and sticky: a task
     stays on its previous owner, or goes to the holder of its most caught-up state, while that
     client is within its quota; the rest go to the least-lagging, least-loaded client.
  3. Movements: a task whose chosen client is not caught up, while another client is, stays
     active on a caught-up client (its previous owner first) and the chosen client is noted as
     the task's warm-up destination. This is the only way the result may exceed a quota, and it
     asks for a probing rebalance so the move completes once the warm-up has caught up.
  4. Standby replicas: ``num_standby_replicas`` per stateful task, never on the client that runs
     the active nor twice on one client; a warm-up destination first (the standby serves as its
     warm-up), then clients that already hold the state (up to their fair share), then the
     least loaded.
  5. Warm-ups: each remaining destination of step 3 gets a warm-up replica, at most
     ``max_warmup_replicas`` in total per assignment.
  6. Stateless active tasks, balanced over the clients' total active load and sticky.

Invariants on return: every task is active on exactly one client; no client holds a task in two
roles; without movements every client's active count is within its ``[floor, floor+1]`` share.
Deterministic: ties break by process id, tasks are visited in ``TaskId`` order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from streams_runtime.errors import StreamsConfigError
from streams_runtime.processor.internals.assignment.balance import BalancedPlacer
from streams_runtime.processor.internals.assignment.client_state import ClientState
from streams_runtime.processor.task_id import TaskId


@dataclass(frozen=True)
class AssignorConfig:
    """The assignment settings of ``StreamsConfig`` (Kafka Streams' names, snake_case)."""

    num_standby_replicas: int = 0
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2

    def __post_init__(self) -> None:
        for key, minimum in (
            ("num_standby_replicas", 0),
            ("acceptable_recovery_lag", 0),
            ("max_warmup_replicas", 1),
        ):
            value = getattr(self, key)
            if not isinstance(value, int) or value < minimum:
                raise StreamsConfigError(f"{key} must be an integer >= {minimum}, got {value!r}")


@dataclass
class TaskAssignmentResult:
    """What the assignor reports besides the client states it filled in."""

    probing_rebalance_needed: bool = False
    #: (task, destination) pairs that wanted a warm-up but got none (budget exhausted)
    deferred_movements: int = 0
    #: standby replicas that could not be placed (fewer clients than replicas + 1)
    unfilled_standbys: int = 0


class TaskAssignor:
    """Assigns tasks to clients; one instance per assignment configuration."""

    def __init__(self, config: AssignorConfig | None = None) -> None:
        self.config = config or AssignorConfig()

    def assign(
        self,
        clients: Mapping[str, ClientState],
        tasks: Iterable[TaskId],
        stateful: frozenset[TaskId],
    ) -> TaskAssignmentResult:
        """Fill in ``active``/``standby``/``warmup`` of every client (see the module steps)."""
        # partition-major order: a client keeping some of its previous tasks (the sticky step is
        # served in this order) keeps one partition of each sub-topology before a second of any
        all_tasks = sorted(set(tasks), key=lambda t: (t.partition, t.subtopology))
        stateful_sorted = [t for t in all_tasks if t in stateful]
        stateless_sorted = [t for t in all_tasks if t not in stateful]
        result = TaskAssignmentResult()
        if not clients:
            return result
        for client in clients.values():
            client.active.clear()
            client.standby.clear()
            client.warmup.clear()

        # Step 1
        caught_up = {
            task: [
                pid
                for pid in sorted(clients)
                if clients[pid].lag_for(task) <= self.config.acceptable_recovery_lag
            ]
            for task in stateful_sorted
        }
        # Step 2
        self._place_active(clients, stateful_sorted, total=len(stateful_sorted), stateful=True)
        # Step 3
        destinations = self._move_to_caught_up(clients, stateful_sorted, caught_up)
        result.probing_rebalance_needed = bool(destinations)
        # Step 4
        result.unfilled_standbys = self._assign_standbys(clients, stateful_sorted, destinations)
        # Step 5
        budget = self.config.max_warmup_replicas
        for task, destination in destinations:
            client = clients[destination]
            if task in client.standby:
                continue
            if budget > 0:
                client.warmup.add(task)
                budget -= 1
            else:
                result.deferred_movements += 1
        # Step 6
        self._place_active(clients, stateless_sorted, total=len(all_tasks), stateful=False)
        return result

    @staticmethod
    def _place_active(
        clients: Mapping[str, ClientState], tasks: list[TaskId], total: int, stateful: bool
    ) -> None:
        """Stateful tasks are balanced among themselves; stateless ones on top of them."""
        placer = BalancedPlacer(
            {pid: c.capacity for pid, c in clients.items()},
            total,
            None if stateful else {pid: len(c.active) for pid, c in clients.items()},
        )

        def preferred(task: TaskId) -> list[str]:
            owners = sorted(
                (pid for pid, c in clients.items() if task in c.previous_active),
                key=lambda pid: (clients[pid].lag_for(task), pid),
            )
            if not stateful:
                return owners
            holders = sorted(
                (pid for pid, c in clients.items() if c.has_state(task) and pid not in owners),
                key=lambda pid: (clients[pid].lag_for(task), pid),
            )
            return owners + holders

        def rank(task: TaskId, pid: str) -> tuple[object, ...]:
            client = clients[pid]
            return (client.lag_for(task), placer.load_after(pid), client.same_subtopology_count(task), pid)

        placer.place(tasks, preferred, rank, on_take=lambda task, pid: clients[pid].active.add(task))

    @staticmethod
    def _move_to_caught_up(
        clients: Mapping[str, ClientState], tasks: list[TaskId], caught_up: Mapping[TaskId, list[str]]
    ) -> list[tuple[TaskId, str]]:
        owner = {task: pid for pid, c in clients.items() for task in c.active}
        destinations: list[tuple[TaskId, str]] = []
        for task in tasks:
            chosen = owner[task]
            candidates = caught_up[task]
            if not candidates or chosen in candidates:
                continue
            source = min(
                candidates,
                key=lambda pid: (
                    task not in clients[pid].previous_active,
                    clients[pid].active_load(),
                    clients[pid].lag_for(task),
                    pid,
                ),
            )
            clients[chosen].active.discard(task)
            clients[source].active.add(task)
            destinations.append((task, chosen))
        return destinations

    def _assign_standbys(
        self,
        clients: Mapping[str, ClientState],
        tasks: list[TaskId],
        destinations: list[tuple[TaskId, str]],
    ) -> int:
        replicas = self.config.num_standby_replicas
        if replicas == 0 or not tasks:
            return 0
        wanted = {(task, pid) for task, pid in destinations}
        capacity = sum(c.capacity for c in clients.values())
        fair_share = {
            pid: math.ceil(len(tasks) * replicas * c.capacity / capacity) for pid, c in clients.items()
        }
        unfilled = 0
        for task in tasks:
            for _ in range(replicas):
                candidates = [
                    pid for pid, c in clients.items() if task not in c.active and task not in c.standby
                ]
                if not candidates:
                    unfilled += 1
                    continue
                chosen = min(
                    candidates,
                    key=lambda pid: (
                        (task, pid) not in wanted,
                        len(clients[pid].standby) >= fair_share[pid],
                        not clients[pid].has_state(task),
                        clients[pid].total_load(),
                        clients[pid].lag_for(task),
                        pid,
                    ),
                )
                clients[chosen].standby.add(task)
        return unfilled
