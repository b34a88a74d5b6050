"""Exactly-once collectors: one transactional producer per active task.

``processing_guarantee="exactly_once_v2"`` (see docs/architecture.md, "The exactly-once model"):
the thread's producer side is a :class:`TaskRecordCollectors`, which gives every active task its
own :class:`TransactionalRecordCollector` with ``transactional.id = <application_id>-<task_id>``.
The id is stable per task and the assignment runs each task on one thread of one instance, so
``init_transactions()`` at task creation fences any zombie still holding the task (membership does
not use the application's own group, so a group generation could not fence it). A transaction
begins lazily before the task's first send after a commit;
:meth:`TransactionalRecordCollector.commit` flushes, adds the task's input offsets
(``send_offsets_to_transaction``, group = application id) and commits: outputs, repartition and
changelog records and input offsets are one transaction.

Errors: a fenced producer (``PRODUCER_FENCED``, ``INVALID_PRODUCER_EPOCH``, ...) raises
:class:`TaskMigratedError` (the TaskManager closes the task dirty and rejoins); an error a failing
cluster causes (a timeout, a lost leader, too few in-sync replicas: ``CLUSTER_ERROR_CODES``)
aborts the transaction and raises :class:`TaskCorruptedError`, handled the same way
(the task starts again from its last commit, its state restored); any other error raises
:class:`TransactionError` after aborting the transaction when it is abortable.

:class:`TaskRecordCollectors` offers the TaskManager the same interface as the at-least-once
:class:`~.record_collector.SharedRecordCollectors` (``for_task``, ``prepare``, ``release``,
``commit_tasks``, ``poll``, ``close``), so the TaskManager has one commit path for both.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from streams_runtime.errors import StreamsError, TaskCorruptedError, TaskMigratedError, TransactionError
from streams_runtime.kafka.clients import KafkaError, KafkaException, TopicPartition
from streams_runtime.processor.internals.record_collector import (
    _FATAL,
    CLUSTER_ERROR_CODES,
    DEFAULT_MAX_MESSAGE_BYTES,
    FENCED_ERROR_CODES,
    ProducerSettings,
    RecordCollector,
    _is_record_error,
    _kafka_error,
    ack_wait_s,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["TaskRecordCollectors", "TransactionalRecordCollector"]

_TIMED_OUT = KafkaError._TIMED_OUT  # noqa: SLF001

log = logging.getLogger("streams_runtime.processor")

T = TypeVar("T")


#: Commit the transactions of a thread's tasks concurrently (N tasks: about one round trip instead
#: of N). Off: against Tansu 0.6, concurrent EndTxn of several producers writing the same
#: partitions now and then leaves a committed transaction "open" for read_committed readers (the
#: last stable offset stops moving; 5 failures in ~20 runs of the exactly-once tests with it on,
#: none in 14 runs with it off). The cause, and the gate that now serializes transaction ends of
#: every producer on the host, are in :mod:`streams_runtime.brokers.tansu.end_txn_gate`: on the embedded
#: broker the pool's commits would queue on that gate anyway. Apache Kafka has no such race;
#: measure before turning it on there.
PARALLEL_COMMITS = False

#: Commit step 5 (exactly-once): a task whose last transaction committed input offsets begins no
#: new transaction until the group shows those offsets committed. Apache Kafka enforces this itself
#: (the transaction coordinator answers CONCURRENT_TRANSACTIONS until the previous transaction,
#: markers and offsets, is complete). The embedded broker (Tansu 0.6) does not: it answers EndTxn at
#: once and writes the COMMIT markers, but completes the transaction (moves the last stable offset,
#: commits the offsets) only once every transaction overlapping it on a partition has ended too; a
#: new transaction of the same producer meanwhile takes over the pending one, and if that new one is
#: aborted (its producer killed and fenced) the pending offsets are dropped while its records keep
#: their COMMIT markers: the next owner would reprocess input whose output and changelog records are
#: already committed. While the offsets do not show, the same offsets are committed again in a
#: transaction without records, which on Tansu re-runs the completion check (a no-op on Kafka):
#: first after this many seconds, then at doubling intervals up to :data:`CONFIRM_NUDGE_MAX_S`.
CONFIRM_NUDGE_S = 0.25
CONFIRM_NUDGE_MAX_S = 2.0
#: how long one read of the group's committed offsets (step 5) may take
CONFIRM_READ_TIMEOUT_S = 5.0

#: the longest one transactional call (adding the offsets, committing, initializing) may block:
#: the Java producer's ``max.block.ms`` default. A call that times out is not tried again on the
#: same producer: librdkafka keeps asking the group or transaction coordinator it has cached,
#: even after that broker left the cluster (seen for minutes on a 3-node cluster after the
#: coordinator's node was killed), so the task is reported corrupted instead, and its new
#: producer (``init_transactions`` fences the old one and aborts its transaction) looks the
#: coordinator up afresh.
TRANSACTION_CALL_TIMEOUT_S = 60.0

#: Kafka Streams' transaction timeout under exactly-once (librdkafka's default is 60 s): a hung
#: transaction is aborted by the broker after this long (user ``producer.`` overrides win)
DEFAULT_TRANSACTION_TIMEOUT_MS = 10_000


class TransactionalRecordCollector(RecordCollector):
    """The collector of one active task under exactly-once (see the module docstring).

    Created by :meth:`TaskRecordCollectors.for_task` when the TaskManager creates the task (the
    constructor runs ``init_transactions``, fencing any zombie with the same transactional id);
    released with the task. Not thread-safe: used by the stream thread, or by one thread of the
    commit pool (:meth:`TaskRecordCollectors.commit_all`) while the stream thread waits.

    Transaction state: ``in_transaction`` is False after a commit or an abort; the next
    :meth:`send` begins a transaction first (the bound ``_produce`` is swapped, so a send inside a
    transaction pays nothing extra).
    """

    eos_enabled = True
    #: errors only, as under at-least-once: the task counts its changelog offsets, with one
    #: transaction marker per committed transaction that wrote a partition (StreamTask.post_commit)
    reports_only_errors = True
    #: a SystemError: a delivery report served while librdkafka raised a fatal error
    _send_errors = (KafkaException, SystemError)

    def __init__(
        self,
        settings: ProducerSettings,
        *,
        task_id: object,
        transactional_id: str,
        init_timeout_s: float = TRANSACTION_CALL_TIMEOUT_S,
    ) -> None:
        config = {
            "transaction.timeout.ms": DEFAULT_TRANSACTION_TIMEOUT_MS,
            **settings.overrides,
            "transactional.id": transactional_id,
        }
        super().__init__(replace(settings, overrides=config))
        self.task_id = task_id
        self.transactional_id = transactional_id
        self.in_transaction = False
        self.fenced = False  # set once an error says another producer holds the transactional id
        #: the input offsets of the last committed transaction, until the group shows them
        #: committed (:meth:`confirm`); meanwhile the task begins no new transaction
        self.unconfirmed: list[Any] = []
        self._group_metadata: Any = None
        self._confirm_timeout_s = 10.0
        self._nudge_every = CONFIRM_NUDGE_S
        self._nudge_at = 0.0
        self._send_in_transaction: Callable[..., None] = self.producer.produce
        self._produce = self._begin_then_produce
        self._client_produce = None  # every send goes through ``_produce`` (it begins the transaction)
        self._call(self.producer.init_transactions, "initializing transactions", init_timeout_s)

    # ------------------------------------------------------------------ sending
    def _begin_then_produce(self, *args: object) -> None:
        self._call(self.producer.begin_transaction, "beginning a transaction")
        self.in_transaction = True
        self._produce = self._send_in_transaction
        self._send_in_transaction(*args)

    def _is_refusal(self, exc: BaseException, err: KafkaError) -> bool:
        """The record never joined the transaction (refused locally): the handler decides."""
        return isinstance(exc, KafkaException) and _is_record_error(err) and self._error is None

    def _producer_failed(self, exc: BaseException, err: KafkaError, topic: str) -> None:
        """The producer is in an error state: find out why."""
        self._keep(self._classify(err, f"sending to topic {topic}"))
        self.serve()  # librdkafka raises the cause (e.g. _FENCED) from poll
        self._raise_error()

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:  # the producer reports errors only
            self._keep(self._classify(err, f"sending to topic {msg.topic()} partition {msg.partition()}"))

    def _keep(self, error: StreamsError) -> None:
        """Keep the first error, except that a fencing error wins over any other: after a fatal
        fencing librdkafka reports the purged records (_PURGE_QUEUE) and refuses sends (_FATAL)."""
        if self._error is None and isinstance(error, TaskCorruptedError):
            log.warning("%s", error)
        if self._error is None or (
            isinstance(error, TaskMigratedError) and not isinstance(self._error, TaskMigratedError)
        ):
            self._error = error

    def serve(self, flush_timeout_s: float | None = None) -> int:
        """Serve delivery reports (poll, or flush when a timeout is given) without raising: a fatal
        error librdkafka raises from poll/flush (fencing is reported that way) is kept for the
        task's next send or commit. Returns the records still unacknowledged after a flush."""
        for _ in range(2):
            try:
                if flush_timeout_s is None:
                    self.producer.poll()
                    return 0
                return self.producer.flush(flush_timeout_s)
            except (KafkaException, SystemError) as exc:
                self._keep(self._classify(_kafka_error(exc), "serving delivery reports"))
        return 0

    def _classify(self, err: Any, what: str) -> StreamsError:
        if err.code() in FENCED_ERROR_CODES or err.code() == _FATAL:
            self.fenced = True
            return TaskMigratedError(
                [self.task_id],
                f"task {self.task_id}: producer {self.transactional_id!r} was fenced while {what} "
                f"({err.name()}: {err.str()}); the task migrated to another owner",
            )
        if err.code() in CLUSTER_ERROR_CODES:
            return TaskCorruptedError(
                [self.task_id],
                f"task {self.task_id}: the transaction of {self.transactional_id!r} failed while {what} "
                f"({err.name()}: {err.str()}); aborting it and starting the task again from its last commit",
            )
        return TransactionError(
            f"task {self.task_id}: transactional producer {self.transactional_id!r} "
            f"failed while {what}: {err.name()}: {err.str()}"
        )

    def _call(self, fn: Callable[..., T], what: str, *args: object) -> T:
        """Run a transactional call; retry retriable errors but a timeout (a commit may be
        retried; see :data:`TRANSACTION_CALL_TIMEOUT_S`), translate the rest: TaskMigratedError
        when fenced, TaskCorruptedError (after an abort) for a cluster error or a timeout, else
        abort if abortable and TransactionError."""
        for attempt in range(3):
            try:
                return fn(*args)
            except (KafkaException, SystemError) as exc:
                err = _kafka_error(exc)
                if err.retriable() and not err.fatal() and err.code() != _TIMED_OUT and attempt < 2:
                    log.warning(
                        "task %s: retrying after a retriable error while %s: %s", self.task_id, what, err
                    )
                    continue
                error = self._classify(err, what)
                if (err.txn_requires_abort() or isinstance(error, TaskCorruptedError)) and not self.fenced:
                    self.abort()
                raise error from exc
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ commit and abort
    def commit(self, offsets: list[Any], group_metadata: object, task_timeout_ms: int = 0) -> bool:
        """Exactly-once commit steps 2-4 for this task (step 1, flushing the task's stores, is the
        caller's): 2. flush: every record sent in the transaction is acknowledged (the task
        counts its changelog offsets, see StreamTask.post_commit); 3. add the input ``offsets``
        (next offsets to read) to the transaction; 4. commit. Nothing is visible to read_committed
        readers, and no input offset is committed, before step 4 succeeds; a crash before it
        aborts them together.

        :returns: whether a transaction was committed (False: nothing sent, no offsets).
        """
        if not self.in_transaction:
            if not offsets:
                return False
            self._call(self.producer.begin_transaction, "beginning a transaction")
            self.in_transaction = True
            self._produce = self._send_in_transaction
        # Step 2
        timeout_s = ack_wait_s(self.delivery_timeout_ms, task_timeout_ms)
        remaining = self.serve(timeout_s)
        if self._error is not None:
            if not self.fenced:
                self.abort()
            self._raise_error()
        if remaining:
            self.abort()
            raise TaskCorruptedError(
                [self.task_id],
                f"task {self.task_id}: {remaining} records were not acknowledged "
                f"within {timeout_s}s; transaction aborted",
            )
        # Step 3
        call_timeout_s = min(timeout_s, TRANSACTION_CALL_TIMEOUT_S)
        if offsets:
            self._call(
                self.producer.send_offsets,
                "adding the input offsets to the transaction",
                offsets,
                group_metadata,
                call_timeout_s,
            )
        # Step 4
        self._call(self.producer.commit_transaction, "committing the transaction", call_timeout_s)
        self.in_transaction = False
        self._produce = self._begin_then_produce
        if offsets:  # step 5: the task waits until they read back as committed
            self.unconfirmed = list(offsets)
            self._group_metadata = group_metadata
            self._confirm_timeout_s = call_timeout_s
            self._nudge_every = CONFIRM_NUDGE_S
            self._nudge_at = time.monotonic() + self._nudge_every
        return True

    def confirm(self, committed: Mapping[tuple[str, int], int]) -> bool:
        """Step 5: whether the input offsets of the last commit are committed in the group
        (``committed``: the group's offsets as just read); clears :attr:`unconfirmed` when they
        are. While they are not, the same offsets are committed again in a transaction of their
        own, without records, at growing intervals (see :data:`CONFIRM_NUDGE_S`)."""
        if all(committed.get((tp.topic, tp.partition), -1) >= tp.offset for tp in self.unconfirmed):
            self.unconfirmed = []
            return True
        if time.monotonic() >= self._nudge_at:
            self._call(self.producer.begin_transaction, "beginning a transaction")
            self.in_transaction = True
            what = "committing the input offsets again"
            timeout_s = self._confirm_timeout_s
            self._call(self.producer.send_offsets, what, self.unconfirmed, self._group_metadata, timeout_s)
            self._call(self.producer.commit_transaction, what, timeout_s)
            self.in_transaction = False
            self._nudge_every = min(2 * self._nudge_every, CONFIRM_NUDGE_MAX_S)
            self._nudge_at = time.monotonic() + self._nudge_every
        return False

    def abort(self, timeout_s: float = 10.0) -> None:
        """Abort the open transaction, if any (best effort: a fenced producer cannot)."""
        if not self.in_transaction:
            return
        self.in_transaction = False
        self._produce = self._begin_then_produce
        if self.fenced or self.producer.wedged:
            return  # it cannot abort; the next owner's init_transactions does
        try:
            self.producer.abort_transaction(timeout_s)
        except KafkaException as exc:
            log.warning(
                "task %s: aborting the transaction of %r failed: %s",
                self.task_id,
                self.transactional_id,
                exc.args[0],
            )

    def close_dirty(self) -> None:
        """Abort the open transaction (bounded; skipped when fenced) and drop the records not yet
        sent; the producer itself closes on a daemon thread, because librdkafka's close aborts an
        open transaction again and can block on a broker that no longer answers this producer."""
        self.abort()
        if self.producer.wedged:
            return  # closed by its own helper thread once the hung call returns
        try:
            self.producer.producer.purge()
        except KafkaException:
            pass  # a producer in a fatal state has nothing left to purge
        name = f"close-{self.transactional_id}"
        threading.Thread(target=self._close_quietly, name=name, daemon=True).start()

    def _close_quietly(self) -> None:
        with warnings.catch_warnings():  # confluent warns that a fenced producer cannot abort on close
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                self.producer.close(timeout_s=1.0)
            except Exception as exc:  # nothing waits for this producer any more
                log.debug("task %s: closing a dirty producer: %s", self.task_id, exc)


