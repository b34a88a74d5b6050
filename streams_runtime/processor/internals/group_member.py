"""Group membership for task assignment: one member of an application's coordination group.

The group protocol runs through the coordination consumer of :mod:`streams_runtime.kafka.membership`
(kafka-python, the classic protocol), while every record still flows through confluent-kafka with
manual ``assign()``. A :class:`GroupMember` joins ``<application_id>-coordination`` (not the
application id: input offsets are committed under the application id by non-members, which a
group rejects), carries :class:`SubscriptionInfo` as subscription user data and receives
:class:`AssignmentInfo` as assignment user data, computed on the leader by
:class:`StreamsAssignor`. The member is the coordination consumer's
:class:`~streams_runtime.kafka.membership.GroupAssignor`: the client layer is given it and never
imports this runtime.

It never fetches records: the consumer-protocol assignment it receives names no partitions (the
tasks and their partitions travel in the user data), so kafka-python has nothing to fetch; it
subscribes to the source topics only so the leader sees their partition counts and the group
rebalances when they change.

Threads: kafka-python runs JoinGroup/SyncGroup, heartbeats and the assignor on its own IO
thread. The ``task_offset_sums`` and ``end_offset_sums`` providers are called there (keep them
fast and thread-safe). The change callback runs on the thread that calls :meth:`GroupMember.poll`
(the member's own driver thread after :meth:`GroupMember.start`), never on the IO thread.

Steps of a rebalance, as this member sees it:
  1. JoinGroup: the subscription reports the tasks this member owns (``LATEST_OFFSET``): those
     it runs and those its latest assignment gives it while that is not applied yet (a rejoin
     can start before the next poll applies it; reporting nothing then would let the leader
     give those tasks to another member without a hand-off, and lose their stickiness); then
     the offset sums of its local state, its process id, endpoint and thread count.
  2. The leader's assignor computes every member's AssignmentInfo (tasks moving between members
     are withheld for one generation until their previous owner has revoked them).
  3. SyncGroup delivers this member's AssignmentInfo on the IO thread; it is parked as pending.
  4. The next ``poll`` delivers the difference from the previous assignment to the callback
     (revoked tasks first, then assigned), and only then records it as what the member runs.
  5. If the assignment asks for it, the member rejoins soon (a hand-off is pending: after
     ``handoff_rejoin_delay_ms``) or after ``probing_rebalance_interval_ms`` (warm-ups).
  6. Follow-up for warm-ups: while the applied assignment gives this member warm-ups, every
     ``warmup_check_interval_ms`` it computes their lags as the leader would (local offset sums
     against the changelog end-offset sums, :func:`compute_task_lags`); once one is within
     ``acceptable_recovery_lag`` it rejoins at once (one follow-up per assignment), so the task
     moves without waiting for the probing rebalance. Without end offsets it does not check.
Closing revokes every task through the callback, finishes a rebalance this member is in the
middle of (joined, not yet synced: bounded by the session timeout), then leaves the group (no
session wait) -- unless it is the group's leader: Tansu keeps a leader that leaves while the
group is rebalancing (another member left or joined just before) as the leader of the forming
generation, so no one computes the assignment again and every later SyncGroup fails with
REBALANCE_IN_PROGRESS, forever. A leader therefore closes without LeaveGroup and the group drops
it when its session expires (Tansu clears the leader on that path), as Kafka Streams' members
never leave on close anyway.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.client_supplier import CoordinationClient, KafkaClientSupplier
from streams_runtime.kafka.membership import (
    coordination_group_id,
    describe_coordination_group,
    is_transient_group_error,
)
from streams_runtime.kafka.outage import broker_outage
from streams_runtime.processor.internals.assignment import (
    LATEST_OFFSET,
    UNKNOWN_LAG,
    AssignmentInfo,
    AssignmentProtocolError,
    AssignorConfig,
    AssignorError,
    MissingSourceTopicError,
    RebalanceRequest,
    StreamsAssignor,
    SubscriptionInfo,
    SubtopologySources,
    TaskId,
    all_source_topics,
    compute_task_lags,
)
from streams_runtime.processor.internals.assignment.partition_grouper import partition_groups, stateful_tasks
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskChange:
    """One delivered change of a member's assignment (revoke ``revoked_*`` before opening ``assigned_*``)."""

    generation: int
    previous: AssignmentInfo
    current: AssignmentInfo
    lost: bool = False

    @property
    def revoked_active(self) -> frozenset[TaskId]:
        return self.previous.active_tasks - self.current.active_tasks

    @property
    def assigned_active(self) -> frozenset[TaskId]:
        return self.current.active_tasks - self.previous.active_tasks

    @property
    def revoked_standby(self) -> frozenset[TaskId]:
        return self.previous.replica_tasks - self.current.replica_tasks

    @property
    def assigned_standby(self) -> frozenset[TaskId]:
        return self.current.replica_tasks - self.previous.replica_tasks


