"""StreamThread: one Python thread running poll, restore, process, punctuate, commit.

Created and owned by a KafkaStreams client. Every Kafka client of the thread is made by the
client's KafkaClientSupplier (``runtime.client_supplier``: the real clients by default, in-memory
ones in tests). Each thread owns one consumer (manual
``assign()``, ``group.id = application_id`` so input offsets are committed there; read_committed
under exactly-once), one producer side (``create_record_collector``: one collector per task, one
shared producer; under exactly-once one transactional producer per task), one
StoreChangelogReader (its restore consumer), one record cache and a TaskManager; it is one member
of the coordination group through a GroupMember (docs/decisions/0002-membership-and-data-path.md).

Lifecycle (the edges in ``_TRANSITIONS``; any other transition raises)::

    CREATED --start--> STARTING --first assignment--> PARTITIONS_ASSIGNED <--rebalance--+
       |                  |                             | (all tasks restored)          |
       |                  |                             v                               |
       |                  |                          RUNNING ---------------------------+
       |                  |                             |
       +------------------+------- shutdown / error ----+--> PENDING_SHUTDOWN --> DEAD

Membership: the GroupMember runs its own driver thread (kafka-python's join, sync and heartbeat
never wait on processing). A delivered TaskChange is handed to this thread, which applies it at
the top of its next loop iteration; the driver waits until it is applied, so the member never
reports as revoked a task this thread still runs.

Loop, one iteration:
  1. apply a pending assignment change (revoked tasks: commit, close; assigned: create);
  2. one restore step while tasks restore or wait for a state directory lock held by their
     previous owner (retried each loop; RESTORING tasks become RUNNING); otherwise, with standby
     tasks, one non-blocking standby step (their changelogs replay after active restoration);
  3. take the records the consumer holds, up to a batch, without waiting; with none, wait up to
     ``poll_ms`` for the first record only (then take what else is there), so no record waits
     for a timer while input arrives; hand them to their tasks' queues (at-least-once, with
     repartition input: a :class:`~.gap_guard.RepartitionGapGuard` first re-reads repartition
     offsets a fetch passed over; then, unless ``source_partitioning_check`` is ``off``, a
     :class:`~.partitioning_check.SourcePartitioningCheck` counts and reports keyed records that
     are not where Kafka's default partitioner puts them, run by run as the batch is cut for the
     queues); a change that came while polling is
     applied first (a member that lost its tasks to the group processes none of their records:
     seen on a 3-node cluster, a thread whose fetch had stalled processed a batch of a task the
     group had given to another instance, and its stale counts landed after the new owner's);
  4. process every buffered record of every processable task, punctuating on stream time;
  5. punctuate on wall-clock time; serve the producer's delivery reports (once);
  6. commit when ``commit_interval_ms`` has passed or a processor asked for it; standby tasks
     write their checkpoints at the same time.
An exception anywhere ends the loop: tasks are closed dirty (not committed) and the client's
uncaught-exception policy is applied to :attr:`StreamThread.error` (``on_error``, on this thread,
before it leaves the group). If the policy is SHUTDOWN_APPLICATION, the thread's GroupMember first
rejoins with the shutdown flag, so the leader tells every member of the application to shut down;
a thread that receives that assignment stops with :class:`ApplicationShutdownRequestedError`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from streams_runtime.brokers.tansu import RepartitionGapGuard
from streams_runtime.errors import ApplicationShutdownRequestedError, StreamsError
from streams_runtime.processor.internals.group_member import GroupMember, TaskChange
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.partitioning_check import SourcePartitioningCheck
from streams_runtime.processor.internals.producer_side import create_record_collector
from streams_runtime.processor.internals.task_manager import TaskManager
from streams_runtime.processor.internals.thread_metrics import ThreadMetrics

if TYPE_CHECKING:  # the setup module imports the thread's collaborators
    from streams_runtime.processor.internals.assignment import AssignmentInfo
    from streams_runtime.processor.internals.runtime_setup import RuntimeSetup

log = logging.getLogger("streams_runtime.processor")

CREATED, STARTING, PARTITIONS_ASSIGNED, RUNNING = "CREATED", "STARTING", "PARTITIONS_ASSIGNED", "RUNNING"
PENDING_SHUTDOWN, DEAD = "PENDING_SHUTDOWN", "DEAD"
_TRANSITIONS = {
    CREATED: {STARTING, PENDING_SHUTDOWN},
    STARTING: {PARTITIONS_ASSIGNED, PENDING_SHUTDOWN},
    PARTITIONS_ASSIGNED: {PARTITIONS_ASSIGNED, RUNNING, PENDING_SHUTDOWN},
    RUNNING: {PARTITIONS_ASSIGNED, PENDING_SHUTDOWN},
    PENDING_SHUTDOWN: {DEAD},
    DEAD: set(),
}
CONSUME_BATCH = 2000
#: a thread that processed fewer records than this since it last ran out of input is lightly
#: loaded: when it runs out again, its producer sends at once instead of lingering
SEND_NOW_BELOW = 500
#: how long a failed thread waits for the group to answer its application-shutdown request
SHUTDOWN_REQUEST_TIMEOUT_S = 10.0


class StreamThread(threading.Thread):
    """See the module docstring. ``runtime`` is the client's shared, read-only setup."""

    def __init__(
        self,
        runtime: RuntimeSetup,
        index: int,
        on_state: Callable[[StreamThread, str, str], None],
        on_death: Callable[[StreamThread], None],
        on_error: Callable[[StreamThread, BaseException], bool] | None = None,
    ) -> None:
        super().__init__(name=f"{runtime.client_id}-StreamThread-{index}", daemon=True)
        self.index = index
        self.state = CREATED
        self.error: BaseException | None = None
        self.active_tasks: dict[Any, tuple[tuple[str, int], ...]] = {}
        #: standby and warm-up tasks created on this thread -> their input partitions (not consumed)
        self.standby_tasks: dict[Any, tuple[tuple[str, int], ...]] = {}
        self._runtime = runtime
        self._on_state = on_state
        self._on_death = on_death
        #: the client's policy for this thread's error; True means shut the whole application down
        self._on_error = on_error
        self._state_lock = threading.Lock()
        self._stop_requested = threading.Event()
        self._changes: deque[tuple[TaskChange, threading.Event]] = deque()
        #: held by the loop while it touches tasks and stores (everything but the consumer's wait):
        #: interactive queries read stores (and their record caches) under it
        self.query_lock = threading.RLock()
        self._requests: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        #: thread-level sensors (recorded once per loop iteration) and the tasks' registry
        self.metrics = ThreadMetrics(self.name)
        self.streams_metrics = StreamsMetrics()

    # ------------------------------------------------------------------ state
    def _set_state(self, target: str) -> None:
        with self._state_lock:
            old = self.state
            if target not in _TRANSITIONS[old]:
                raise StreamsError(f"stream thread {self.name}: illegal transition {old} -> {target}")
            self.state = target
        self._on_state(self, old, target)

    def is_alive_member(self) -> bool:
        return self.state not in (PENDING_SHUTDOWN, DEAD)

    @property
    def task_manager(self) -> TaskManager | None:
        """This thread's TaskManager (None before the thread set up); change it only from functions
        run through :meth:`submit`, on this thread; other threads may read it under :attr:`query_lock`
        (interactive queries, metrics)."""
        return getattr(self, "_tasks", None)

    @property
    def assignment(self) -> AssignmentInfo | None:
        """The AssignmentInfo this thread's member applied last (host maps for queries), or None."""
        member = getattr(self, "_member", None)
        return member.assignment if member is not None else None

    def shutdown(self) -> None:
        """Ask the loop to stop; :meth:`join` waits for it."""
        self._stop_requested.set()

    # ------------------------------------------------------------------ membership hand-over
    def _on_change(self, change: TaskChange) -> None:
        """Called by the GroupMember: on this thread when closing, else on the member's driver."""
        if threading.current_thread() is self:
            self._apply(change)
            return
        applied = threading.Event()
        self._changes.append((change, applied))
        while not applied.wait(0.05):
            if self._stop_requested.is_set() or not self.is_alive():
                return

    def _apply_changes(self) -> None:
        """Step 1: apply the changes the member handed over, oldest first (under the query lock)."""
        changes = self._changes
        while changes:
            change, applied = changes.popleft()
            try:
                self._apply(change)
            finally:
                applied.set()

    def _apply(self, change: TaskChange) -> None:
        """Step 1, one change."""
        if change.current.error.name != "NONE":
            current = change.current
            if current.error.name == "SHUTDOWN_APPLICATION":
                raise ApplicationShutdownRequestedError(current.error_message)
            raise StreamsError(f"assignment failed: {current.error.name}: {current.error_message}")
        clean = not change.lost and self.error is None
        self._tasks.handle_assignment(
            change.revoked_active,
            change.assigned_active,
            clean=clean,
            revoked_standby=change.revoked_standby,
            assigned_standby=change.assigned_standby,
        )
        self._publish_tasks()
        if self.state in (STARTING, PARTITIONS_ASSIGNED, RUNNING):
            self._set_state(PARTITIONS_ASSIGNED)

    def _publish_tasks(self) -> None:
        """The task metadata read by other threads: the tasks created (restoring or running)."""
        self.active_tasks = {t: tuple(self._tasks.partitions_of(t)) for t in self._tasks.tasks}
        self.standby_tasks = {t: tuple(self._tasks.partitions_of(t)) for t in self._tasks.standby_tasks}

    # ------------------------------------------------------------------ work from other threads
    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        """Run ``fn()`` on this thread at the top of its next loop iteration (it may touch the
        TaskManager, as ``fn`` closes over ``self``); the Future carries its result or error, or
        a StreamsError if the thread stops first."""
        future: Future[Any] = Future()
        if not self.is_alive_member():
            future.set_exception(StreamsError(f"stream thread {self.name} is {self.state}"))
            return future
        self._requests.append((fn, future))
        return future

    @staticmethod
    def _serve(fn: Callable[[], Any], future: Future[Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # the caller decides; the thread goes on
            future.set_exception(exc)

    # ------------------------------------------------------------------ setup and loop
    def _setup(self) -> None:
        rt = self._runtime
        config = rt.config
        supplier = rt.client_supplier
        overrides = {**config.client_configs("consumer."), **config.client_configs("main_consumer.")}
        self._consumer = supplier.get_consumer(
            rt.bootstrap_servers,
            config.required_application_id(),
            {"client.id": f"{self.name}-consumer", **overrides},
            read_committed=config.processing_guarantee == "exactly_once_v2",
        )
        # at-least-once with repartition input: re-read offsets a fetch passed over (see gap_guard)
        self._gap_guard = RepartitionGapGuard.for_runtime(rt, overrides, self.streams_metrics)
        if self._gap_guard is not None:
            self._consumer = self._gap_guard.watch(self._consumer)
        # keyed input records where Kafka's default partitioner puts them (see partitioning_check)
        self._partitioning = SourcePartitioningCheck.for_runtime(rt, self.streams_metrics)
        # at-least-once: one shared producer; exactly-once: one transactional producer per task
        self._collector = create_record_collector(
            config, rt.bootstrap_servers, f"{self.name}-producer", rt.changelog_topics, supplier
        )
        self._reader = rt.new_changelog_reader()
        self._tasks = TaskManager(
            builder=rt.builder,
            subtopologies=rt.subtopologies,
            partition_counts=rt.partition_counts,
            config=config,
            consumer=self._consumer,
            collector=self._collector,
            metrics=self.streams_metrics,
            cache=rt.new_cache(),
            wall_clock=_wall_clock_ms,
            state_directory=rt.state_directory,
            changelog_reader=self._reader,
            global_stores=rt.global_stores,
        )
        self._member = GroupMember(
            bootstrap_servers=rt.bootstrap_servers,
            application_id=config.required_application_id(),
            process_id=rt.process_id,
            subtopologies=rt.subtopology_sources,
            thread_count=1,
            endpoint=config.application_server or None,
            task_offset_sums=rt.task_offset_sums,
            on_change=self._on_change,
            client_supplier=supplier,
            **rt.member_settings,
        )
        self._tasks.on_task_migrated = self._member.request_rebalance  # exactly-once: fenced task

    def run(self) -> None:
        try:
            self._set_state(STARTING)
            self._setup()
            self._member.start()
            self._loop()
        except BaseException as exc:  # the client's uncaught-exception policy decides
            self.error = exc
            log.error("stream thread %s failed: %s: %s", self.name, type(exc).__name__, exc)
            self._request_shutdown_if_asked(exc)
        finally:
            self._shutdown()

    def _loop(self) -> None:
        config = self._runtime.config
        commit_interval = config.commit_interval_ms
        poll_s = config.poll_ms / 1000
        tasks, collector, consume = self._tasks, self._collector, self._consumer.consume
        changes, member = self._changes, self._member
        last_commit = _wall_clock_ms()
        query_lock, requests = self.query_lock, self._requests
        metrics, consumer, perf_counter = self.metrics, self._consumer, time.perf_counter
        runtime, pattern_version = self._runtime, self._runtime.pattern_version
        gap_guard, partitioning = self._gap_guard, self._partitioning
        check_run = partitioning.check_run if partitioning is not None else None  # per run of a batch
        unsent = 0  # records processed since the thread last ran out of input
        while not self._stop_requested.is_set():
            if runtime.refresh_pattern_sources() != pattern_version:  # a pattern source gained topics
                with query_lock:
                    pattern_version = self._rebind_sources()
            with query_lock:
                if changes:  # Step 1
                    self._apply_changes()
                while requests:
                    self._serve(*requests.popleft())
                if member.driver_error is not None:
                    raise StreamsError(
                        f"group membership failed: {member.driver_error}"
                    ) from member.driver_error
                if tasks.restoring:  # Step 2
                    if tasks.restore(0.01):
                        self._publish_tasks()
                else:
                    if self.state == PARTITIONS_ASSIGNED:
                        self._set_state(RUNNING)
                    if tasks.has_standbys and tasks.restore(0.0):  # Step 2, standbys
                        self._publish_tasks()
            started = perf_counter()
            messages = consume(CONSUME_BATCH, 0.0)  # Step 3
            if not messages:
                if 0 < unsent < SEND_NOW_BELOW:  # lightly loaded and out of input: what the last
                    collector.send_now()  # records produced leaves now, not after the linger
                unsent = 0  # (record_collector's module docstring)
                messages = self._await_input(0.0 if tasks.reading_changelogs else poll_s)
            polled = perf_counter()
            with query_lock:
                if changes:  # Step 1 again: a change that came while polling (a member that lost
                    # its tasks to the group) is applied before any record is processed
                    self._apply_changes()
                if messages:
                    if gap_guard is not None:
                        messages = gap_guard.check(messages)
                    tasks.add_records(messages, check_run)
                now = _wall_clock_ms()
                processed = tasks.process(now)  # Step 4
                unsent += processed
                metrics.record_iteration(polled - started, len(messages), perf_counter() - polled, processed)
                tasks.punctuate()  # Step 5
                collector.poll()
                if now - last_commit >= commit_interval or tasks.commit_requested():  # Step 6
                    committing = perf_counter()
                    tasks.commit()
                    tasks.checkpoint_standbys()
                    metrics.record_commit(perf_counter() - committing)
                    last_commit = now
                metrics.maybe_refresh_lag(now, consumer, consumer.assignment)

    def _await_input(self, timeout_s: float) -> list[Any]:
        """Step 3 with nothing buffered: wait up to ``timeout_s`` for the first record only
        (``consume`` of a batch would wait for the whole timeout at low rates), then take what
        else the consumer holds by then."""
        messages: list[Any] = self._consumer.consume(1, timeout_s)
        if messages:
            messages.extend(self._consumer.consume(CONSUME_BATCH - 1, 0.0))
        return messages

    def _rebind_sources(self) -> int:
        """Recreate the tasks whose source topics changed and rejoin the group (see pattern_sources)."""
        rt = self._runtime
        version, subtopologies = rt.pattern_version, rt.subtopologies
        log.info("stream thread %s: sources by topic pattern gained topics; rebalancing", self.name)
        self._tasks.rebind_sources(subtopologies, rt.partition_counts)
        self._member.update_subtopologies(rt.subtopology_sources)
        self._publish_tasks()
        return version

    def _request_shutdown_if_asked(self, exc: BaseException) -> None:
        """Apply the client's policy; on SHUTDOWN_APPLICATION tell the group before leaving it."""
        self._stop_requested.set()  # the member's driver no longer waits for this loop
        try:
            if self._on_error is None or not self._on_error(self, exc):
                return
        except Exception:
            log.exception("stream thread %s: the uncaught exception policy failed", self.name)
            return
        member = getattr(self, "_member", None)
        if member is None or not member.driving:
            log.error(
                "stream thread %s: cannot send the application shutdown request: not in the group", self.name
            )
        elif not member.request_shutdown(SHUTDOWN_REQUEST_TIMEOUT_S):
            log.error(
                "stream thread %s: the group did not answer the application shutdown request within %.0fs",
                self.name,
                SHUTDOWN_REQUEST_TIMEOUT_S,
            )

    def _shutdown(self) -> None:
        if self.state != PENDING_SHUTDOWN:
            self._set_state(PENDING_SHUTDOWN)
        self._stop_requested.set()
        with self.query_lock:  # interactive queries never read a store while it closes
            for step in (self._close_member, self._close_tasks, self._close_clients):
                try:
                    step()
                except Exception as exc:
                    log.exception("stream thread %s: error during shutdown", self.name)
                    if self.error is None:
                        self.error = exc
        self.active_tasks = {}
        self.standby_tasks = {}
        while self._requests:
            _, future = self._requests.popleft()
            if future.set_running_or_notify_cancel():
                future.set_exception(StreamsError(f"stream thread {self.name} stopped"))
        self._set_state(DEAD)
        self._on_death(self)

    def _close_member(self) -> None:
        member = getattr(self, "_member", None)
        if member is not None:
            member.close()  # revokes every task through _on_change, on this thread

    def _close_tasks(self) -> None:
        if getattr(self, "_tasks", None) is not None:
            self._tasks.close_all(clean=self.error is None)

    def _close_clients(self) -> None:
        if getattr(self, "_collector", None) is not None:
            self._collector.close()
        reader = getattr(self, "_reader", None)  # None too for an app without stores
        if reader is not None:
            reader.close()
        if getattr(self, "_consumer", None) is not None:
            self._consumer.close()


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)
