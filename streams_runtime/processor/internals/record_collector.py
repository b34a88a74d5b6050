"""StreamsProducer and RecordCollector: the producer side of one StreamThread.

Created and owned by a StreamThread; the thread's tasks borrow the collector (their sinks and
change-logging stores call :meth:`RecordCollector.send`), the TaskManager calls
:meth:`RecordCollector.wait_for_acks` at commit step 2.

``StreamsProducer`` is the one seam around the confluent producer: produce, poll, flush, close.
Exactly-once adds ``begin/commit/abort_transaction`` and ``send_offsets`` there, and
nothing else has to change; under at-least-once it is a plain producer with its own batching
(``linger.ms``).

Partitioning: a record with an explicit partition (changelogs: the task's partition; a sink
partitioner) goes there; otherwise the producer's ``murmur2_random`` partitioner places it, which
is Kafka's DefaultPartitioner (murmur2 of the key bytes) for keyed records.

Delivery reports come back through one producer-level callback while the producer is polled
(once per thread loop and during flush, never per record):
  - an error is kept and raised by the next ``send``/``poll``/``wait_for_acks`` (the thread fails, the
    uncaught-exception policy decides), or logged and skipped under
    ``default_production_exception_handler=continue``;
  - an error ``producer.produce`` raises at once (the record never left the process: larger than
    the producer's ``message.max.bytes``, unknown partition, ...) goes through the same handler:
    ``fail`` raises :class:`ProductionError` naming the topic, the record's size and the cause,
    ``continue`` logs and skips the record (counted in :attr:`RecordCollector.skipped`). Only a
    full local queue is not an error: the producer serves delivery reports and tries again;
  - the offset of every record written to a changelog topic is kept in :attr:`changelog_offsets`
    ``{(topic, partition): last offset}`` for the state managers' checkpoints.
With no changelog topic in the topology, librdkafka reports errors only (no per-record callback).

Exactly-once (``processing_guarantee="exactly_once_v2"``, docs/decisions/0002-membership-and-data-path.md:
EOS-alpha style): the thread's
collector is a :class:`TaskRecordCollectors`, which gives every active task its own
:class:`TransactionalRecordCollector` with ``transactional.id = <application_id>-<task_id>``.
The id is stable per task and the assignment runs each task on one thread of one instance, so
``init_transactions()`` at task creation fences any zombie still holding the task. A transaction
begins lazily before the task's first send after a commit; :meth:`TransactionalRecordCollector.commit`
flushes, adds the task's input offsets (``send_offsets_to_transaction``, group = application id)
and commits: outputs, repartition and changelog records and input offsets are one transaction.
Errors: a fenced producer (``PRODUCER_FENCED``, ``INVALID_PRODUCER_EPOCH``, ...) raises
:class:`TaskMigratedError` (the TaskManager closes the task dirty and rejoins); any other error
raises :class:`TransactionError` after aborting the transaction when it is abortable.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from streams_runtime.errors import ProductionError, StreamsError, TaskMigratedError, TransactionError
from streams_runtime.kafka.clients import KafkaError, KafkaException, Producer, create_producer

__all__ = ["ProductionError", "RecordCollector", "TaskRecordCollectors", "TransactionalRecordCollector"]

log = logging.getLogger("streams_runtime.processor")


#: librdkafka's default ``message.max.bytes`` (the largest record a producer accepts)
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000


def record_size(key: bytes | None, value: bytes | None, headers: Any) -> int:
    """The bytes librdkafka counts against ``message.max.bytes``: key, value and headers."""
    size = len(key or b"") + len(value or b"")
    for name, header in headers or ():
        size += len(name) + len(header or b"") + 10  # two varint lengths, at most 5 bytes each
    return size


#: librdkafka's default ``delivery.timeout.ms`` (alias ``message.timeout.ms``)
DEFAULT_DELIVERY_TIMEOUT_MS = 300_000
#: how often a commit blocked on unacknowledged records says so
_WAIT_LOG_EVERY_S = 10.0


def delivery_timeout_ms(overrides: Mapping[str, Any]) -> int:
    value = overrides.get("delivery.timeout.ms", overrides.get("message.timeout.ms"))
    return DEFAULT_DELIVERY_TIMEOUT_MS if value is None else int(value)


def ack_wait_s(delivery_timeout: int, task_timeout_ms: int) -> float:
    """How long a commit waits for acknowledgements: the producer's delivery timeout (after which
    librdkafka fails each record and the production handler decides) plus a margin, or the task
    timeout when that is longer."""
    return max(delivery_timeout + 5_000, task_timeout_ms) / 1000


def _is_record_error(err: Any) -> bool:
    """A synchronous produce error about this one record (the producer itself is fine)."""
    return not err.fatal() and err.code() not in FENCED_ERROR_CODES and err.code() not in _PRODUCER_STATE


#: error codes that mean "a newer producer owns this transactional id" (Kafka Streams treats the
#: same set as TaskMigrated): fenced, stale epoch, producer id unknown to the coordinator
FENCED_ERROR_CODES = frozenset(
    {
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
        KafkaError._FENCED,  # noqa: SLF001
        KafkaError.UNKNOWN_PRODUCER_ID,
        KafkaError.INVALID_PRODUCER_ID_MAPPING,
    }
)
#: librdkafka refuses sends with _FATAL once the producer hit a fatal error, whose cause it
#: raises once from poll (fencing, in practice, for a transactional producer); when the cause was
#: not seen, the task is treated as migrated: re-creating it either works (it was fenced) or
#: surfaces the real, persistent error at ``init_transactions``
_FATAL = KafkaError._FATAL  # noqa: SLF001
#: produce errors that describe the producer's state, not the record (never skipped by ``continue``)
_PRODUCER_STATE = frozenset({_FATAL, KafkaError._STATE})  # noqa: SLF001


class StreamsProducer:
    """The thread's producer (see the module docstring); the seam transactions are added at."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Mapping[str, Any],
        on_delivery: Any,
        errors_only: bool,
    ) -> None:
        config = {
            "client.id": client_id,
            "partitioner": "murmur2_random",
            "linger.ms": 5,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
            "on_delivery": on_delivery,
        }
        if errors_only:
            config["delivery.report.only.error"] = True
        config.update(overrides)
        self.producer: Producer = create_producer(bootstrap_servers, config)

    def produce(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: int,
        headers: Any,
    ) -> None:
        produce = self.producer.produce
        while True:
            try:
                if partition is None:
                    produce(topic, value, key, timestamp=timestamp, headers=headers)
                else:
                    produce(topic, value, key, partition, timestamp=timestamp, headers=headers)
                return
            except BufferError:  # local queue full: serve delivery reports, then retry
                self.producer.poll(0.05)

    def poll(self) -> None:
        self.producer.poll(0)

    def flush(self, timeout_s: float) -> int:
        return self.producer.flush(timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        self.producer.flush(timeout_s)
        self.producer.close()

    # ------------------------------------------------------------------ transactions (exactly-once)
    def init_transactions(self, timeout_s: float) -> None:
        self.producer.init_transactions(timeout_s)

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def send_offsets(self, offsets: list[Any], group_metadata: Any, timeout_s: float) -> None:
        self.producer.send_offsets_to_transaction(offsets, group_metadata, timeout_s)

    def commit_transaction(self, timeout_s: float) -> None:
        self.producer.commit_transaction(timeout_s)

    def abort_transaction(self, timeout_s: float) -> None:
        self.producer.abort_transaction(timeout_s)


class RecordCollector:
    """Sends the records of one thread's tasks; see the module docstring."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Mapping[str, Any],
        changelog_topics: Iterable[str],
        continue_on_error: bool = False,
    ) -> None:
        self._changelog_topics = frozenset(changelog_topics)
        self.changelog_offsets: dict[tuple[str, int], int] = {}
        self._error: BaseException | None = None
        self._continue_on_error = continue_on_error
        #: the largest record the producer accepts (dead-letter records are bounded by it)
        self.max_message_bytes = int(overrides.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES))
        #: records skipped under ``default_production_exception_handler=continue``
        self.skipped = 0
        #: librdkafka fails a record with _MSG_TIMED_OUT after this long (then the handler decides)
        self.delivery_timeout_ms = delivery_timeout_ms(overrides)
        self.producer = StreamsProducer(
            bootstrap_servers, client_id, overrides, self._on_delivery, not self._changelog_topics
        )
        self._produce = self.producer.produce

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: tuple,
        timestamp: int,
        partition: int | None,
    ) -> None:
        if self._error is not None:
            self._raise_error()
        try:
            self._produce(topic, key, value, partition, timestamp, list(headers) if headers else None)
        except KafkaException as exc:
            err = exc.args[0]
            if not _is_record_error(err):
                raise ProductionError(f"error sending record to topic {topic}: {err}") from exc
            self._refused(topic, key, value, headers, err)

    def _refused(self, topic: str, key: Any, value: Any, headers: Any, err: Any) -> None:
        """``produce`` refused one record (see the module docstring): the production handler decides."""
        what = (
            f"record of {record_size(key, value, headers)} bytes for topic {topic} refused by the "
            f"producer (message.max.bytes={self.max_message_bytes}): {err.name()}: {err.str()}"
        )
        if self._continue_on_error:
            self.skipped += 1
            log.warning("%s; skipped (default_production_exception_handler=continue)", what)
            return
        raise ProductionError(f"{what} (default_production_exception_handler=fail)")

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            if self._continue_on_error:
                self.skipped += 1
                log.warning(
                    "Error sending record to topic %s: %s; skipped "
                    "(default_production_exception_handler=continue)",
                    msg.topic(),
                    err,
                )
                return
            if self._error is None:
                self._error = ProductionError(
                    f"error sending record to topic {msg.topic()} partition {msg.partition()}: {err}"
                )
            return
        topic = msg.topic()
        if topic in self._changelog_topics:
            self.changelog_offsets[(topic, msg.partition())] = msg.offset()

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        raise error

    def poll(self) -> None:
        """Serve delivery reports (once per thread loop); raise a delivery error if one came."""
        self.producer.poll()
        if self._error is not None:
            self._raise_error()

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        """Commit step 2: wait until every record sent so far is acknowledged (or failed).

        An outage is ridden out: the wait lasts up to :func:`ack_wait_s` (the producer's delivery
        timeout, after which librdkafka fails the records and the production handler decides,
        or ``task_timeout_ms`` if longer), logging every 10 s while records are outstanding.
        Not named ``flush``: StreamTask.commit() calls a collector's ``flush`` per task, and the
        producer must be flushed once per commit, after every task's stores (step 1).
        """
        limit_s = ack_wait_s(self.delivery_timeout_ms, task_timeout_ms)
        remaining = self._flush_patiently(limit_s)
        if self._error is not None:
            self._raise_error()
        if remaining:
            raise ProductionError(
                f"{remaining} records were not acknowledged within {limit_s:.0f}s "
                f"(delivery.timeout.ms={self.delivery_timeout_ms}, task_timeout_ms={task_timeout_ms})"
            )

    def _flush_patiently(self, limit_s: float) -> int:
        started = time.monotonic()
        deadline, next_log = started + limit_s, started + _WAIT_LOG_EVERY_S
        while True:
            remaining = self.producer.flush(min(1.0, max(0.0, deadline - time.monotonic())))
            now = time.monotonic()
            if not remaining or self._error is not None or now >= deadline:
                if remaining == 0 and now - started >= _WAIT_LOG_EVERY_S:
                    log.warning("every record acknowledged after %.0fs; commit goes on", now - started)
                return remaining
            if now >= next_log:
                next_log = now + _WAIT_LOG_EVERY_S
                log.warning(
                    "%d records not acknowledged for %.0fs (broker unreachable?); waiting up to %.0fs",
                    remaining,
                    now - started,
                    limit_s,
                )

    def close(self, timeout_s: float = 10.0) -> None:
        self.producer.close(timeout_s)


def _kafka_error(exc: BaseException) -> Any:
    """The KafkaError of a confluent exception. A SystemError means a delivery report was served
    while librdkafka raised a fatal error (the callback ran with that exception pending): a
    fatal error whose cause is lost, reported as ``_FATAL``."""
    if isinstance(exc, KafkaException):
        return exc.args[0]
    return KafkaError(_FATAL, f"fatal producer error ({exc})", fatal=True)


#: Commit the transactions of a thread's tasks concurrently (N tasks: about one round trip instead
#: of N). Off: against Tansu 0.6, concurrent EndTxn of several producers writing the same
#: partitions now and then leaves a committed transaction "open" for read_committed readers (the
#: last stable offset stops moving; 5 failures in ~20 runs of the exactly-once tests with it on,
#: none in 14 runs with it off). Apache Kafka has no such race; measure before turning it on.
PARALLEL_COMMITS = False

#: Step 5 of an exactly-once commit (the TaskManager's): a task whose last transaction committed
#: input offsets begins no new transaction until the group shows those offsets committed. Apache
#: Kafka enforces this itself (the transaction coordinator answers CONCURRENT_TRANSACTIONS until the
#: previous transaction, markers and offsets, is complete). The embedded broker (Tansu 0.6) does
#: not: it answers EndTxn at once, writes the COMMIT markers, but completes the transaction (moves
#: the last stable offset, commits the offsets) only once every transaction overlapping it on a
#: partition has ended too; a new transaction of the same producer meanwhile takes over the pending
#: one, and if that new one is aborted (its producer killed and fenced) the pending offsets are
#: dropped while its records keep their COMMIT markers: the next owner reprocesses input whose
#: output and changelog records are already committed. While the offsets do not show, the same
#: offsets are committed again in a transaction without records, which on Tansu re-runs the
#: completion check (a no-op on Kafka): first after this many seconds, then at doubling intervals up
#: to :data:`CONFIRM_NUDGE_MAX_S` (a long wait, e.g. for a killed owner's transaction to be aborted,
#: does not load the broker).
CONFIRM_NUDGE_S = 0.25
CONFIRM_NUDGE_MAX_S = 2.0

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

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Mapping[str, Any],
        changelog_topics: Iterable[str],
        *,
        task_id: Any,
        transactional_id: str,
        init_timeout_s: float = 60.0,
        continue_on_error: bool = False,
    ) -> None:
        config = {
            "transaction.timeout.ms": DEFAULT_TRANSACTION_TIMEOUT_MS,
            **overrides,
            "transactional.id": transactional_id,
        }
        super().__init__(bootstrap_servers, client_id, config, changelog_topics, continue_on_error)
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
        self._send_in_transaction = self.producer.produce
        self._produce = self._begin_then_produce
        self._call(self.producer.init_transactions, "initializing transactions", init_timeout_s)

    # ------------------------------------------------------------------ sending
    def _begin_then_produce(self, *args: Any) -> None:
        self._call(self.producer.begin_transaction, "beginning a transaction")
        self.in_transaction = True
        self._produce = self._send_in_transaction
        self._send_in_transaction(*args)

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: tuple,
        timestamp: int,
        partition: int | None,
    ) -> None:
        if self._error is not None:
            self._raise_error()
        try:
            self._produce(topic, key, value, partition, timestamp, list(headers) if headers else None)
        except (KafkaException, SystemError) as exc:
            err = _kafka_error(exc)
            if isinstance(exc, KafkaException) and _is_record_error(err) and self._error is None:
                # the record never joined the transaction (refused locally): the handler decides
                self._refused(topic, key, value, headers, err)
                return
            # the producer is in an error state: find out why
            self._keep(self._classify(err, f"sending to topic {topic}"))
            self.serve()  # librdkafka raises the cause (e.g. _FENCED) from poll
            self._raise_error()

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._keep(self._classify(err, f"sending to topic {msg.topic()} partition {msg.partition()}"))
            return
        topic = msg.topic()
        if topic in self._changelog_topics:
            self.changelog_offsets[(topic, msg.partition())] = msg.offset()

    def _keep(self, error: StreamsError) -> None:
        """Keep the first error, except that a fencing error wins over any other: after a fatal
        fencing librdkafka reports the purged records (_PURGE_QUEUE) and refuses sends (_FATAL)."""
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
        return TransactionError(
            f"task {self.task_id}: transactional producer {self.transactional_id!r} "
            f"failed while {what}: {err.name()}: {err.str()}"
        )

    def _call(self, fn: Any, what: str, *args: Any) -> Any:
        """Run a transactional call; retry retriable errors (a commit may be retried), translate
        the rest: TaskMigratedError when fenced, else abort if abortable and TransactionError."""
        for attempt in range(3):
            try:
                return fn(*args)
            except (KafkaException, SystemError) as exc:
                err = _kafka_error(exc)
                if err.retriable() and not err.fatal() and attempt < 2:
                    log.warning(
                        "task %s: retrying after a retriable error while %s: %s", self.task_id, what, err
                    )
                    continue
                error = self._classify(err, what)
                if err.txn_requires_abort() and not isinstance(error, TaskMigratedError):
                    self.abort()
                raise error from exc
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ commit and abort
    def commit(self, offsets: list[Any], group_metadata: Any, task_timeout_ms: int = 0) -> bool:
        """Exactly-once commit steps 2-4 for this task (step 1, flushing the task's stores, is the
        caller's): 2. flush: every record sent in the transaction is acknowledged (the delivery
        reports record the changelog offsets); 3. add the input ``offsets`` (next offsets to
        read) to the transaction; 4. commit. Nothing is visible to read_committed readers, and no
        input offset is committed, before step 4 succeeds; a crash before it aborts them together.

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
            if not isinstance(self._error, TaskMigratedError):
                self.abort()
            self._raise_error()
        if remaining:
            self.abort()
            raise TransactionError(
                f"task {self.task_id}: {remaining} records were not acknowledged "
                f"within {timeout_s}s; transaction aborted"
            )
        # Step 3
        if offsets:
            self._call(
                self.producer.send_offsets,
                "adding the input offsets to the transaction",
                offsets,
                group_metadata,
                timeout_s,
            )
        # Step 4
        self._call(self.producer.commit_transaction, "committing the transaction", timeout_s)
        self.in_transaction = False
        self._produce = self._begin_then_produce
        if offsets:  # Step 5 (the TaskManager's): the task waits until they read back as committed
            self.unconfirmed = list(offsets)
            self._group_metadata = group_metadata
            self._confirm_timeout_s = timeout_s
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
        if self.fenced:
            return  # a fenced producer cannot abort; the new owner's init_transactions did
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

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Mapping[str, Any],
        changelog_topics: Iterable[str],
        application_id: str,
        continue_on_error: bool = False,
    ) -> None:
        self._continue_on_error = continue_on_error
        self.max_message_bytes = int(overrides.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES))
        self._bootstrap_servers = bootstrap_servers
        self._client_id = client_id
        self._overrides = dict(overrides)
        self._changelog_topics = frozenset(changelog_topics)
        self._application_id = application_id
        self._collectors: dict[Any, TransactionalRecordCollector] = {}
        self._prepared: dict[Any, TransactionalRecordCollector] = {}  # initialized, task not created yet
        self._pool: ThreadPoolExecutor | None = None  # commits of several tasks at once

    def transactional_id(self, task_id: Any) -> str:
        return f"{self._application_id}-{task_id}"

    def _new(self, task_id: Any) -> TransactionalRecordCollector:
        return TransactionalRecordCollector(
            self._bootstrap_servers,
            f"{self._client_id}-{task_id}",
            self._overrides,
            self._changelog_topics,
            task_id=task_id,
            transactional_id=self.transactional_id(task_id),
            continue_on_error=self._continue_on_error,
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

    def for_task(self, task_id: Any) -> TransactionalRecordCollector:
        """The task's transactional collector (``init_transactions`` has fenced any zombie)."""
        self.release(task_id, clean=False)
        collector = self._prepared.pop(task_id, None) or self._new(task_id)
        self._collectors[task_id] = collector
        return collector

    def get(self, task_id: Any) -> TransactionalRecordCollector:
        return self._collectors[task_id]

    def release(self, task_id: Any, clean: bool) -> None:
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

    def unconfirmed_tasks(self) -> set[Any]:
        """Tasks whose last commit's input offsets the group does not show yet (step 5)."""
        return {task_id for task_id, c in self._collectors.items() if c.unconfirmed}

    def commit_all(self, commits: list[tuple[Any, list[Any], Any]], task_timeout_ms: int = 0) -> list[Any]:
        """Steps 2-4 of several tasks' transactions: ``(task_id, offsets, group_metadata)`` each;
        returns per task what :meth:`TransactionalRecordCollector.commit` returned or the
        exception it raised. One after the other unless :data:`PARALLEL_COMMITS` (then on a pool,
        each collector touched by one pool thread while the stream thread waits)."""

        def one(item: tuple[Any, list[Any], Any]) -> Any:
            task_id, offsets, group_metadata = item
            try:
                return self._collectors[task_id].commit(offsets, group_metadata, task_timeout_ms)
            except Exception as exc:  # sorted out by the caller, per task
                return exc

        if not PARALLEL_COMMITS or len(commits) <= 1:
            return [one(item) for item in commits]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix=f"{self._client_id}-commit")
        return list(self._pool.map(one, commits))

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        for collector in self._collectors.values():
            collector.wait_for_acks(task_timeout_ms)

    def close(self, timeout_s: float = 10.0) -> None:
        for task_id in [*self._collectors, *self._prepared]:
            self.release(task_id, clean=False)
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def create_record_collector(
    config: Any, bootstrap_servers: str, client_id: str, changelog_topics: Iterable[str]
) -> RecordCollector | TaskRecordCollectors:
    """The collector of one StreamThread: a shared RecordCollector under at-least-once, one
    transactional collector per task (:class:`TaskRecordCollectors`) under exactly_once_v2."""
    overrides = config.client_configs("producer.")
    continue_on_error = config["default_production_exception_handler"] == "continue"
    if config["processing_guarantee"] == "exactly_once_v2":
        return TaskRecordCollectors(
            bootstrap_servers,
            client_id,
            overrides,
            changelog_topics,
            config["application_id"],
            continue_on_error,
        )
    return RecordCollector(bootstrap_servers, client_id, overrides, changelog_topics, continue_on_error)
