"""TaskManager: creates, restores, runs, commits and closes the active tasks of one StreamThread.

Created and owned by a StreamThread; borrows the thread's consumer, RecordCollector, record cache
and StoreChangelogReader, and the client's StateDirectory. Everything here runs on the stream
thread (confluent clients are not thread-safe).

The thread's tasks live in a :class:`~.tasks.Tasks` registry; each task's state is its own
(:class:`~.abstract_task.State`): created by the :class:`~.task_creators.ActiveTaskCreator` and
RESTORING until the changelog reader reports its stores current (a stateless task: at once), then
RUNNING; only then are its input partitions assigned to the consumer, at the committed offsets
(none committed: ``auto.offset.reset``; a broker that does not answer for them keeps the task
RESTORING, asked again every restore step for up to ``task_timeout_ms``). Closing suspends it
(input unassigned) and closes it.

Processing, punctuation and the commit protocol (one path for both processing guarantees) are
the :class:`~.task_executor.TaskExecutor`'s; see there.

Closing a task cleanly commits it first; closing dirty (error, lost membership) does not, so its
uncommitted input is processed again by its next owner.

The processing guarantee is the producer side's business: the thread's producer side
(:func:`~.producer_side.create_record_collector`) gives each task its collector, says whether
it is transactional (``eos_enabled``) and whether a task is inside an open transaction. Under
exactly-once (one transactional producer per task) a stateful task's directory carries the
dirty marker from before its stores open until a clean close (see :mod:`.task_creators`), and
checkpoints are written only at a clean close. A fenced producer (TaskMigratedError) closes its
task dirty (transaction aborted, marker kept) and asks the group for a rebalance
(:attr:`on_task_migrated`); an assignment that still gives the task to this thread creates it
again (``init_transactions`` fences the other producer, the state restores).

Standby and warm-up tasks (:class:`~.standby_task.StandbyTask`) are held in the registry's
``standby_tasks``: created after the active tasks of an assignment change (a standby whose
directory lock is still held by its previous owner waits and is retried every restore step),
replayed by the changelog reader (after active restoration), checkpointed at every commit of the
thread (:meth:`TaskManager.checkpoint_standbys`) so the offset sums reported to the assignor follow
their progress. A standby promoted to active on this thread is closed (flush, checkpoint, unlock)
before the active task opens the same directory and restores only the delta after that checkpoint.

State rebuilds (:mod:`.state_rebuild`) are delegated to a :class:`~.task_rebuilder.TaskRebuilder`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import KafkaException, TopicPartition
from streams_runtime.kafka.offsets import committed_offsets_of, is_transient_offsets_error
from streams_runtime.processor.internals.abstract_task import State
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.internals.task_creators import ActiveTaskCreator, StandbyTaskCreator
from streams_runtime.processor.internals.task_executor import TaskExecutor
from streams_runtime.processor.internals.task_rebuilder import TaskRebuilder
from streams_runtime.processor.internals.tasks import Tasks
from streams_runtime.processor.internals.topology_info import SubtopologyInfo
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:  # types only
    from streams_runtime.config import StreamsConfig
    from streams_runtime.kafka.client_supplier import ConsumerClient
    from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
    from streams_runtime.processor.internals.metrics import StreamsMetrics
    from streams_runtime.processor.internals.producer_side import ProducerSide
    from streams_runtime.processor.internals.state_directory import StateDirectory
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
    from streams_runtime.state.internals.record_cache import ThreadCache

log = logging.getLogger("streams_runtime.processor")

#: how long a task waits for its state directory lock (held by a previous owner still closing it)
LOCK_WAIT_MS = 60_000
#: one attempt at a restored task's committed offsets; a task the broker does not answer in time
#: stays RESTORING and is asked again every restore step, for up to ``task_timeout_ms`` in all
COMMITTED_ATTEMPT_S = 5.0


class TaskManager:
    """The tasks of one thread; see the module docstring.

    :param collector: the thread's producer side (``create_record_collector``).
    """

    def __init__(
        self,
        *,
        builder: InternalTopologyBuilder,
        subtopologies: Mapping[int, SubtopologyInfo],
        partition_counts: Mapping[str, int],
        config: StreamsConfig,
        consumer: ConsumerClient,
        collector: ProducerSide,
        metrics: StreamsMetrics,
        cache: ThreadCache | None,
        wall_clock: Callable[[], int],
        state_directory: StateDirectory,
        changelog_reader: StoreChangelogReader | None,
        global_stores: Mapping[str, Any] | None = None,
    ) -> None:
        self._subtopologies = subtopologies
        self._counts = partition_counts
        self._consumer = consumer
        self._producers = collector
        self._wall_clock = wall_clock
        self._state_directory = state_directory
        self._reader = changelog_reader
        self._registry = Tasks()
        self._active_creator = ActiveTaskCreator(
            builder=builder,
            config=config,
            producers=collector,
            metrics=metrics,
            cache=cache,
            wall_clock=wall_clock,
            state_directory=state_directory,
            global_stores=dict(global_stores or {}),  # the stores shared, read-only (GlobalStreamThread's)
        )
        self._standby_creator = StandbyTaskCreator(
            store_builders=self._active_creator.store_builders,
            config=config,
            metrics=metrics,
            wall_clock=wall_clock,
            state_directory=state_directory,
            eos=bool(collector.eos_enabled),
        )
        self._rebuilder = TaskRebuilder(self, consumer, state_directory, changelog_reader)
        self._executor = TaskExecutor(
            self._registry,
            consumer,
            collector,
            self._handle_migrated,
            max_task_idle_ms=config.max_task_idle_ms,
            task_timeout_ms=config.task_timeout_ms,
        )
        #: exactly-once: called when a task was found fenced (the thread asks its member to rejoin)
        self.on_task_migrated: Callable[[], None] = lambda: None
        self._task_timeout_ms = int(config.task_timeout_ms)
        #: restored tasks whose committed offsets the broker has not answered yet -> first failure (ms)
        self._awaiting_offsets: dict[TaskId, int] = {}

    @property
    def _changelogs(self) -> StoreChangelogReader:
        """The changelog reader, for a task with stores (an app with stores always has one)."""
        if self._reader is None:
            raise StreamsError("a task with state stores in an application without a changelog reader")
        return self._reader

    # ------------------------------------------------------------------ the registry
    @property
    def tasks(self) -> dict[TaskId, StreamTask]:
        """The active tasks created here, by id (restoring or running); read only."""
        return self._registry.active_tasks

    @property
    def standby_tasks(self) -> dict[TaskId, Any]:
        """The standby and warm-up tasks created here, by id; read only."""
        return self._registry.standby_tasks

    def owns(self, task_id: TaskId) -> bool:
        """Active here, or waiting here for its directory lock."""
        return self._registry.owns(task_id)

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
        registry = self._registry
        owned = (*registry.active_tasks, *registry.pending_active)
        affected = sorted({t for t in owned if t.subtopology in changed})
        self.handle_assignment(affected, (), clean=True)
        self._subtopologies, self._counts = subtopologies, partition_counts
        self.handle_assignment((), affected, clean=True)

    # -- read by interactive queries and metrics (on other threads, under StreamThread.query_lock)
    def is_restoring(self, task_id: TaskId) -> bool:
        """The task is assigned here but not RUNNING yet (restoring, or waiting for its lock)."""
        return self._registry.is_restoring(task_id)

    def changelog_offsets(self, task_id: TaskId) -> dict[tuple[str, int], int]:
        """The last changelog offset each logged store of the task reflects, where one is known."""
        task = self._registry.active_tasks.get(task_id)
        manager = task.state_manager if task is not None else None
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
        registry = self._registry
        revoked, assigned, assigned_standby = list(revoked), list(assigned), list(assigned_standby)
        if registry.migrated:  # fenced tasks this assignment still gives us are created again
            assigned.extend(t for t in registry.migrated if t not in revoked)
            registry.migrated.clear()
        for task_id in [*revoked_standby, *(t for t in assigned if t in registry.standby_tasks)]:
            self._close_standby(task_id, clean)
        registry.forget_pending(revoked)
        closing = [registry.active_tasks[t] for t in revoked if t in registry.active_tasks]
        if closing:
            if clean:
                self.commit([t for t in closing if t.state is State.RUNNING])
            for task in closing:
                if task.id in registry.active_tasks:  # not closed dirty by a fenced commit
                    self._close_task(task.id, clean)
        self._producers.prepare(t for t in assigned if t not in registry.active_tasks)
        stateless = [self._create_task(t) for t in sorted(assigned) if t not in registry.active_tasks]
        self._start_running([task for task in stateless if task is not None])
        for task_id in sorted(assigned_standby):
            if task_id not in registry.all_task_ids():
                self._create_standby(task_id)

    def _create_task(self, task_id: TaskId) -> StreamTask | None:
        """Create a task (see :mod:`.task_creators`); one whose directory lock is still held (its
        previous owner is closing it) stays pending and is retried every restore step. Returns a
        created stateless task, which the caller starts running (:meth:`_start_running`, one
        offsets request for all it created); a stateful one restores first."""
        registry = self._registry
        task = self._active_creator.create(
            task_id, self._subtopologies[task_id.subtopology], self.partitions_of(task_id)
        )
        if task is None:
            deadline = registry.pending_active.setdefault(task_id, self._wall_clock() + LOCK_WAIT_MS)
            if self._wall_clock() > deadline:
                raise StreamsError(
                    f"task {task_id}: state directory {self._state_directory.task_dir(task_id)} is "
                    f"still locked by another thread or process after {LOCK_WAIT_MS} ms"
                )
            return None
        registry.add_active(task)
        if task.state_manager is not None:
            self._changelogs.register(task.state_manager)
            return None
        return task

    def _start_running(self, tasks: list[StreamTask]) -> None:
        """RESTORING -> RUNNING: assign the tasks' input partitions at their committed offsets,
        asked of the broker in one request for all of them (one per task took 6.5 ms each: 0.6 s
        for 96 tasks).

        A broker that does not answer for the offsets (unreachable, overloaded, its group
        coordinator moving) leaves the tasks RESTORING, asked again every restore step, as Kafka
        Streams retries a task's initialization within ``task.timeout.ms``: only past
        ``task_timeout_ms`` since a task's first failure does the error reach the thread. (It used
        to reach it after one 30 s attempt, which a stalled broker outlasted: the thread died.)"""
        if not tasks:
            return
        partitions = [TopicPartition(t, p) for task in tasks for t, p in task.input_partitions]
        try:
            offsets = committed_offsets_of(self._consumer, partitions, COMMITTED_ATTEMPT_S)
        except KafkaException as exc:
            if not is_transient_offsets_error(exc):
                raise
            now = self._wall_clock()
            for task in tasks:
                self._offsets_not_answered(task, now, exc)
            return
        by_partition = {(tp.topic, tp.partition): tp for tp in offsets}
        for task in tasks:
            self._awaiting_offsets.pop(task.id, None)
            task.complete_restoration()
            self._registry.add_input_partitions(task)
            mine = [by_partition[key] for key in task.input_partitions]
            task.assigned_offsets = {(tp.topic, tp.partition): tp.offset for tp in mine if tp.offset >= 0}
        self._consumer.incremental_assign(offsets)

    def _offsets_not_answered(self, task: StreamTask, now: int, exc: KafkaException) -> None:
        first = self._awaiting_offsets.setdefault(task.id, now)
        if now - first >= self._task_timeout_ms:
            raise StreamsError(
                f"task {task.id}: the broker did not answer for the committed offsets of "
                f"{sorted(task.input_partitions)} within task_timeout_ms ({self._task_timeout_ms} "
                f"ms): {exc}"
            ) from exc
        if first == now:
            log.warning(
                "task %s: no committed offsets from the broker yet (%s); asked again for up to "
                "task_timeout_ms (%d ms)",
                task.id,
                exc,
                self._task_timeout_ms,
            )

    def _close_task(self, task_id: TaskId, clean: bool) -> None:
        """Suspend the task (its input leaves the consumer) and close it. A clean close outside
        an open transaction writes the checkpoint and removes the exactly-once dirty mark; a
        dirty close leaves both (and the producer side aborts the task's transaction)."""
        task = self._registry.remove_active(task_id)
        self._awaiting_offsets.pop(task_id, None)
        if task.state is State.RUNNING:
            self._consumer.incremental_unassign([TopicPartition(t, p) for t, p in task.input_partitions])
        task.suspend()
        state_manager = task.state_manager
        checkpoint = clean and not self._producers.in_transaction(task_id)
        try:
            if state_manager is not None:
                self._changelogs.unregister(task_id)
                if checkpoint:
                    state_manager.checkpoint()
            task.close()
            if checkpoint and state_manager is not None:
                self._state_directory.clear_eos_dirty(task_id)
        except Exception:
            if clean:
                raise
            log.exception("error closing task %s dirty", task_id)
        finally:
            self._producers.release(task_id, clean)
            if state_manager is not None:
                state_manager.close()
                self._state_directory.unlock(task_id)

    def close_all(self, clean: bool) -> None:
        registry = self._registry
        registry.forget_pending()
        self.handle_assignment(
            list(registry.active_tasks), (), clean=clean, revoked_standby=list(registry.standby_tasks)
        )

    # ------------------------------------------------------------------ standby tasks
    def _create_standby(self, task_id: TaskId) -> bool:
        """Open a standby's stores and register it with the reader; False while its directory
        lock is held elsewhere (retried by :meth:`restore`). Stateless tasks need no standby."""
        info = self._subtopologies[task_id.subtopology]
        if not info.stores or self._reader is None:
            return True
        standby = self._standby_creator.create(task_id, info)
        if standby is None:
            self._registry.pending_standby.add(task_id)
            return False
        try:
            self._reader.register(standby.state_manager, standby=True)
        except BaseException:
            try:
                standby.close(clean=False)
            finally:
                self._state_directory.unlock(task_id)
            raise
        self._registry.add_standby(standby)
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
        standby = self._registry.remove_standby(task_id)
        if standby is None:
            return
        try:
            self._changelogs.unregister(task_id)
            standby.close(clean=True)
        except Exception:
            if clean:
                raise
            log.exception("error closing standby task %s dirty", task_id)
        finally:
            self._state_directory.unlock(task_id)

    @property
    def has_standbys(self) -> bool:
        return bool(self._registry.standby_tasks or self._registry.pending_standby)

    def checkpoint_standbys(self) -> None:
        """At the thread's commit: write the checkpoint of every standby that replayed something."""
        for standby in self._registry.standby_tasks.values():
            standby.checkpoint()

    # -- read by interactive queries and metrics (under StreamThread.query_lock)
    def standby_stores(self, task_id: TaskId) -> dict[str, Any]:
        """The (root) stores of the standby ``task_id`` by name; empty when it is no standby here."""
        standby = self._registry.standby_tasks.get(task_id)
        return dict(standby.stores) if standby is not None else {}

    def standby_lags(self) -> dict[TaskId, dict[tuple[str, int], int]]:
        """``{standby task: {changelog partition: records behind its end}}``."""
        if self._reader is None:
            return {}
        standbys = self._registry.standby_tasks
        return {t: lags for t, lags in self._reader.standby_lags().items() if t in standbys}

    def restore_progress(self) -> dict[TaskId, tuple[int, int | None]]:
        """``{active task registered for restore: (records restored, total to restore or None)}``."""
        if self._reader is None:
            return {}
        active = self._registry.active_tasks
        return {t: p for t, p in self._reader.restore_progress().items() if t in active}

    # ------------------------------------------------------------------ restore
    @property
    def restoring(self) -> bool:
        """Some task is not running yet: restoring, or waiting for its state directory lock."""
        return bool(self._registry.pending_active) or self._registry.has_restoring()

    @property
    def reading_changelogs(self) -> bool:
        """Some task restores now, or a standby is catching up (the thread polls its input
        without waiting meanwhile)."""
        return self._registry.has_restoring() or bool(
            self._registry.standby_tasks
            and self._reader is not None
            and self._reader.standby_records_last_step
        )

    def restore(self, timeout_s: float) -> bool:
        """One restore step: retry the locks of pending tasks, then restore; tasks whose stores are
        current start running. Returns True when a pending task got its lock (the thread's task
        metadata changed)."""
        registry = self._registry
        waiting = len(registry.pending_active)
        starting = [self._create_task(task_id) for task_id in list(registry.pending_active)]
        created = len(registry.pending_active) < waiting
        for task_id in sorted(registry.pending_standby):
            if task_id not in registry.active_tasks:
                created = self._create_standby(task_id) or created
            else:
                registry.pending_standby.discard(task_id)
        for task_id in list(self._awaiting_offsets):  # restored, waiting for their offsets
            task = registry.active_tasks.get(task_id)
            if task is None or task.state is not State.RESTORING:
                self._awaiting_offsets.pop(task_id, None)
            else:
                starting.append(task)
        asked = {task.id for task in starting if task is not None}  # asked for their offsets below
        self._start_running([task for task in starting if task is not None])
        if registry.has_restoring() or registry.standby_tasks:  # standbys replay after active restoration
            restored = []
            for task_id in self._changelogs.restore(timeout_s=timeout_s):
                task = registry.active_tasks.get(task_id)
                if task is not None and task.state is State.RESTORING and task_id not in asked:
                    self._rebuilder.on_restored(task)
                    restored.append(task)
            self._start_running(restored)
        return created

    # ------------------------------------------------------------------ state rebuild
    def rebuild_task(self, task_id: TaskId, store_name: str) -> dict[str, int]:
        """See :meth:`.task_rebuilder.TaskRebuilder.rebuild_task`."""
        return self._rebuilder.rebuild_task(task_id, store_name)

    def rebuild_report(self, task_id: TaskId) -> dict[str, Any] | None:
        """See :meth:`.task_rebuilder.TaskRebuilder.rebuild_report`."""
        return self._rebuilder.rebuild_report(task_id)

    # ------------------------------------------------------------------ processing and commit
    def add_records(
        self, messages: list[Any], check_run: Callable[[str, int, list[Any]], None] | None = None
    ) -> None:
        """See :meth:`.task_executor.TaskExecutor.add_records`."""
        self._executor.add_records(messages, check_run)

    def process(self, now_ms: int) -> int:
        """Process every buffered record of every processable task (see :mod:`.task_executor`)."""
        return self._executor.process(now_ms)

    def punctuate(self) -> None:
        self._executor.punctuate()

    def commit_requested(self) -> bool:
        return any(task.commit_requested for task in self._registry.running())

    def commit(self, tasks: Iterable[StreamTask] | None = None) -> int:
        """The commit protocol of the module docstring (see :meth:`.task_executor.TaskExecutor.commit`)."""
        return self._executor.commit(self._registry.running() if tasks is None else tasks)

    def _handle_migrated(self, task_ids: Iterable[TaskId]) -> None:
        """Exactly-once: the tasks' producers were fenced, or their transactions failed
        (TaskCorruptedError); close them dirty, ask for a rebalance."""
        registry = self._registry
        for task_id in sorted(task_ids):
            if task_id in registry.active_tasks:
                log.warning(
                    "task %s migrated or corrupted (its producer was fenced or its transaction "
                    "failed); closing it dirty and rejoining the group",
                    task_id,
                )
                self._close_task(task_id, clean=False)
                registry.migrated.add(task_id)
        self.on_task_migrated()
