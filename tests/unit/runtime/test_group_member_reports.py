"""GroupMember without a broker (the in-memory group, polled by the test, no driver thread): what
a member reports while it has not applied its latest assignment, and the follow-up rebalance
of a member whose warm-up caught up."""

from __future__ import annotations

from collections.abc import Mapping

from streams_runtime.processor.internals.assignment import (
    AssignmentInfo,
    AssignorConfig,
    RebalanceRequest,
    SubtopologySources,
    TaskId,
)
from streams_runtime.processor.internals.group_member import GroupMember
from streams_runtime.testing import InMemoryClientSupplier

INPUT = "input"
SUBTOPOLOGIES = [SubtopologySources(0, (INPUT,), stateful=True)]


def _tasks(*partitions: int) -> frozenset[TaskId]:
    return frozenset(TaskId(0, p) for p in partitions)


def _member(supplier: InMemoryClientSupplier, name: str, **kwargs) -> GroupMember:
    member = GroupMember(
        bootstrap_servers="in-memory",
        application_id="app",
        process_id=name,
        subtopologies=SUBTOPOLOGIES,
        client_supplier=supplier,
        **kwargs,
    )
    member.subscribe()
    return member


def _supplier(auto_assign: bool) -> InMemoryClientSupplier:
    supplier = InMemoryClientSupplier(auto_assign=auto_assign)
    supplier.cluster.create_topic(INPUT, 6)
    return supplier


# ---------------------------------------------------------------------------- owned tasks
def test_a_member_reports_the_tasks_of_an_assignment_it_has_not_applied_yet() -> None:
    supplier = _supplier(auto_assign=False)
    member = _member(supplier, "a")
    supplier.group.assign(0, active={"0_0", "0_1"})
    # parked for the next poll: a rejoin now must not report owning nothing
    assert member.subscription_info().active_tasks == _tasks(0, 1)
    member.poll(timeout_ms=0)
    assert member.assignment.active_tasks == _tasks(0, 1)
    supplier.group.assign(0, active={"0_0", "0_2"})
    # 0_1 still runs until the next poll applies the revocation: both are owned meanwhile
    assert member.subscription_info().active_tasks == _tasks(0, 1, 2)
    member.poll(timeout_ms=0)
    assert member.subscription_info().active_tasks == _tasks(0, 2)


def test_a_rebalance_before_a_member_applied_its_assignment_hands_its_tasks_off() -> None:
    """b has its first assignment parked when c joins; the leader must see b as the owner of
    those tasks: whatever moves from b to c is withheld for a hand-off, never given to c while
    b is about to run it."""
    supplier = _supplier(auto_assign=True)
    a, b = _member(supplier, "a"), _member(supplier, "b")
    a.poll(timeout_ms=0)  # the first generation: a applies, b's is parked
    first = supplier.group.history[-1]
    b_tasks = next(info.active_tasks for cid, info in first.items() if cid.endswith("-b"))
    assert len(b_tasks) == 3 and not b.assignment.active_tasks
    _member(supplier, "c")
    a.poll(timeout_ms=0)  # the second generation, b still not polled
    second = supplier.group.history[-1]
    given_to_others = {t for cid, info in second.items() if not cid.endswith("-b") for t in info.active_tasks}
    assert not b_tasks & given_to_others, (sorted(map(str, b_tasks)), second)
    b_second = next(info for cid, info in second.items() if cid.endswith("-b"))
    assert b_second.active_tasks <= b_tasks  # it keeps what it does not hand off (sticky)
    if b_tasks - b_second.active_tasks:
        assert b_second.rebalance is RebalanceRequest.IMMEDIATE  # it revokes, then c gets them


# ---------------------------------------------------------------------------- warm-up follow-up
class _Sources:
    """The member's providers: local offset sums (checkpoints) and changelog end-offset sums."""

    def __init__(self, ends: Mapping[TaskId, int]) -> None:
        self.ends = dict(ends)
        self.sums: dict[TaskId, int] = {}

    def offset_sums(self) -> Mapping[TaskId, int]:
        return dict(self.sums)

    def end_offset_sums(self, tasks: frozenset[TaskId]) -> Mapping[TaskId, int]:
        return {t: self.ends[t] for t in tasks if t in self.ends}


def _with_warmup(supplier: InMemoryClientSupplier, member: GroupMember, warmup: frozenset[TaskId]) -> None:
    info = AssignmentInfo(warmup_tasks=warmup, rebalance=RebalanceRequest.PROBING)
    supplier.group.generation += 1
    supplier.coordination_consumers[0].deliver(info.encode(), supplier.group.generation)
    member.poll(timeout_ms=0)
    assert member.assignment.warmup_tasks == warmup


def test_a_member_rejoins_once_when_a_warm_up_is_within_the_acceptable_lag() -> None:
    supplier = _supplier(auto_assign=False)
    sources = _Sources({TaskId(0, 0): 50_000, TaskId(0, 1): 50_000})
    member = _member(
        supplier,
        "b",
        assignor_config=AssignorConfig(acceptable_recovery_lag=10_000),
        task_offset_sums=sources.offset_sums,
        end_offset_sums=sources.end_offset_sums,
        warmup_check_interval_ms=0,
    )
    coordination = supplier.coordination_consumers[0]
    _with_warmup(supplier, member, _tasks(0, 1))
    member.poll(timeout_ms=0)
    member.poll(timeout_ms=0)
    assert coordination.rejoin_requests == 0  # no state yet: 50,000 behind
    sources.sums = {TaskId(0, 0): 20_000, TaskId(0, 1): 40_001}  # 0_1 is 9,999 behind
    member.poll(timeout_ms=0)  # checks, asks
    member.poll(timeout_ms=0)  # rejoins
    assert member.caught_up_warmups() == _tasks(1)
    assert coordination.rejoin_requests == 1
    for _ in range(3):
        member.poll(timeout_ms=0)
    assert coordination.rejoin_requests == 1  # one follow-up per assignment


def test_without_end_offsets_a_warm_up_waits_for_the_probing_rebalance() -> None:
    supplier = _supplier(auto_assign=False)
    sources = _Sources({})
    sources.sums = {TaskId(0, 0): 10}
    member = _member(
        supplier,
        "b",
        task_offset_sums=sources.offset_sums,
        end_offset_sums=sources.end_offset_sums,
        warmup_check_interval_ms=0,
    )
    _with_warmup(supplier, member, _tasks(0))
    for _ in range(3):
        member.poll(timeout_ms=0)
    assert member.caught_up_warmups() == frozenset()
    assert supplier.coordination_consumers[0].rejoin_requests == 0
