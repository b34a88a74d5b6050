"""TaskManager: creates, restores, runs, commits and closes the active tasks of one StreamThread.

Created and owned by a StreamThread; borrows the thread's consumer, RecordCollector, record cache
and StoreChangelogReader, and the client's StateDirectory. Everything here runs on the stream
thread (confluent clients are not thread-safe).

A task is RESTORING from creation until the changelog reader reports its stores current (a
stateless task: at once), then RUNNING; only then are its input partitions assigned to the
consumer, at the committed offsets (none committed: ``auto.offset.reset``).

Commit protocol (:meth:`TaskManager.commit`), safe to crash between any two steps under
at-least-once, because each step only makes durable what the previous steps made durable:
  1. flush every task's stores and record caches (cached updates are forwarded downstream and
     change-logged: they reach the collector);
  2. flush the producer: every output, repartition and changelog record is acknowledged;
  3. commit the input offsets (explicit offsets, synchronous), after step 2, so a committed
     input offset never points past an output that was not written -- a crash before this step
     reprocesses the records since the last commit (duplicates, no loss);
  4. write the checkpoints (changelog offsets from the delivery reports), after step 3, so a
     checkpoint never claims state the committed offsets do not cover; a crash before this step
     leaves an older checkpoint and the next restore replays a little more changelog.

Outages (Kafka Streams' ``task.timeout.ms``): step 2 waits through a broker outage for up to the
producer's delivery timeout (librdkafka then fails the records, and the production handler
decides) or ``task_timeout_ms`` if longer; step 3 retries transient errors for up to
``task_timeout_ms``; transient consumer errors are logged, not raised (librdkafka reconnects by
itself). So an outage shorter than those limits stalls the thread and nothing fails; only a
longer one reaches the handlers.

Closing a task cleanly commits it first; closing dirty (error, lost membership) does not, so its
uncommitted input is processed again by its next owner.

Exactly-once (``exactly_once_v2``; the collector is a TaskRecordCollectors, one transactional
producer per task, see :mod:`.record_collector`): a stateful task's directory gets the EOS dirty
marker before its stores open (a directory still marked from an unclean close is wiped first and
restored from the read_committed changelog). Commit, per task:
  1. flush the task's stores and record caches (changelog and downstream records join its
     transaction);
  2-4. the task's collector flushes, adds the task's input offsets to the transaction
     (``send_offsets_to_transaction`` with the consumer's group metadata, group = application id)
     and commits: outputs, changelog records and offsets become visible together or not at all;
  5. the task begins no new transaction (is not processed or punctuated) until the group shows
     the offsets it committed (:meth:`TaskManager._confirm_commits`, once per loop iteration; see
     ``CONFIRM_NUDGE_S`` in :mod:`.record_collector` for why: the embedded broker answers a commit
     before it completes it).
The changelog offsets of the delivery reports are tracked in memory; checkpoints are written only
when a task closes cleanly (then the marker is removed), never at a commit. A fenced producer
(TaskMigratedError) closes its task dirty (transaction aborted, marker kept) and asks the group for
a rebalance (:attr:`on_task_migrated`); an assignment that still gives the task to this thread
creates it again (``init_transactions`` fences the other producer, the state restores).

Standby and warm-up tasks (:class:`~.standby_task.StandbyTask`) are held apart in
``standby_tasks``: created after the active tasks of an assignment change (a standby whose
directory lock is still held by its previous owner waits and is retried every restore step),
replayed by the changelog reader (after active restoration), checkpointed at every commit of the
thread (:meth:`TaskManager.checkpoint_standbys`) so the offset sums reported to the assignor follow
their progress. A standby promoted to active on this thread is closed (flush, checkpoint, unlock)
before the active task opens the same directory and restores only the delta after that checkpoint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from streams_runtime.errors import CorruptedStoreError, StreamsError, TaskMigratedError
from streams_runtime.kafka.clients import KafkaError, KafkaException, TopicPartition
from streams_runtime.kafka.offsets import is_partition_eof
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.internals.topology_info import SubtopologyInfo
from streams_runtime.processor.task_id import TaskId

log = logging.getLogger("streams_runtime.processor")

#: exactly-once step 5: how long one read of the group's committed offsets may take
CONFIRM_READ_TIMEOUT_S = 5.0
#: how long a task waits for its state directory lock (held by a previous owner still closing it)
LOCK_WAIT_MS = 60_000


class TaskManager:
    """The active tasks of one thread; see the module docstring."""

    def __init__(
        self,
        *,
        builder: Any,
        subtopologies: Mapping[int, SubtopologyInfo],
        partition_counts: Mapping[str, int],
        config: Any,
        consumer: Any,
        collector: Any,
        metrics: Any,
        cache: Any,
        wall_clock: Callable[[], int],
        state_directory: Any,
        changelog_reader: Any,
        global_stores: Mapping[str, Any] | None = None,
    ) -> None:
        self._builder = builder
        self._subtopologies = subtopologies
        self._counts = partition_counts
        self._config = config
        self._consumer = consumer
        self._collector = collector
        self._metrics = metrics
        self._cache = cache
        self._wall_clock = wall_clock
        self._state_directory = state_directory
        self._reader = changelog_reader
        self._global_stores = dict(global_stores or {})  # shared, read-only (GlobalStreamThread's)
        self._store_builders = {name: entry.builder for name, entry in builder.stores.items()}
        self.tasks: dict[TaskId, StreamTask] = {}
        self._state_managers: dict[TaskId, Any] = {}
        self._restoring: set[TaskId] = set()
        self._running: list[StreamTask] = []
        self._adders: dict[tuple[str, int], Callable[[RawRecord], None]] = {}
        self._committed: dict[tuple[str, int], int] = {}
        self._idle_since: dict[TaskId, int] = {}
        self._multi_queues: dict[TaskId, list[Any] | None] = {}
        self._processed: dict[TaskId, Any] = {}  # each task's process-total sensor, looked up once
        self._awaiting_lock: dict[TaskId, int] = {}
        self._max_idle_ms = max(0, config["max_task_idle_ms"])
        self._eos = config["processing_guarantee"] == "exactly_once_v2"
        self._task_timeout_ms = config["task_timeout_ms"]
        self._consumer_errors_logged = 0.0  # when a transient consumer error was last logged
        self._migrated: set[TaskId] = set()  # fenced tasks closed dirty, created again if kept
        #: exactly-once: called when a task was found fenced (the thread asks its member to rejoin)
        self.on_task_migrated: Callable[[], None] = lambda: None
        self.standby_tasks: dict[TaskId, Any] = {}  # StandbyTask by id (standby and warm-up)
        self._standby_awaiting: set[TaskId] = set()  # standbys waiting for their directory lock
        self._rebuilding: dict[TaskId, str] = {}  # task -> store whose rebuild it restores
        self._rebuilt: dict[TaskId, dict[str, Any]] = {}  # task -> snapshot taken when restored

    # ------------------------------------------------------------------ assignment
    def partitions_of(self, task_id: TaskId) -> list[tuple[str, int]]:
        info = self._subtopologies[task_id.subtopology]
        return [(t, task_id.partition) for t in info.source_topics if task_id.partition < self._counts[t]]

    def rebind_sources(
        self, subtopologies: Mapping[int, SubtopologyInfo], partition_counts: Mapping[str, int]
    ) -> None:
        """A source by topic pattern gained topics: close (committed) the active tasks whose
        sub-topology's source topics changed and create them again, reading the new partitions
        too (the task ids, and so their state directories and stores, stay the same)."""
        changed = {
            i
            for i, info in subtopologies.items()
            if i not in self._subtopologies or info.source_topics != self._subtopologies[i].source_topics
        }
        affected = sorted({t for t in (*self.tasks, *self._awaiting_lock) if t.subtopology in changed})
        self.handle_assignment(affected, (), clean=True)
        self._subtopologies, self._counts = subtopologies, partition_counts
        self.handle_assignment((), affected, clean=True)

    # -- read by interactive queries and metrics (on other threads, under StreamThread.query_lock)
    def is_restoring(self, task_id: TaskId) -> bool:
        """The task is assigned here but not RUNNING yet (restoring, or waiting for its lock)."""
        return task_id in self._restoring or task_id in self._awaiting_lock

    def changelog_offsets(self, task_id: TaskId) -> dict[tuple[str, int], int]:
        """The last changelog offset each logged store of the task reflects, where one is known."""
        manager = self._state_managers.get(task_id)
        return manager.checkpointed_offsets() if manager is not None else {}

    def handle_assignment(
        self,
        revoked: Iterable[TaskId],
        assigned: Iterable[TaskId],
        *,
        clean: bool,
        revoked_standby: Iterable[TaskId] = (),
        assigned_standby: Iterable[TaskId] = (),
    ) -> None:
        """Close ``revoked`` (committing them first when ``clean``) and ``revoked_standby``, then
        create ``assigned`` (a standby of the same task here is closed first) and ``assigned_standby``."""
        assigned, assigned_standby = list(assigned), list(assigned_standby)
        if self._migrated:  # fenced tasks this assignment still gives us are created again
            revoked = list(revoked)
            assigned.extend(t for t in self._migrated if t not in revoked)
            self._migrated.clear()
        for task_id in [*revoked_standby, *(t for t in assigned if t in self.standby_tasks)]:
            self._close_standby(task_id, clean)
        for task_id in revoked:
            self._awaiting_lock.pop(task_id, None)
        closing = [t for t in revoked if t in self.tasks]
        if closing:
            if clean:
                self.commit([self.tasks[t] for t in closing if t not in self._restoring])
            for task_id in closing:
                if task_id in self.tasks:  # not closed dirty by a fenced commit
                    self._close_task(task_id, clean)
        if self._eos:  # the new tasks' init_transactions in parallel
            self._collector.prepare(t for t in assigned if t not in self.tasks)
        for task_id in sorted(assigned):
            if task_id not in self.tasks:
                self._create_task(task_id)
        for task_id in sorted(assigned_standby):
            if task_id not in self.tasks and task_id not in self.standby_tasks:
                self._create_standby(task_id)

    def _create_task(self, task_id: TaskId) -> None:
        """Create and initialize a task; a stateful one whose directory lock is still held (its
        previous owner is closing it) waits in ``_awaiting_lock`` and is retried every loop."""
        info = self._subtopologies[task_id.subtopology]
        stateful = bool(info.stores)
        sd = self._state_directory
        state_manager = task_dir = None
        if stateful:
            if not sd.lock(task_id):
                deadline = self._awaiting_lock.setdefault(task_id, self._wall_clock() + LOCK_WAIT_MS)
                if self._wall_clock() > deadline:
                    raise StreamsError(
                        f"task {task_id}: state directory {sd.task_dir(task_id)} is still "
                        f"locked by another thread or process after {LOCK_WAIT_MS} ms"
                    )
                return
            self._awaiting_lock.pop(task_id, None)
            task_dir = sd.task_dir(task_id)
            sd.wipe_if_eos_dirty(task_id)  # an exactly-once owner crashed: state may be ahead
            if self._eos:
                sd.mark_eos_dirty(task_id)
        # exactly-once: the task's own transactional producer (init_transactions fences zombies)
        collector = self._collector.for_task(task_id) if self._eos else self._collector
        try:
            task, state_manager = self._initialize_task(task_id, info, collector, task_dir)
        except CorruptedStoreError as exc:  # damaged local state: the changelog has it all
            self._wipe_damaged(task_id, exc)
            task, state_manager = self._initialize_task(task_id, info, collector, task_dir)
        self.tasks[task_id] = task
        self._processed[task_id] = self._metrics.sensor("process-total", tags={"task-id": task_id})
        queues = list(task.partition_group.queues.values())
        self._multi_queues[task_id] = queues if len(queues) > 1 else None
        self._restoring.add(task_id)
        if state_manager is not None:
            self._state_managers[task_id] = state_manager
            self._reader.register(state_manager)
        else:
            self._start_running(task_id)

    def _initialize_task(
        self, task_id: TaskId, info: SubtopologyInfo, collector: Any, task_dir: Any
    ) -> tuple[StreamTask, Any]:
        """Build and initialize a task (its stores open); a store that fails to open is closed
        with the others before the error leaves."""
        topology = build_processor_topology(self._builder, info.nodes)
        task = StreamTask(
            task_id,
            topology,
            self._store_builders,
            self._config,
            collector,
            self._metrics,
            self._cache,
            self._wall_clock,
            task_dir,
            self._global_stores,
        )
        state_manager = None
        if info.stores:
            from streams_runtime.processor.internals.state_manager import ProcessorStateManager

            state_manager = ProcessorStateManager(task_id, self._state_directory)
            task.context.set_state_manager(state_manager)
        try:
            task.initialize()
        except CorruptedStoreError:
            for store in task.stores.values():
                try:
                    store.close()
                except Exception:  # noqa: S110 - a store that never opened has nothing to close
                    pass
            raise
        return task, state_manager

    def _wipe_damaged(self, task_id: TaskId, exc: CorruptedStoreError) -> None:
        """A store of ``task_id`` cannot be opened or read: throw the task's local state away (the
        lock is held) so its stores restore from their changelogs. Other tasks are untouched."""
        log.warning(
            "task %s: local state is damaged (%s); wiping %s and restoring it from the changelog",
            task_id,
            exc,
            self._state_directory.task_dir(task_id),
        )
        self._state_directory.wipe_task(task_id)
        if self._eos:
            self._state_directory.mark_eos_dirty(task_id)

    def _start_running(self, task_id: TaskId) -> None:
        """RESTORING -> RUNNING: assign the task's input partitions at their committed offsets."""
        self._restoring.discard(task_id)
        task = self.tasks[task_id]
        partitions = self.partitions_of(task_id)
        for topic, partition in partitions:
            self._adders[(topic, partition)] = task.partition_group.queue_for(topic, partition).add
        committed = self._consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=30)
        self._consumer.incremental_assign(committed)
        self._running.append(task)

    def _close_task(self, task_id: TaskId, clean: bool) -> None:
        task = self.tasks.pop(task_id)
        partitions = self.partitions_of(task_id)
        if task_id not in self._restoring:
            self._consumer.incremental_unassign([TopicPartition(t, p) for t, p in partitions])
            self._running.remove(task)
        self._restoring.discard(task_id)
        self._idle_since.pop(task_id, None)
        self._multi_queues.pop(task_id, None)
        self._processed.pop(task_id, None)
        for tp in partitions:
            self._adders.pop(tp, None)
            self._committed.pop(tp, None)
        state_manager = self._state_managers.pop(task_id, None)
        eos_clean = self._eos and clean and not self._collector.get(task_id).in_transaction
        try:
            if state_manager is not None:
                self._reader.unregister(task_id)
                if eos_clean:  # exactly-once checkpoints only here, after the last commit
                    state_manager.checkpoint()
            task.close()
            if eos_clean and state_manager is not None:
                self._state_directory.clear_eos_dirty(task_id)
        except Exception:
            if clean:
                raise
            log.exception("error closing task %s dirty", task_id)
        finally:
            if self._eos:
                self._collector.release(task_id, clean)  # dirty: abort the open transaction
            if state_manager is not None:
                state_manager.close()
                self._state_directory.unlock(task_id)

    def close_all(self, clean: bool) -> None:
        self._awaiting_lock.clear()
        self._migrated.clear()
        self._standby_awaiting.clear()
        self.handle_assignment(list(self.tasks), (), clean=clean, revoked_standby=list(self.standby_tasks))

    # ------------------------------------------------------------------ standby tasks
    def _create_standby(self, task_id: TaskId) -> bool:
        """Open a standby's stores and register it with the reader; False while its directory
        lock is held elsewhere (retried by :meth:`restore`). Stateless tasks need no standby."""
        info = self._subtopologies[task_id.subtopology]
        if not info.stores or self._reader is None:
            return True
        if not self._state_directory.lock(task_id):
            self._standby_awaiting.add(task_id)
            return False
        self._standby_awaiting.discard(task_id)
        self._state_directory.wipe_if_eos_dirty(task_id)  # left by a crashed exactly-once active
        from streams_runtime.processor.internals.standby_task import StandbyTask

        def new_standby() -> Any:
            return StandbyTask(
                task_id,
                list(info.stores),
                self._store_builders,
                self._config,
                self._metrics,
                self._state_directory,
                self._wall_clock,
            )

        standby = new_standby()
        try:
            try:
                standby.initialize()
            except CorruptedStoreError as exc:  # damaged local state: replay it from the changelog
                try:
                    standby.close(clean=False)
                except StreamsError:
                    log.debug("standby task %s: closing stores that never opened", task_id)
                self._wipe_damaged(task_id, exc)
                standby = new_standby()
                standby.initialize()
            self._reader.register(standby.state_manager, standby=True)
        except BaseException:
            try:
                standby.close(clean=False)
            finally:
                self._state_directory.unlock(task_id)
            raise
        self.standby_tasks[task_id] = standby
        log.info(
            "standby task %s created (checkpointed offsets %s)",
            task_id,
            standby.state_manager.checkpointed_offsets(),
        )
        return True

    def _close_standby(self, task_id: TaskId, clean: bool) -> None:
        """Stop replaying, checkpoint, close the stores, release the lock. A standby's stores never
        run ahead of their offsets (each replayed batch carries its offset), so even a dirty close
        checkpoints; only its errors are swallowed then."""
        self._standby_awaiting.discard(task_id)
        standby = self.standby_tasks.pop(task_id, None)
        if standby is None:
            return
        try:
            self._reader.unregister(task_id)
            standby.close(clean=True)
        except Exception:
            if clean:
                raise
            log.exception("error closing standby task %s dirty", task_id)
        finally:
            self._state_directory.unlock(task_id)

    @property
    def has_standbys(self) -> bool:
        return bool(self.standby_tasks or self._standby_awaiting)

    def checkpoint_standbys(self) -> None:
        """At the thread's commit: write the checkpoint of every standby that replayed something."""
        for standby in self.standby_tasks.values():
            standby.checkpoint()

    # -- read by interactive queries and metrics (under StreamThread.query_lock)
    def standby_stores(self, task_id: TaskId) -> dict[str, Any]:
        """The (root) stores of the standby ``task_id`` by name; empty when it is no standby here."""
        standby = self.standby_tasks.get(task_id)
        return dict(standby.stores) if standby is not None else {}

    def standby_lags(self) -> dict[TaskId, dict[tuple[str, int], int]]:
        """``{standby task: {changelog partition: records behind its end}}``."""
        if self._reader is None:
            return {}
        return {t: lags for t, lags in self._reader.standby_lags().items() if t in self.standby_tasks}

    def restore_progress(self) -> dict[TaskId, tuple[int, int | None]]:
        """``{active task registered for restore: (records restored, total to restore or None)}``."""
        if self._reader is None:
            return {}
        return {t: p for t, p in self._reader.restore_progress().items() if t in self.tasks}

    # ------------------------------------------------------------------ restore
    @property
    def restoring(self) -> bool:
        """Some task is not running yet: restoring, or waiting for its state directory lock."""
        return bool(self._restoring or self._awaiting_lock)

    @property
    def reading_changelogs(self) -> bool:
        """Some task restores now, or a standby is catching up (the thread polls its input
        without waiting meanwhile)."""
        return bool(self._restoring) or bool(
            self.standby_tasks and self._reader is not None and self._reader.standby_records_last_step
        )

    def restore(self, timeout_s: float) -> bool:
        """One restore step: retry the locks of waiting tasks, then restore; tasks whose stores are
        current start running. Returns True when a waiting task got its lock (the thread's task
        metadata changed)."""
        waiting = len(self._awaiting_lock)
        for task_id in list(self._awaiting_lock):
            self._create_task(task_id)
        created = len(self._awaiting_lock) < waiting
        for task_id in sorted(self._standby_awaiting):
            if task_id not in self.tasks:
                created = self._create_standby(task_id) or created
            else:
                self._standby_awaiting.discard(task_id)
        if self._restoring or self.standby_tasks:  # standbys replay after active restoration
            for task_id in self._reader.restore(timeout_s=timeout_s):
                if task_id in self._restoring:
                    if task_id in self._rebuilding:
                        self._snapshot_rebuilt(task_id)
                    self._start_running(task_id)
        return created

    # ------------------------------------------------------------------ state rebuild
    def rebuild_task(self, task_id: TaskId, store_name: str) -> dict[str, int]:
        """Close ``task_id`` cleanly, wipe its state directory and create it again, so it restores
        every store from its changelog (steps 1-3 of :mod:`.state_rebuild`); once restored, before
        it processes, :meth:`rebuild_report` has a snapshot of ``store_name``. Returns the input
        offsets committed at the close (``"topic:partition" -> next offset``)."""
        if task_id not in self.tasks:
            raise StreamsError(f"task {task_id} is not an active task of this thread")
        partitions = self.partitions_of(task_id)
        self.handle_assignment([task_id], (), clean=True)  # Step 1: commit, close
        committed = self._consumer.committed([TopicPartition(t, p) for t, p in partitions], timeout=30)
        sd = self._state_directory
        if sd.lock(task_id):  # Step 2 (the thread keeps the lock into the new task)
            sd.wipe_task(task_id)
        else:
            raise StreamsError(f"task {task_id}: cannot lock {sd.task_dir(task_id)} to wipe it")
        self._rebuilt.pop(task_id, None)
        self._rebuilding[task_id] = store_name
        self.handle_assignment((), [task_id], clean=True)  # Step 3
        return {f"{tp.topic}:{tp.partition}": tp.offset for tp in committed}

    def rebuild_report(self, task_id: TaskId) -> dict[str, Any] | None:
        """The snapshot of a rebuilt task once it restored (taken once), else None; raises when
        the task is no longer active here (revoked by a rebalance during the rebuild)."""
        if task_id in self._rebuilt:
            return self._rebuilt.pop(task_id)
        if task_id not in self.tasks and task_id not in self._awaiting_lock:
            self._rebuilding.pop(task_id, None)
            raise StreamsError(f"task {task_id} left this thread while it was being rebuilt")
        return None

    def _snapshot_rebuilt(self, task_id: TaskId) -> None:
        """Step 4 of :mod:`.state_rebuild`: restored, not processing yet."""
        from streams_runtime.processor.internals.state_rebuild import snapshot_restored_store

        store_name = self._rebuilding.pop(task_id)
        restored = self._reader.restored_count(task_id)
        self._rebuilt[task_id] = snapshot_restored_store(
            self.tasks[task_id], self._state_managers[task_id], store_name, restored
        )

    # ------------------------------------------------------------------ processing (hot path)
    def add_records(self, messages: list[Any]) -> None:
        adders = self._adders
        for msg in messages:
            if msg.error() is not None:
                self._consumer_error(msg.error())
                continue
            topic, partition = msg.topic(), msg.partition()
            add = adders.get((topic, partition))
            if add is not None:  # a record of a partition revoked since the fetch is dropped
                add(
                    RawRecord(
                        topic,
                        partition,
                        msg.offset(),
                        msg.timestamp()[1],
                        msg.key(),
                        msg.value(),
                        msg.headers() or (),
                    )
                )

    def _consumer_error(self, error: Any) -> None:
        """A consumer event: EOF is skipped; a transient error (broker unreachable, a request
        timed out: librdkafka retries by itself) is logged at most every 10 s; a fatal one fails
        the thread."""
        if is_partition_eof(error):
            return
        if error.fatal():
            raise StreamsError(f"consumer error: {error}")
        now = time.monotonic()
        if now - self._consumer_errors_logged >= 10.0:
            self._consumer_errors_logged = now
            log.warning("consumer error (retried by the client): %s", error)

    def process(self, now_ms: int) -> int:
        """Process every buffered record of every processable task; return how many (0 in the
        iteration where a task turned out fenced: it is closed and the rest go on next time)."""
        try:
            waiting = self._confirm_commits() if self._eos else ()
            return self._process(now_ms, waiting)
        except TaskMigratedError as exc:
            self._handle_migrated(exc.task_ids)
            return 0

    def _confirm_commits(self) -> set[TaskId]:
        """Exactly-once step 5 (module docstring): read back the group's offsets of the tasks
        whose last commit does not show yet; returns the tasks still waiting (not processed,
        not punctuated: they begin no new transaction)."""
        waiting = self._collector.unconfirmed_tasks()
        if not waiting:
            return waiting
        collectors = {t: self._collector.get(t) for t in waiting}
        wanted = [TopicPartition(tp.topic, tp.partition) for c in collectors.values() for tp in c.unconfirmed]
        try:
            read = self._consumer.committed(wanted, timeout=CONFIRM_READ_TIMEOUT_S)
        except KafkaException as exc:  # not readable now (e.g. offsets still unstable): next time
            log.debug("reading the committed offsets back failed: %s", exc)
            return waiting
        committed = {(tp.topic, tp.partition): tp.offset for tp in read}
        for task_id, collector in collectors.items():
            if collector.confirm(committed):
                waiting.discard(task_id)
        return waiting

    def _process(self, now_ms: int, waiting: Any = ()) -> int:
        total = 0
        multi, processed = self._multi_queues, self._processed
        for task in self._running:
            if task.id in waiting:
                continue
            queues = multi[task.id]
            if queues is not None and not self._processable(task, queues, now_ms):
                continue
            process = task.process
            n = 0
            if queues is None:
                while process():
                    n += 1
            else:
                while all(q.head is not None for q in queues) and process():
                    n += 1
                if self._idle_since.get(task.id, -1) >= 0:  # enforced: drain what is buffered
                    while process():
                        n += 1
            if n:
                processed[task.id].increment(n)
                task.maybe_punctuate_stream_time()
                total += n
        return total

    def _processable(self, task: StreamTask, queues: list[Any], now_ms: int) -> bool:
        """A task with several inputs waits up to max_task_idle_ms for an empty one."""
        if all(q.head is not None for q in queues):
            self._idle_since.pop(task.id, None)
            return True
        if not any(q.head is not None for q in queues):
            return False
        since = self._idle_since.setdefault(task.id, now_ms)
        return now_ms - since >= self._max_idle_ms

    def punctuate(self) -> None:
        waiting = self._collector.unconfirmed_tasks() if self._eos else ()
        try:
            for task in self._running:
                if task.id not in waiting:
                    task.maybe_punctuate_system_time()
        except TaskMigratedError as exc:
            self._handle_migrated(exc.task_ids)

    def _handle_migrated(self, task_ids: Iterable[TaskId]) -> None:
        """Exactly-once: the tasks' producers were fenced; close them dirty, ask for a rebalance."""
        for task_id in sorted(task_ids):
            if task_id in self.tasks:
                log.warning(
                    "task %s migrated (its transactional producer was fenced); closing it dirty "
                    "and rejoining the group",
                    task_id,
                )
                self._close_task(task_id, clean=False)
                self._migrated.add(task_id)
        self.on_task_migrated()

    def commit_requested(self) -> bool:
        return any(task.commit_requested for task in self._running)

    # ------------------------------------------------------------------ commit
    def commit(self, tasks: Iterable[StreamTask] | None = None) -> int:
        """The commit protocol of the module docstring; returns the number of offsets committed."""
        tasks = list(self._running if tasks is None else tasks)
        if self._eos:
            return self._commit_transactions(tasks)
        # Step 1
        for task in tasks:
            task.commit()
        # Step 2
        self._collector.wait_for_acks(self._task_timeout_ms)
        # Step 3
        offsets = []
        committed = self._committed
        for task in tasks:
            for tp, offset in task.consumed_offsets.items():
                if committed.get(tp) != offset:
                    committed[tp] = offset
                    offsets.append(TopicPartition(tp[0], tp[1], offset + 1))
        if offsets:
            self._commit_offsets(offsets)
        # Step 4
        written = self._collector.changelog_offsets
        for task in tasks:
            state_manager = self._state_managers.get(task.id)
            if state_manager is not None:
                mine = {tp: written[tp] for tp in state_manager.changelog_partitions() if tp in written}
                if mine:
                    state_manager.update_changelog_offsets(mine)
                state_manager.checkpoint()
        return len(offsets)

    def _commit_offsets(self, offsets: list[Any]) -> None:
        """Step 3, retried through an outage for up to ``task_timeout_ms`` (a retriable error,
        or a timeout, is not the end: the offsets are committed again once the broker answers)."""
        deadline = time.monotonic() + self._task_timeout_ms / 1000
        while True:
            try:
                self._consumer.commit(offsets=offsets, asynchronous=False)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if err.fatal() or not _transient(err) or time.monotonic() >= deadline:
                    raise StreamsError(
                        f"committing input offsets failed: {err} (task_timeout_ms={self._task_timeout_ms})"
                    ) from exc
                log.warning("committing input offsets failed (%s); retrying", err)
                time.sleep(0.5)

    def _commit_transactions(self, tasks: list[StreamTask]) -> int:
        """Exactly-once commit (module docstring): one transaction per task. Step 1 runs for every
        task first, then steps 2-4 of each task's transaction (``TaskRecordCollectors.commit_all``).
        A fenced task is closed dirty, the others still commit; any other error is raised after
        every task was tried. Returns the number of offsets committed."""
        committed = self._committed
        group_metadata = None
        migrated: set[TaskId] = set()
        pending = []
        for task in tasks:
            try:
                task.commit()  # Step 1
            except TaskMigratedError as exc:
                migrated |= exc.task_ids
                continue
            consumed = [(tp, o) for tp, o in task.consumed_offsets.items() if committed.get(tp) != o]
            if consumed and group_metadata is None:
                group_metadata = self._consumer.consumer_group_metadata()
            offsets = [TopicPartition(tp[0], tp[1], o + 1) for tp, o in consumed]
            pending.append((task, consumed, offsets))
        # Steps 2-4
        outcomes = self._collector.commit_all(
            [(t.id, offsets, group_metadata) for t, _, offsets in pending], self._task_timeout_ms
        )
        count = 0
        failure = None
        for (task, consumed, _), outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, TaskMigratedError):
                migrated |= outcome.task_ids
                continue
            if isinstance(outcome, BaseException):
                failure = failure or outcome
                continue
            if not outcome:  # nothing sent, nothing consumed
                continue
            committed.update(consumed)
            count += len(consumed)
            collector = self._collector.get(task.id)
            state_manager = self._state_managers.get(task.id)
            if state_manager is not None and collector.changelog_offsets:
                state_manager.update_changelog_offsets(collector.changelog_offsets)
        if migrated:
            self._handle_migrated(migrated)
        if failure is not None:
            raise failure
        return count


#: offset-commit errors an outage causes; anything else (e.g. the member was fenced) fails at once
_TRANSIENT_COMMIT_ERRORS = frozenset(
    {
        KafkaError._TIMED_OUT,  # noqa: SLF001
        KafkaError._TRANSPORT,  # noqa: SLF001
        KafkaError._ALL_BROKERS_DOWN,  # noqa: SLF001
        KafkaError._WAIT_COORD,  # noqa: SLF001
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.NETWORK_EXCEPTION,
    }
)


def _transient(err: Any) -> bool:
    return err.retriable() or err.code() in _TRANSIENT_COMMIT_ERRORS
