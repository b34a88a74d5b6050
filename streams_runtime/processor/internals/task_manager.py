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

Closing a task cleanly commits it first; closing dirty (error, lost membership) does not, so its
uncommitted input is processed again by its next owner.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import TopicPartition
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.internals.topology_info import SubtopologyInfo
from streams_runtime.processor.task_id import TaskId

log = logging.getLogger("streams_runtime.processor")

#: how long a task waits for its state directory lock (held by a previous owner still closing it)
LOCK_WAIT_MS = 60_000


class TaskManager:
    """The active tasks of one thread; see the module docstring."""

    def __init__(self, *, builder: Any, subtopologies: Mapping[int, SubtopologyInfo],
                 partition_counts: Mapping[str, int], config: Any, consumer: Any, collector: Any,
                 metrics: Any, cache: Any, wall_clock: Callable[[], int], state_directory: Any,
                 changelog_reader: Any, global_stores: Mapping[str, Any] | None = None) -> None:
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
        self._awaiting_lock: dict[TaskId, int] = {}
        self._max_idle_ms = max(0, config["max_task_idle_ms"])

    # ------------------------------------------------------------------ assignment
    def partitions_of(self, task_id: TaskId) -> list[tuple[str, int]]:
        info = self._subtopologies[task_id.subtopology]
        return [(t, task_id.partition) for t in info.source_topics if task_id.partition < self._counts[t]]

    def handle_assignment(self, revoked: Iterable[TaskId], assigned: Iterable[TaskId], *,
                          clean: bool) -> None:
        """Close ``revoked`` (committing them first when ``clean``), then create ``assigned``."""
        for task_id in revoked:
            self._awaiting_lock.pop(task_id, None)
        closing = [t for t in revoked if t in self.tasks]
        if closing:
            if clean:
                self.commit([self.tasks[t] for t in closing if t not in self._restoring])
            for task_id in closing:
                self._close_task(task_id, clean)
        for task_id in sorted(assigned):
            if task_id not in self.tasks:
                self._create_task(task_id)

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
                    raise StreamsError(f"task {task_id}: state directory {sd.task_dir(task_id)} is still "
                                       f"locked by another thread or process after {LOCK_WAIT_MS} ms")
                return
            self._awaiting_lock.pop(task_id, None)
            task_dir = sd.task_dir(task_id)
        topology = build_processor_topology(self._builder, info.nodes)
        task = StreamTask(task_id, topology, self._store_builders, self._config, self._collector,
                          self._metrics, self._cache, self._wall_clock, task_dir, self._global_stores)
        if stateful:
            from streams_runtime.processor.internals.state_manager import ProcessorStateManager

            state_manager = ProcessorStateManager(task_id, sd)
            task.context.set_state_manager(state_manager)
        task.initialize()
        self.tasks[task_id] = task
        queues = list(task.partition_group.queues.values())
        self._multi_queues[task_id] = queues if len(queues) > 1 else None
        self._restoring.add(task_id)
        if state_manager is not None:
            self._state_managers[task_id] = state_manager
            self._reader.register(state_manager)
        else:
            self._start_running(task_id)

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
        for tp in partitions:
            self._adders.pop(tp, None)
            self._committed.pop(tp, None)
        state_manager = self._state_managers.pop(task_id, None)
        try:
            if state_manager is not None:
                self._reader.unregister(task_id)
            task.close()
        except Exception:
            if clean:
                raise
            log.exception("error closing task %s dirty", task_id)
        finally:
            if state_manager is not None:
                state_manager.close()
                self._state_directory.unlock(task_id)

    def close_all(self, clean: bool) -> None:
        self._awaiting_lock.clear()
        self.handle_assignment(list(self.tasks), (), clean=clean)

    # ------------------------------------------------------------------ restore
    @property
    def restoring(self) -> bool:
        """Some task is not running yet: restoring, or waiting for its state directory lock."""
        return bool(self._restoring or self._awaiting_lock)

    @property
    def reading_changelogs(self) -> bool:
        """Some task restores now (the thread polls its input without waiting meanwhile)."""
        return bool(self._restoring)

    def restore(self, timeout_s: float) -> bool:
        """One restore step: retry the locks of waiting tasks, then restore; tasks whose stores are
        current start running. Returns True when a waiting task got its lock (the thread's task
        metadata changed)."""
        waiting = len(self._awaiting_lock)
        for task_id in list(self._awaiting_lock):
            self._create_task(task_id)
        created = len(self._awaiting_lock) < waiting
        if self._restoring:
            for task_id in self._reader.restore(timeout_s=timeout_s):
                if task_id in self._restoring:
                    self._start_running(task_id)
        return created


    # ------------------------------------------------------------------ processing (hot path)
    def add_records(self, messages: list[Any]) -> None:
        adders = self._adders
        for msg in messages:
            if msg.error() is not None:
                if msg.error().code() == -191:  # _PARTITION_EOF
                    continue
                raise StreamsError(f"consumer error: {msg.error()}")
            topic, partition = msg.topic(), msg.partition()
            add = adders.get((topic, partition))
            if add is not None:  # a record of a partition revoked since the fetch is dropped
                add(RawRecord(topic, partition, msg.offset(), msg.timestamp()[1], msg.key(), msg.value(),
                              msg.headers() or ()))

    def process(self, now_ms: int) -> int:
        """Process every buffered record of every processable task; return how many."""
        total = 0
        multi = self._multi_queues
        for task in self._running:
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
        for task in self._running:
            task.maybe_punctuate_system_time()

    def commit_requested(self) -> bool:
        return any(task.commit_requested for task in self._running)

    # ------------------------------------------------------------------ commit
    def commit(self, tasks: Iterable[StreamTask] | None = None) -> int:
        """The commit protocol of the module docstring; returns the number of offsets committed."""
        tasks = list(self._running if tasks is None else tasks)
        # Step 1
        for task in tasks:
            task.commit()
        # Step 2
        self._collector.wait_for_acks()
        # Step 3
        offsets = []
        committed = self._committed
        for task in tasks:
            for tp, offset in task.consumed_offsets.items():
                if committed.get(tp) != offset:
                    committed[tp] = offset
                    offsets.append(TopicPartition(tp[0], tp[1], offset + 1))
        if offsets:
            self._consumer.commit(offsets=offsets, asynchronous=False)
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
