"""GroupMember against the real broker: tasks cover every task once, survive joins and leaves
sticky, never have two owners at once, and user data travels both ways.

Test profile (docs/decisions/0001-embedded-broker.md): Tansu answers a JoinGroup about session.timeout.ms/2
after it arrives, so members use a 2 s session and 200 ms heartbeats; each rebalance costs ~1-2 s. One
scenario (2 members, a third joins, one leaves) runs once per module and its snapshots are
checked by several tests.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics, partition_counts
from streams_runtime.kafka.membership import coordination_group_id
from streams_runtime.processor.internals.assignment import (
    AssignmentInfo,
    AssignorConfig,
    MissingSourceTopicError,
    SourcePartition,
    SubscriptionInfo,
    SubtopologySources,
    TaskId,
)
from streams_runtime.processor.internals.group_member import GroupMember, TaskChange

SESSION_MS = 2_000
STAGE_TIMEOUT = 25.0
# 12 tasks: sub-topology 0 joins two co-partitioned topics (6 tasks), sub-topology 1 reads one (6)
TOPICS = {"orders": 6, "payments": 6, "clicks": 6}
ALL_TASKS = {TaskId(s, p) for s in (0, 1) for p in range(6)}


def _subtopologies(prefix: str, stateful: bool = False) -> list[SubtopologySources]:
    orders, payments, clicks = (f"{prefix}-{t}" for t in TOPICS)
    return [
        SubtopologySources(0, (orders, payments), ((orders, payments),), stateful=stateful),
        SubtopologySources(1, (clicks,), stateful=stateful),
    ]


def _create_topics(bootstrap_servers: str, prefix: str) -> None:
    create_topics(create_admin(bootstrap_servers), [TopicSpec(f"{prefix}-{t}", n) for t, n in TOPICS.items()])


@dataclass
class OwnershipLedger:
    """Who runs each task right now, updated from every member's callback; records double owners."""

    owners: dict[TaskId, str] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def listener(self, member: str) -> Callable[[TaskChange], None]:
        def on_change(change: TaskChange) -> None:
            with self.lock:
                for task in change.revoked_active:
                    self.owners.pop(task, None)
                for task in change.assigned_active:
                    if task in self.owners:
                        self.violations.append(f"{task} given to {member} while {self.owners[task]} runs it")
                    self.owners[task] = member

        return on_change


def _member(bootstrap: str, app: str, name: str, subtopologies, ledger=None, **kwargs) -> GroupMember:
    return GroupMember(
        bootstrap_servers=bootstrap,
        application_id=app,
        process_id=name,
        subtopologies=subtopologies,
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=200,
        on_change=ledger.listener(name) if ledger else None,
        **kwargs,
    )


def _wait_balanced(members: dict[str, GroupMember], per_member: int) -> dict[str, set[TaskId]]:
    for member in members.values():
        member.wait_for(lambda a: len(a.active_tasks) == per_member, STAGE_TIMEOUT)
    return {name: set(m.assignment.active_tasks) for name, m in members.items()}


@dataclass
class Scenario:
    two: dict[str, set[TaskId]]
    three: dict[str, set[TaskId]]
    after_leave: dict[str, set[TaskId]]
    ledger: OwnershipLedger


@pytest.fixture(scope="module")
def scenario(kafka_broker: str) -> Iterator[Scenario]:
    app = f"membership-{uuid.uuid4().hex[:8]}"
    _create_topics(kafka_broker, app)
    subtopologies = _subtopologies(app)
    ledger = OwnershipLedger()
    members = {n: _member(kafka_broker, app, n, subtopologies, ledger) for n in ("m1", "m2")}
    try:
        for m in members.values():
            m.start()
        two = _wait_balanced(members, 6)
        members["m3"] = _member(kafka_broker, app, "m3", subtopologies, ledger).start()
        three = _wait_balanced(members, 4)
        members.pop("m2").close()
        after_leave = _wait_balanced(members, 6)
        yield Scenario(two, three, after_leave, ledger)
    finally:
        for m in members.values():
            m.close()


def _assert_partition_of_all_tasks(assignment: dict[str, set[TaskId]]) -> None:
    everything = [t for tasks in assignment.values() for t in tasks]
    assert len(everything) == len(set(everything)), f"a task is on two members: {assignment}"
    assert set(everything) == ALL_TASKS


def test_two_then_three_members_get_disjoint_tasks_covering_every_task_once(scenario: Scenario) -> None:
    _assert_partition_of_all_tasks(scenario.two)
    _assert_partition_of_all_tasks(scenario.three)


def test_a_joining_member_takes_only_what_balance_requires(scenario: Scenario) -> None:
    assert scenario.three["m1"] <= scenario.two["m1"]
    assert scenario.three["m2"] <= scenario.two["m2"]
    assert len(scenario.three["m3"]) == 4  # 2 from each: the minimum that balances 12 over 3


