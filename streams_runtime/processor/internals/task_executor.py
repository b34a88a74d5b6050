"""TaskExecutor: processing, punctuation and commits of a thread's running tasks (Kafka
Streams' name).

Owned by a TaskManager, on its stream thread; reads the running tasks from the thread's
:class:`~.tasks.Tasks` registry and hands tasks found fenced (``TaskMigratedError``) back to the
TaskManager (``on_migrated``), which closes them dirty.

Processing: each running task drains its input queues. A task with several inputs, one of them
empty, first waits for records its consumer knows to be on the broker but has not fetched (the
partition's lag unknown, or its cached high watermark above its position: Kafka Streams' wait
"to fetch data that is already present on the brokers"), up to :data:`FETCH_WAIT_MS`; then up to
``max_task_idle_ms`` for new records (its ``idle_since``); then it processes what it has
("enforced processing"). ``max_task_idle_ms = -1`` never waits. Without the first wait, a
stream-table join whose table partition is fetched a moment after the stream's would join the
first stream records against an empty table.

Commit protocol (:meth:`TaskExecutor.commit`, one path for both guarantees), safe to crash
between any two steps under at-least-once, because each step only makes durable what the
previous steps made durable:
  1. flush every task's stores and record caches (cached updates are forwarded downstream and
     change-logged: they reach the collector);
  2. the producer side (``commit_tasks``) flushes the producer: every output, repartition and
     changelog record is acknowledged;
  3. it commits the input offsets (explicit offsets, synchronous), after step 2, so a committed
     input offset never points past an output that was not written -- a crash before this step
     reprocesses the records since the last commit (duplicates, no loss);
  4. each task's ``post_commit`` writes its checkpoint (the changelog offsets it counted, see
     ``StreamTask.post_commit``), after step 3, so a checkpoint never claims state the committed
     offsets do not cover; a crash before this step leaves an older checkpoint and the next
     restore replays a little more changelog;
  5. exactly-once only: a task whose transaction committed input offsets begins no new
     transaction (is not processed or punctuated) until the group shows those offsets
     (``confirm_commits``, once per loop iteration; see ``CONFIRM_NUDGE_S`` in
     :mod:`.transactional_record_collector` for why: the embedded broker answers a commit before
     it completes it).

Outages (Kafka Streams' ``task.timeout.ms``): step 2 waits through a broker outage for up to the
producer's delivery timeout (librdkafka then fails the records, and the production handler
decides) or ``task_timeout_ms`` if longer; step 3 retries transient errors for up to
``task_timeout_ms``; transient consumer errors are not raised (librdkafka reconnects by
itself). The outage is logged once when it begins and once when it ends, with its duration
(:mod:`streams_runtime.kafka.outage`). So an outage shorter than those limits stalls the thread and
nothing fails; only a longer one reaches the handlers.

Exactly-once, per task: step 1 as above (changelog and downstream records join the task's
transaction); steps 2-4 are the task's transaction, run by the producer side: flush, add the
task's input offsets (``send_offsets_to_transaction`` with the consumer's group metadata, group =
application id), commit -- outputs, changelog records and offsets become visible together or not
at all. ``post_commit`` then only records the changelog offsets in memory: the checkpoint waits
for a clean close. A fenced task is handed to ``on_migrated``; the other tasks still commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError, TaskMigratedError
from streams_runtime.kafka.clients import KafkaError, TopicPartition
from streams_runtime.kafka.offsets import is_partition_eof
from streams_runtime.kafka.outage import broker_outage
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.internals.tasks import Tasks

if TYPE_CHECKING:  # types only
    from streams_runtime.kafka.client_supplier import ConsumerClient
    from streams_runtime.processor.internals.producer_side import ProducerSide

__all__ = ["TaskExecutor"]

log = logging.getLogger("streams_runtime.processor")

#: The longest a task waits for records of an empty input that are on the broker but not fetched.
#: Kafka Streams waits without a bound, reading the lag up to the last stable offset; librdkafka
#: caches the high watermark, which stays above the position while a transaction upstream is
#: open, so that wait is bounded here.
FETCH_WAIT_MS = 1_000


@dataclass(eq=False, slots=True)
class TaskExecutor:
    """See the module docstring.

    :param registry: the thread's tasks.
    :param consumer: the thread's consumer (offset commits, group metadata).
    :param producers: the thread's producer side (``commit_tasks``).
    :param on_migrated: called with the ids of tasks found fenced.
    """

    registry: Tasks
    consumer: ConsumerClient
    producers: ProducerSide
    on_migrated: Callable[[Iterable[Any]], None]
    _: KW_ONLY
    max_task_idle_ms: int
    task_timeout_ms: int

    def add_records(
        self, messages: list[Any], check_run: Callable[[str, int, list[Any]], None] | None = None
    ) -> None:
        """Hand a poll batch to the queues of the partitions it holds: the messages themselves,
        one list per run of consecutive messages of a partition (a fetch answers partition by
        partition), each run first to ``check_run`` when given (the thread's source partitioning
        check: the batch is cut into runs once). A message of a partition revoked since the fetch
        is dropped."""
        adders = self.registry.input_adders
        topic: Any = None
        partition = -1
        run: list[Any] = []
        for msg in messages:
            if msg.error() is not None:
                self._consumer_error(msg.error())
                continue
            p = msg.partition()
            if p != partition or msg.topic() != topic:
                if run:
                    self._add_run(adders, topic, partition, run, check_run)
                topic, partition, run = msg.topic(), p, []
            run.append(msg)
        if run:
            self._add_run(adders, topic, partition, run, check_run)

    @staticmethod
    def _add_run(
        adders: Mapping[tuple[str, int], Callable[[list[Any]], None]],
        topic: str,
        partition: int,
        run: list[Any],
        check_run: Callable[[str, int, list[Any]], None] | None,
    ) -> None:
        if check_run is not None:
            check_run(topic, partition, run)
        add = adders.get((topic, partition))
        if add is not None:
            add(run)

    def _consumer_error(self, error: KafkaError) -> None:
        """A consumer event: EOF is skipped; a transient error (broker unreachable, a request
        timed out: librdkafka retries by itself) is an outage signal (:mod:`~streams_runtime.kafka.outage`:
        one WARNING per outage); a fatal one fails the thread."""
        if is_partition_eof(error):
            return
        if error.fatal():
            raise StreamsError(f"consumer error: {error}")
        broker_outage().unreachable(f"consumer: {error}")

    def process(self, now_ms: int) -> int:
        """Process every buffered record of every processable task; return how many (0 in the
        iteration where a task turned out fenced: it is closed and the rest go on next time)."""
        try:
            waiting = self.producers.confirm_commits(self.consumer)
            return self._process(now_ms, waiting)
        except TaskMigratedError as exc:
            self.on_migrated(exc.task_ids)
            return 0

    def _process(self, now_ms: int, waiting: set[Any]) -> int:
        total = 0
        for task in self.registry.running():
            if waiting and task.id in waiting:  # commit step 5: no new transaction yet
                continue
            queues = task.multi_queues
            if queues is not None and not self._processable(task, queues, now_ms):
                continue
            n = 0
            if queues is None:
                n = task.process_all()
            else:
                process = task.process
                while all(q.head is not None for q in queues) and process():
                    n += 1
                if task.idle_since is not None:  # enforced: drain what is buffered
                    while process():
                        n += 1
            if n:
                task.processed_sensor.increment(n)
                task.maybe_punctuate_stream_time()
                total += n
        return total

    def _processable(self, task: StreamTask, queues: list[Any], now_ms: int) -> bool:
        """A task with several inputs, one empty, waits for records of it on the broker, then up
        to max_task_idle_ms for new ones (module docstring)."""
        if all(q.head is not None for q in queues):
            task.idle_since = task.fetch_wait_since = None
            return True
        if not any(q.head is not None for q in queues):
            return False
        if self.max_task_idle_ms < 0:
            return True
        if self._unfetched(queues):
            if task.fetch_wait_since is None:
                task.fetch_wait_since = now_ms
            if now_ms - task.fetch_wait_since < FETCH_WAIT_MS:
                task.idle_since = None
                return False
        else:
            task.fetch_wait_since = None
        if task.idle_since is None:
            task.idle_since = now_ms
        return now_ms - task.idle_since >= self.max_task_idle_ms

    def _unfetched(self, queues: list[Any]) -> bool:
        """Whether an empty queue's partition may have records on the broker that the consumer has
        not fetched: its lag is unknown (no fetch answered yet) or positive."""
        empty = [TopicPartition(q.topic, q.partition) for q in queues if q.head is None]
        try:
            for tp in self.consumer.position(empty):
                low, high = self.consumer.get_watermark_offsets(tp, cached=True)
                if high is None or high < 0:
                    return True
                if (tp.offset < 0 and high > low) or 0 <= tp.offset < high:
                    return True
        except Exception:  # noqa: BLE001 - no lag known: wait no longer than max_task_idle_ms
            return False
        return False

    def punctuate(self) -> None:
        waiting = self.producers.unconfirmed_tasks()
        try:
            for task in self.registry.running():
                if task.id not in waiting:
                    task.maybe_punctuate_system_time()
        except TaskMigratedError as exc:
            self.on_migrated(exc.task_ids)

    # ------------------------------------------------------------------ commit
    def commit(self, tasks: Iterable[StreamTask]) -> int:
        """The commit protocol of the module docstring, for either guarantee: step 1 for every
        task, steps 2-3 (2-4 under exactly-once) by the producer side, then each committed task's
        ``post_commit`` (changelog offsets; the checkpoint, unless exactly-once). A fenced task is
        closed dirty and the others still commit; any other error is raised after every task was
        tried. Returns the number of input offsets committed."""
        migrated: set[Any] = set()
        pending = []
        for task in tasks:
            try:
                task.commit()  # Step 1
            except TaskMigratedError as exc:
                migrated |= exc.task_ids
                continue
            last = task.committed_offsets
            consumed = [(tp, o) for tp, o in task.consumed_offsets.items() if last.get(tp) != o]
            pending.append((task, consumed))
        outcomes = self.producers.commit_tasks(  # Steps 2-4
            [(t.id, [TopicPartition(tp[0], tp[1], o + 1) for tp, o in consumed]) for t, consumed in pending],
            self.consumer,
            self.task_timeout_ms,
        )
        count = 0
        failure = None
        for (task, consumed), outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, TaskMigratedError):
                migrated |= outcome.task_ids
                continue
            if isinstance(outcome, BaseException):
                failure = failure or outcome
                continue
            if outcome:
                task.committed_offsets.update(consumed)
                count += len(consumed)
            task.post_commit()
        if migrated:
            self.on_migrated(migrated)
        if failure is not None:
            raise failure
        return count