class TaskRecordCollectors:
    """The thread's collector under exactly-once: one :class:`TransactionalRecordCollector` per
    active task (see the module docstring). Created and owned by a StreamThread; the TaskManager
    asks for a task's collector when it creates the task and releases it when it closes it.

    :meth:`poll` serves the delivery reports of every task's producer and raises nothing: an error
    stays with its task's collector and is raised by that task's next send or commit, where the
    TaskManager knows which task failed.
    """

    eos_enabled = True

    def __init__(self, settings: ProducerSettings, application_id: str) -> None:
        self._settings = settings
        self.max_message_bytes = int(settings.overrides.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES))
        self._application_id = application_id
        self._collectors: dict[Any, TransactionalRecordCollector] = {}
        self._prepared: dict[Any, TransactionalRecordCollector] = {}  # initialized, task not created yet
        self._pool: ThreadPoolExecutor | None = None  # commits of several tasks at once

    def transactional_id(self, task_id: object) -> str:
        return f"{self._application_id}-{task_id}"

    def _new(self, task_id: object) -> TransactionalRecordCollector:
        return TransactionalRecordCollector(
            replace(self._settings, client_id=f"{self._settings.client_id}-{task_id}"),
            task_id=task_id,
            transactional_id=self.transactional_id(task_id),
        )

    def prepare(self, task_ids: Iterable[Any]) -> None:
        """Create the collectors of tasks about to be created, their ``init_transactions`` round
        trips in parallel (each waits on the broker, not on Python); :meth:`for_task` takes them."""
        wanted = [t for t in task_ids if t not in self._collectors and t not in self._prepared]
        if len(wanted) < 2:
            return
        workers = min(8, len(wanted))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="init-transactions") as pool:
            futures = {task_id: pool.submit(self._new, task_id) for task_id in wanted}
        for task_id, future in futures.items():
            if future.exception() is None:
                self._prepared[task_id] = future.result()
            # a failure is raised again, for its task, by for_task's own attempt

    def for_task(self, task_id: object) -> TransactionalRecordCollector:
        """The task's transactional collector (``init_transactions`` has fenced any zombie)."""
        prepared = self._prepared.pop(task_id, None)  # taken first: release() would close it
        self.release(task_id, clean=False)
        collector = prepared or self._new(task_id)
        self._collectors[task_id] = collector
        return collector

    def get(self, task_id: object) -> TransactionalRecordCollector:
        return self._collectors[task_id]

    def release(self, task_id: object, clean: bool) -> None:
        """Close the task's producer: ``clean`` after its transaction committed, else abort it."""
        collector = self._collectors.pop(task_id, None) or self._prepared.pop(task_id, None)
        if collector is None:
            return
        try:
            if clean and not collector.in_transaction:
                collector.close()
            else:
                collector.close_dirty()
        except Exception:  # closing never fails the caller; the producer is gone either way
            log.exception("task %s: error closing its transactional producer", task_id)

    def poll(self) -> None:
        for collector in self._collectors.values():
            collector.serve()

    def send_now(self) -> None:
        """Nothing to send early: a transaction's outputs become visible at its commit, which
        flushes its producer; an idle flush would only make smaller batches."""

    def unconfirmed_tasks(self) -> set[Any]:
        """Tasks whose last commit's input offsets the group does not show yet (step 5)."""
        return {task_id for task_id, c in self._collectors.items() if c.unconfirmed}

    def confirm_commits(self, consumer: Any) -> set[Any]:
        """Commit step 5: read back the group's offsets of the tasks whose last commit does not
        show yet; returns the tasks still waiting (not processed, not punctuated: they begin no
        new transaction)."""
        waiting = self.unconfirmed_tasks()
        if not waiting:
            return waiting
        collectors = {t: self._collectors[t] for t in waiting}
        wanted = [TopicPartition(tp.topic, tp.partition) for c in collectors.values() for tp in c.unconfirmed]
        try:
            read = consumer.committed(wanted, timeout=CONFIRM_READ_TIMEOUT_S)
        except KafkaException as exc:  # not readable now (e.g. offsets still unstable): next time
            log.debug("reading the committed offsets back failed: %s", exc)
            return waiting
        committed = {(tp.topic, tp.partition): tp.offset for tp in read}
        for task_id, collector in collectors.items():
            if collector.confirm(committed):
                waiting.discard(task_id)
        return waiting

    def commit_all(self, commits: list[tuple[Any, list[Any], Any]], task_timeout_ms: int = 0) -> list[Any]:
        """Steps 2-4 of several tasks' transactions: ``(task_id, offsets, group_metadata)`` each;
        returns per task what :meth:`TransactionalRecordCollector.commit` returned or the
        exception it raised. One after the other unless :data:`PARALLEL_COMMITS` (then on a pool,
        each collector touched by one pool thread while the stream thread waits)."""

        def one(item: tuple[Any, list[Any], Any]) -> bool | Exception:
            task_id, offsets, group_metadata = item
            try:
                return self._collectors[task_id].commit(offsets, group_metadata, task_timeout_ms)
            except Exception as exc:  # sorted out by the caller, per task
                return exc

        if not PARALLEL_COMMITS or len(commits) <= 1:
            return [one(item) for item in commits]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=8, thread_name_prefix=f"{self._settings.client_id}-commit"
            )
        return list(self._pool.map(one, commits))

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        for collector in self._collectors.values():
            collector.wait_for_acks(task_timeout_ms)

    def in_transaction(self, task_id: object) -> bool:
        collector = self._collectors.get(task_id)
        return collector is not None and collector.in_transaction

    def commit_tasks(
        self, commits: list[tuple[Any, list[Any]]], consumer: Any, task_timeout_ms: int
    ) -> list[Any]:
        """Commit steps 2-4 for ``(task_id, offsets)`` pairs, one transaction per task (the
        consumer gives the group metadata the offsets are sent with). Returns, per task, whether
        a transaction was committed or the exception its commit raised."""
        group_metadata = None
        if any(offsets for _, offsets in commits):
            group_metadata = consumer.consumer_group_metadata()
        return self.commit_all([(t, offsets, group_metadata) for t, offsets in commits], task_timeout_ms)

    def close(self, timeout_s: float = 10.0) -> None:
        for task_id in [*self._collectors, *self._prepared]:
            self.release(task_id, clean=False)
        if self._pool is not None:
            self._pool.shutdown(wait=False)