def test_a_leaving_member_hands_its_tasks_to_the_survivors(scenario: Scenario) -> None:
    _assert_partition_of_all_tasks(scenario.after_leave)
    assert scenario.after_leave["m1"] >= scenario.three["m1"]
    assert scenario.after_leave["m3"] >= scenario.three["m3"]
    assert scenario.after_leave["m1"] | scenario.after_leave["m3"] >= scenario.three["m2"]


def test_no_task_is_ever_run_by_two_members_at_once(scenario: Scenario) -> None:
    assert scenario.ledger.violations == []


def test_user_data_round_trips_both_ways(kafka_broker: str) -> None:
    app = f"membership-ud-{uuid.uuid4().hex[:8]}"
    _create_topics(kafka_broker, app)
    subtopologies = _subtopologies(app, stateful=True)
    seen: list[dict[str, SubscriptionInfo]] = []
    asked_ends: list[frozenset[TaskId]] = []

    def ends(tasks: frozenset[TaskId]) -> dict[TaskId, int]:
        asked_ends.append(tasks)
        return {t: 100 for t in tasks}

    local_state = {TaskId(0, 5): 40}
    members = {
        name: _member(
            kafka_broker,
            app,
            name,
            subtopologies,
            endpoint=f"127.0.0.1:{port}",
            thread_count=2,
            assignor_config=AssignorConfig(num_standby_replicas=1),
            task_offset_sums=lambda: local_state,
            end_offset_sums=ends,
        )
        for name, port in (("p1", 7001), ("p2", 7002))
    }
    for member in members.values():
        original = member.streams_assignor.assign

        def spy(subscriptions, *args, _original=original, **kwargs):
            seen.append(dict(subscriptions))
            return _original(subscriptions, *args, **kwargs)

        member.streams_assignor.assign = spy  # type: ignore[method-assign]
    try:
        for member in members.values():
            member.start()
        # the settled assignment: 6 active and 6 standby tasks, and every host of the map running
        # some (a task moving between members is revoked in one generation and assigned in the
        # next, so a member can hold its final share while the other's is still being handed over)
        infos: dict[str, AssignmentInfo] = {
            name: m.wait_for(
                lambda a: len(a.active_tasks) == 6
                and len(a.standby_tasks) == 6
                and len(a.partitions_by_host) == 2
                and all(a.partitions_by_host.values()),
                STAGE_TIMEOUT,
            )
            for name, m in members.items()
        }
        last = {s.process_id: s for s in seen[-1].values()}  # before a close rebalances the group
    finally:
        for member in members.values():
            member.close()

    # member -> leader: the last assignment saw both members' SubscriptionInfo intact
    assert set(last) == {"p1", "p2"}
    assert last["p1"].endpoint == "127.0.0.1:7001" and last["p1"].thread_count == 2
    assert last["p1"].task_offset_sums[TaskId(0, 5)] in (40, -2)  # its checkpoint, or running it
    assert asked_ends and asked_ends[-1] == frozenset(ALL_TASKS)
    # leader -> member: tasks, standbys and the host map
    p1, p2 = infos["p1"], infos["p2"]
    assert p1.active_tasks | p2.active_tasks == ALL_TASKS
    assert p1.standby_tasks == p2.active_tasks and p2.standby_tasks == p1.active_tasks
    assert set(p1.partitions_by_host) == {"127.0.0.1:7001", "127.0.0.1:7002"}
    assert p1.partitions_by_host == p2.partitions_by_host
    orders_0 = SourcePartition(f"{app}-orders", 0)
    owner = "127.0.0.1:7001" if TaskId(0, 0) in p1.active_tasks else "127.0.0.1:7002"
    assert p1.host_of(orders_0.topic, 0) == owner
    assert (
        orders_0
        in p1.standby_partitions_by_host["127.0.0.1:7002" if owner == "127.0.0.1:7001" else "127.0.0.1:7001"]
    )


def test_coordination_group_is_distinct_from_the_application_id() -> None:
    assert coordination_group_id("orders-app") == "orders-app-coordination"


def test_a_missing_source_topic_fails_the_start_and_is_not_auto_created(kafka_broker: str) -> None:
    app = f"membership-missing-{uuid.uuid4().hex[:8]}"
    create_topics(create_admin(kafka_broker), [TopicSpec(f"{app}-orders", 2)])
    subtopologies = [SubtopologySources(0, (f"{app}-orders", f"{app}-absent"))]
    member = _member(kafka_broker, app, "p1", subtopologies)
    try:
        with pytest.raises(MissingSourceTopicError, match=f"{app}-absent"):
            member.start()
    finally:
        member.close()
    assert f"{app}-absent" not in partition_counts(create_admin(kafka_broker), [f"{app}-absent"])