class GroupMember:
    """One member of an application's coordination group (see the module docstring).

    Owned by whoever runs it (a StreamThread, or a KafkaStreams client for all its threads);
    call :meth:`start` for a driver thread, or :meth:`poll` from your own loop, then :meth:`close`.

    :param process_id: the instance this member belongs to (members of one process share state).
    :param subtopologies: the topology's sub-topologies, identical on every member.
    :param thread_count: how many stream threads this member stands for.
    :param endpoint: ``host:port`` of the instance's query server, or ``None``.
    :param task_offset_sums: returns offset sums of local state (checkpoints), task -> sum.
    :param end_offset_sums: on the leader, returns the changelog end-offset sums of the given
        stateful tasks (true ends, docs/decisions/0001-embedded-broker.md); without it, lags are
        relative to the best reported state.
    :param on_change: called with each :class:`TaskChange`, on the polling thread.
    :param handoff_rejoin_delay_ms: how long a member that revoked tasks for a hand-off waits
        before rejoining; default ``session_timeout_ms / 2``. Tansu answers a follower's
        SyncGroup up to about that late, and a rejoin before then makes the follower's sync fail
        and cost a whole extra round; on Apache Kafka 0 is safe.
    :param warmup_check_interval_ms: how often a member with warm-ups checks whether one is
        caught up (Step 6).
    :param overrides: kafka-python settings that win over the shared profile and the defaults.
    :param client_supplier: makes the coordination consumer (kafka-python's by default; an
        in-memory group in tests).
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str,
        application_id: str,
        process_id: str,
        subtopologies: Sequence[SubtopologySources],
        thread_count: int = 1,
        endpoint: str | None = None,
        assignor_config: AssignorConfig | None = None,
        task_offset_sums: Callable[[], Mapping[TaskId, int]] | None = None,
        end_offset_sums: Callable[[frozenset[TaskId]], Mapping[TaskId, int]] | None = None,
        on_change: Callable[[TaskChange], None] | None = None,
        session_timeout_ms: int = 10_000,
        heartbeat_interval_ms: int = 1_000,
        probing_rebalance_interval_ms: int = 600_000,
        handoff_rejoin_delay_ms: int | None = None,
        warmup_check_interval_ms: int = 5_000,
        overrides: Mapping[str, Any] | None = None,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
    ) -> None:
        self.group_id = coordination_group_id(application_id)
        self.process_id = process_id
        self.thread_count = thread_count
        self.endpoint = endpoint
        self.subtopologies = tuple(subtopologies)
        self.source_topics = sorted(all_source_topics(self.subtopologies))
        self.streams_assignor = StreamsAssignor(self.subtopologies, assignor_config)
        self.probing_rebalance_interval_ms = probing_rebalance_interval_ms
        self.handoff_rejoin_delay_ms = (
            session_timeout_ms // 2 if handoff_rejoin_delay_ms is None else handoff_rejoin_delay_ms
        )
        self.warmup_check_interval_ms = warmup_check_interval_ms
        SubscriptionInfo(process_id, endpoint, {}, thread_count)  # validate early, in the caller
        self._task_offset_sums = task_offset_sums
        self._end_offset_sums = end_offset_sums
        self._on_change = on_change
        self._lock = threading.Condition()
        self._current = AssignmentInfo()
        self._generation = -1
        self._pending: tuple[int, AssignmentInfo] | None = None
        self._rejoin_requested = False
        self._rejoin_deadline: float | None = None
        self._warmup_check_at: float | None = None  # Step 6: next check, None when none is due
        self._new_subtopologies: tuple[SubtopologySources, ...] | None = None
        self._driver: threading.Thread | None = None
        self._stopping = threading.Event()
        self._session_timeout_ms = session_timeout_ms
        self.driver_error: BaseException | None = None
        #: reported in every later subscription once :meth:`request_shutdown` was called
        self.shutdown_requested = False
        self._consumer: CoordinationClient = client_supplier.get_coordination_consumer(
            bootstrap_servers=bootstrap_servers,
            group_id=self.group_id,
            client_id=f"{self.group_id}-{process_id}",
            assignor=self,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            overrides=overrides,
        )

    # -- what the member reports and holds ---------------------------------------------------

    def subscription_info(self) -> SubscriptionInfo:
        """This member's SubscriptionInfo now: local offset sums, and LATEST for what it owns (Step 1)."""
        sums = dict(self._task_offset_sums() if self._task_offset_sums else {})
        sums.update({task: LATEST_OFFSET for task in self.owned_active_tasks()})
        return SubscriptionInfo(
            self.process_id,
            self.endpoint,
            sums,
            self.thread_count,
            shutdown_requested=self.shutdown_requested,
        )

    def owned_active_tasks(self) -> frozenset[TaskId]:
        """The active tasks this member runs, plus those its latest assignment gives it while that
        is not applied yet (Step 1)."""
        with self._lock:
            owned = self._current.active_tasks
            if self._pending is not None:
                owned = owned | self._pending[1].active_tasks
            return owned

    @property
    def assignment(self) -> AssignmentInfo:
        """The assignment this member has delivered to its callback (what it runs now)."""
        with self._lock:
            return self._current

    @property
    def generation(self) -> int:
        with self._lock:
            return self._generation

    def end_offsets_for(self, partition_counts: Mapping[str, int]) -> Mapping[TaskId, int] | None:
        """Leader side: ask the end-offset provider about the stateful tasks, if there is one."""
        if self._end_offset_sums is None:
            return None
        try:
            tasks = partition_groups(self.subtopologies, partition_counts)
        except StreamsError:  # missing topics or a co-partitioning mismatch: the assignor reports it
            return None
        try:
            return self._end_offset_sums(stateful_tasks(self.subtopologies, tasks))
        except Exception:  # a failing provider must not fail the rebalance: fall back to relative lags
            log.exception("end_offset_sums provider failed; lags are relative to the best reported state")
            return None

    # -- the coordination consumer's GroupAssignor (kafka-python's IO thread) -------------------

    def subscription_user_data(self) -> bytes:
        """Step 1: the encoded :meth:`subscription_info`."""
        return self.subscription_info().encode()

    def assign_user_data(
        self, member_user_data: Mapping[str, bytes], partition_counts: Mapping[str, int]
    ) -> Mapping[str, bytes]:
        """Step 2 (leader): every member's encoded AssignmentInfo, from :class:`StreamsAssignor`."""
        return self.streams_assignor.assign_user_data(
            member_user_data, partition_counts, self.end_offsets_for(partition_counts)
        )

    def on_sync(self, user_data: bytes | None, generation: int) -> None:
        """IO thread, Step 3: park the decoded assignment for the next poll."""
        try:
            info = AssignmentInfo.decode(bytes(user_data or b""))
        except AssignmentProtocolError as exc:
            info = AssignmentInfo(error=AssignorError.UNDECODABLE_ASSIGNMENT, error_message=str(exc))
        with self._lock:
            self._pending = (generation, info)

    # -- driving the protocol ------------------------------------------------------------------

    def start(self) -> GroupMember:
        """Subscribe and run a driver thread that polls until :meth:`close`."""
        self.subscribe()
        self._driver = threading.Thread(target=self._drive, name=f"{self.group_id}-member", daemon=True)
        self._driver.start()
        return self

    def subscribe(self) -> None:
        """Subscribe to the source topics once they all exist, so the first join sees their counts.

        Existence is checked with an all-topics metadata request: Tansu auto-creates (with 4
        partitions) a topic named in a metadata request even when auto-creation is disallowed.

        :raises MissingSourceTopicError: naming the source topics that do not exist.
        """
        missing = sorted(set(self.source_topics) - set(self._consumer.topics()))
        if missing:
            raise MissingSourceTopicError(f"source topics of {self.group_id} do not exist: {missing}")
        self._consumer.subscribe(self.source_topics)

    def update_subtopologies(self, subtopologies: Sequence[SubtopologySources]) -> None:
        """The source topics changed (a source by topic pattern gained topics): at the next poll,
        subscribe to them, assign with them when leading, and rejoin so the group rebalances."""
        with self._lock:
            self._new_subtopologies = tuple(subtopologies)

    def _apply_new_subtopologies(self) -> None:
        with self._lock:
            new, self._new_subtopologies = self._new_subtopologies, None
        if new is None:
            return
        self.subtopologies = new
        self.source_topics = sorted(all_source_topics(new))
        self.streams_assignor.subtopologies = tuple(sorted(new, key=lambda s: s.subtopology))
        self._consumer.subscribe(self.source_topics)
        self._consumer.topics()  # refreshes the metadata: the leader sees the new partition counts
        self._rejoin_requested = True

    def poll(self, timeout_ms: int = 100) -> TaskChange | None:
        """Drive the group protocol once; deliver a pending assignment change (Steps 4 and 5)."""
        self._apply_new_subtopologies()
        if self._rejoin_requested or (
            self._rejoin_deadline is not None and time.monotonic() >= self._rejoin_deadline
        ):
            self._rejoin_requested = False
            self._rejoin_deadline = None
            self._consumer.request_rejoin()
        self._consumer.poll(timeout_ms=timeout_ms)
        change = self._take_pending() or self._detect_lost()
        if change is None:
            self._check_warmups()
            return None
        if change.current.error is not AssignorError.NONE:
            log.error("assignment error %s: %s", change.current.error.name, change.current.error_message)
        # Step 4
        if self._on_change is not None:
            self._on_change(change)
        with self._lock:
            self._current = change.current
            self._generation = change.generation
            self._lock.notify_all()
        # Step 6
        self._warmup_check_at = (
            time.monotonic() + self.warmup_check_interval_ms / 1000
            if change.current.warmup_tasks and self._end_offset_sums is not None
            else None
        )
        # Step 5
        if change.current.rebalance is RebalanceRequest.IMMEDIATE:
            self._rejoin_deadline = time.monotonic() + self.handoff_rejoin_delay_ms / 1000
        elif change.current.rebalance is RebalanceRequest.PROBING:
            self._rejoin_deadline = time.monotonic() + self.probing_rebalance_interval_ms / 1000
        else:  # the latest assignment needs no follow-up, whatever an earlier one asked
            self._rejoin_deadline = None
        return change

    def _check_warmups(self) -> None:
        """Step 6: rejoin once a warm-up of the applied assignment is within the acceptable lag."""
        if self._warmup_check_at is None or time.monotonic() < self._warmup_check_at:
            return
        self._warmup_check_at = time.monotonic() + self.warmup_check_interval_ms / 1000
        caught_up = self.caught_up_warmups()
        if caught_up:
            log.info(
                "warm-up task(s) %s caught up; rejoining for a follow-up rebalance",
                sorted(map(str, caught_up)),
            )
            self._warmup_check_at = None
            self.request_rebalance()

    def caught_up_warmups(self) -> frozenset[TaskId]:
        """The warm-up tasks of the applied assignment whose lag, computed as the leader does, is
        within ``acceptable_recovery_lag`` (empty without an end-offset provider)."""
        warmups = self.assignment.warmup_tasks
        if not warmups or self._end_offset_sums is None:
            return frozenset()
        try:
            ends = self._end_offset_sums(warmups)
        except Exception:  # no ends, no check: the probing rebalance still comes
            log.exception("end_offset_sums provider failed; warm-ups wait for the probing rebalance")
            return frozenset()
        local = self._task_offset_sums() if self._task_offset_sums else {}
        sums = {t: s for t, s in local.items() if t in warmups}
        known = frozenset(t for t in warmups if t in ends)
        lags = compute_task_lags({self.process_id: sums}, known, known, ends)[self.process_id]
        limit = self.streams_assignor.config.acceptable_recovery_lag
        return frozenset(t for t in known if lags.get(t, UNKNOWN_LAG) <= limit)

    def request_rebalance(self) -> None:
        """Rejoin at the next poll (thread count changed, a warm-up caught up early, ...)."""
        self._rejoin_requested = True

    @property
    def driving(self) -> bool:
        """The driver thread of :meth:`start` is polling."""
        return self._driver is not None and self._driver.is_alive()

    def request_shutdown(self, timeout: float) -> bool:
        """Ask every member of the group to shut down (SHUTDOWN_APPLICATION): rejoin with the
        shutdown flag in the subscription; True once the leader's answer was delivered here
        within ``timeout`` s. Needs the driver thread (:meth:`start`) or someone polling."""
        self.shutdown_requested = True
        self.request_rebalance()
        try:
            self.wait_for(lambda info: info.error is AssignorError.SHUTDOWN_APPLICATION, timeout)
        except TimeoutError:
            return False
        return True

    def wait_for(self, predicate: Callable[[AssignmentInfo], bool], timeout: float) -> AssignmentInfo:
        """Block until the delivered assignment satisfies ``predicate``; raise TimeoutError otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: predicate(self._current), timeout):
                raise TimeoutError(f"no matching assignment within {timeout}s; have {self._current}")
            return self._current

    def close(self, timeout: float = 10.0) -> None:
        """Stop the driver, revoke every task through the callback, then leave the group."""
        self._stopping.set()
        if self._driver is not None:
            self._driver.join(timeout)
        with self._lock:
            previous, generation = self._current, self._generation
        if previous.active_tasks or previous.replica_tasks:
            change = TaskChange(generation, previous, AssignmentInfo())
            if self._on_change is not None:
                self._on_change(change)
        with self._lock:
            self._current = AssignmentInfo()
            self._lock.notify_all()
        self._finish_rebalance(min(timeout, self._session_timeout_ms / 1000))
        if self._consumer.is_leader():
            self._consumer.close_without_leaving(timeout_ms=int(timeout * 1000))
        else:
            self._consumer.close(autocommit=False, timeout_ms=int(timeout * 1000))

    def _finish_rebalance(self, timeout: float) -> None:
        """Before leaving: complete a join this member is in (see the module docstring); the
        assignment it brings is parked and dropped (nothing is delivered after close)."""
        deadline = time.monotonic() + timeout
        while self._consumer.rebalancing() and time.monotonic() < deadline:
            self._consumer.poll(timeout_ms=50)
        with self._lock:
            self._pending = None

    def _drive(self) -> None:
        """Poll until :meth:`close`. A broker outage (connection lost, a request timed out, the
        coordinator unknown: kafka-python's retriable errors) is ridden out: logged
        once per outage (``broker_outage``) and polled again after a short pause; once the broker
        answers, the member rejoins (its tasks are revoked as lost if the group dropped it
        meanwhile). Any other error stops the driver and is surfaced through ``driver_error``."""
        try:
            while not self._stopping.is_set():
                try:
                    self.poll(timeout_ms=100)
                except Exception as exc:
                    if not is_transient_group_error(exc):
                        raise
                    broker_outage().unreachable(f"group member of {self.group_id}: {exc!r}")
                    self._stopping.wait(0.5)
        except BaseException as exc:  # surfaced through driver_error; the owner decides what to do
            log.exception("group member driver of %s stopped", self.group_id)
            self.driver_error = exc

    def _take_pending(self) -> TaskChange | None:
        with self._lock:
            if self._pending is None:
                return None
            (generation, info), self._pending = self._pending, None
            return TaskChange(generation, self._current, info)

    def _detect_lost(self) -> TaskChange | None:
        """The group dropped this member (session expired): everything it ran is lost."""
        with self._lock:
            current, generation = self._current, self._generation
        if generation < 0 or not (current.active_tasks or current.replica_tasks):
            return None
        if self._consumer.group_metadata().generation_id >= 0:
            return None
        log.warning("member of %s lost its membership; revoking its tasks as lost", self.group_id)
        return TaskChange(-1, current, AssignmentInfo(), lost=True)


# -- reading the group from outside (status and reset tools) ---------------------------------


@dataclass(frozen=True)
class GroupMemberDescription:
    """One member of an application's coordination group, as DescribeGroups reports it.

    ``subscription_known`` says whether the broker returned the member's subscription (Apache
    Kafka does, Tansu does not): only then does ``endpoint`` None mean that the member has no
    ``application_server`` configured, rather than that the broker did not say.
    """

    member_id: str
    client_id: str
    client_host: str
    process_id: str | None
    endpoint: str | None
    thread_count: int
    subscription_known: bool = False


def describe_application_members(
    bootstrap_servers: str, application_id: str, timeout: float = 10.0
) -> tuple[str, list[GroupMemberDescription]]:
    """The coordination group's state (``Empty``, ``Stable``, ``Dead``...) and its members, each
    with the process id, endpoint and thread count from its subscription's user data."""
    state, members = describe_coordination_group(bootstrap_servers, application_id, timeout)
    return state, [member_description(member) for member in members]


def member_description(member: Mapping[str, Any]) -> GroupMemberDescription:
    """One DescribeGroups member (kafka-python's dict) with its SubscriptionInfo decoded when the
    broker returned the subscription (Tansu returns none: process id then from the member id)."""
    metadata = member.get("member_metadata")
    user_data = (
        metadata.get("user_data") if isinstance(metadata, Mapping) else getattr(metadata, "user_data", None)
    )
    info = None
    if user_data:
        try:
            info = SubscriptionInfo.decode(bytes(user_data))
        except AssignmentProtocolError:
            info = None
    member_id = member.get("member_id", "")
    process_id = info.process_id if info else None
    if process_id is None:  # the client id is "<group>-<process id>", the member id that plus "-<uuid>"
        match = re.search(r"-coordination-([0-9a-f-]{36})-[0-9a-f-]{36}$", member_id)
        process_id = match.group(1) if match else None
    return GroupMemberDescription(
        member_id=member_id,
        client_id=member.get("client_id", ""),
        client_host=member.get("client_host", ""),
        process_id=process_id,
        endpoint=info.endpoint if info else None,
        thread_count=info.thread_count if info else 0,
        subscription_known=info is not None,
    )
