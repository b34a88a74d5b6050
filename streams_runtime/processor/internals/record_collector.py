"""StreamsProducer and RecordCollector: the producer side of one StreamThread.

Created and owned by a StreamThread (:func:`~.producer_side.create_record_collector`); each task
borrows its own collector (its sinks and change-logging stores call ``send``), the TaskManager calls
``commit_tasks`` for commit steps 2-3.

``StreamsProducer`` is the one seam around the confluent producer: produce, poll, flush, close.
Exactly-once adds ``begin/commit/abort_transaction`` and ``send_offsets`` there, and
nothing else has to change; under at-least-once it is a plain producer with its own batching
(``linger.ms``, :data:`DEFAULT_LINGER_MS` unless overridden): librdkafka sends one produce
request per partition and batch, and a broker's cost is mostly per request, so the linger sets
how many requests a busy thread sends (Kafka Streams lingers 100 ms; 50 ms measured best at low
rates on the embedded broker, which 5-20 ms saturate with requests). A lightly loaded thread does
not make its records wait out the linger: when its poll finds nothing after it processed fewer
than ``SEND_NOW_BELOW`` records since it last ran out of input (stream_thread), it calls
:meth:`RecordCollector.send_now` and they leave at once, so at a low rate a record's output
leaves about when it is processed; a busy thread processes large batches between its idle
moments and keeps batching by the linger (an idle flush there made W1 15-25% slower). Under
exactly-once the outputs are invisible until the commit anyway: the transactional collectors do
not flush when idle.

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
  - a changelog record that failed is counted in :attr:`failed_changelog` (the state manager's
    offsets are counted, see below).
librdkafka reports errors only, under either guarantee: no Python callback runs per record. A
task learns the changelog offsets it wrote without delivery reports: a changelog partition has
one writer, the task that owns it, so the offset of its last record is the offset its state
reflected when it started processing plus the records it sent since, minus those that failed,
plus under exactly-once one transaction marker for each committed transaction that wrote the
partition before the last one (``StreamTask.post_commit``). That is never above the truth (a
zombie's or a retry's extra records, or markers left by an earlier run, only push the real
offsets higher), and a checkpoint lower than the truth only makes a restore replay a few
records more.

One collector per task: under at-least-once every task's :class:`SharedProducerCollector` sends
through the thread's one :class:`RecordCollector` (:mod:`.shared_record_collectors`); under
exactly-once each task has its own transactional producer
(:mod:`.transactional_record_collector`). Either way the TaskManager sees one interface and one
commit path; only the producer side knows whether it is transactional (``eos_enabled``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.brokers.tansu import EndTxnGate, shared_end_txn_gate
from streams_runtime.errors import ProductionError
from streams_runtime.kafka.broker_identity import identify_broker
from streams_runtime.kafka.client_supplier import KafkaClientSupplier
from streams_runtime.kafka.clients import (
    COORDINATOR_ERRORS,
    UNREACHABLE_ERRORS,
    KafkaError,
    KafkaException,
    Producer,
)
from streams_runtime.kafka.outage import broker_outage
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER

if TYPE_CHECKING:
    from streams_runtime.processor.api import Headers

__all__ = [
    "ProductionError",
    "RecordCollector",
    "StreamsProducer",
]

log = logging.getLogger("streams_runtime.processor")


#: librdkafka's default ``message.max.bytes`` (the largest record a producer accepts)
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000


def record_size(key: bytes | None, value: bytes | None, headers: Headers) -> int:
    """The bytes librdkafka counts against ``message.max.bytes``: key, value and headers."""
    size = len(key or b"") + len(value or b"")
    for name, header in headers or ():
        size += len(name) + len(header or b"") + 10  # two varint lengths, at most 5 bytes each
    return size


#: the producer's ``linger.ms`` unless ``producer.linger.ms`` is set (see the module docstring)
DEFAULT_LINGER_MS = 50

#: how long :meth:`RecordCollector.send_now` lets librdkafka's flush run: while a flush runs the
#: producer sends without lingering, and a millisecond is enough for its network thread to take
#: the batches (``flush(0)`` returns before that thread wakes, and nothing leaves early)
SEND_NOW_S = 0.001

#: librdkafka's default ``delivery.timeout.ms`` (alias ``message.timeout.ms``)
DEFAULT_DELIVERY_TIMEOUT_MS = 300_000
#: how often a commit blocked on unacknowledged records says so
_WAIT_LOG_EVERY_S = 10.0

#: How long past its own timeout ``send_offsets_to_transaction`` is waited for. librdkafka (2.16)
#: does not enforce that call's timeout while the group coordinator is unknown (its coordinator
#: requests never check their deadline, and a coordinator whose node died can stay cached), so a
#: killed node can block the stream thread for good. The call runs on the producer's own helper
#: thread instead; when it overruns, the producer is given up as wedged (one transactional call at
#: a time: it cannot even abort), its task starts again with a new producer whose
#: ``init_transactions`` fences this one, and this one is closed once the call returns.
SEND_OFFSETS_GRACE_S = 5.0


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
#: errors a failing cluster causes (timeouts, lost leaders, too few in-sync replicas): retried by
#: the client until its timeouts run out; under exactly-once they corrupt the open transaction
CLUSTER_ERROR_CODES = (
    UNREACHABLE_ERRORS
    | COORDINATOR_ERRORS
    | {
        KafkaError._MSG_TIMED_OUT,  # noqa: SLF001
        KafkaError._TIMED_OUT_QUEUE,  # noqa: SLF001
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError.CONCURRENT_TRANSACTIONS,
    }
)
#: produce errors that describe the producer's state, not the record (never skipped by ``continue``)
_PRODUCER_STATE = frozenset({_FATAL, KafkaError._STATE})  # noqa: SLF001


class StreamsProducer:
    """The thread's producer (see the module docstring); the seam transactions are added at."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Mapping[str, Any],
        on_delivery: object,
        errors_only: bool,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
    ) -> None:
        config = {
            "client.id": client_id,
            "partitioner": "murmur2_random",
            "linger.ms": DEFAULT_LINGER_MS,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
            "on_delivery": on_delivery,
        }
        if errors_only:
            config["delivery.report.only.error"] = True
        config.update(overrides)
        self.producer: Producer = client_supplier.get_producer(bootstrap_servers, config)
        self._bootstrap_servers = bootstrap_servers
        #: transaction ends one at a time on the embedded broker (see the gate's module); known
        #: at the first transactional call, from what the broker says it is
        self._end_txn_gate: EndTxnGate | None = None
        #: the client's own ``produce(topic, value, key, partition, timestamp=, headers=)``
        #: (partition -1: the partitioner's); raises BufferError when the local queue is full
        self.client_produce: Callable[..., None] | None = getattr(self.producer, "produce", None)
        #: runs ``send_offsets_to_transaction`` (see :data:`SEND_OFFSETS_GRACE_S`); made on first use
        self._offsets_caller: ThreadPoolExecutor | None = None
        #: a transactional call overran its deadline and may still be running: nothing else may
        #: be asked of this producer (the caller starts its task again with a new one)
        self.wedged = False

    def produce(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: int,
        headers: list[tuple[str, str | bytes | None]] | None,
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
        if self.wedged:
            return  # closed by its helper thread once the hung call returns
        if self._offsets_caller is not None:
            self._offsets_caller.shutdown(wait=False)
        self.producer.flush(timeout_s)
        self.producer.close()

    # ------------------------------------------------------------------ transactions (exactly-once)
    @property
    def end_txn_gate(self) -> EndTxnGate:
        if self._end_txn_gate is None:
            identity = identify_broker(self.producer)
            self._end_txn_gate = shared_end_txn_gate(self._bootstrap_servers, enabled=identity.is_tansu)
        return self._end_txn_gate

    def init_transactions(self, timeout_s: float) -> None:
        with self.end_txn_gate.held():  # fencing a zombie ends its open transaction
            self.producer.init_transactions(timeout_s)

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def send_offsets(self, offsets: list[Any], group_metadata: object, timeout_s: float) -> None:
        """``send_offsets_to_transaction``, given up :data:`SEND_OFFSETS_GRACE_S` after its timeout
        (raised as librdkafka's own timeout error; the producer is then :attr:`wedged`)."""
        if self._offsets_caller is None:
            self._offsets_caller = ThreadPoolExecutor(1, thread_name_prefix="send-offsets")
        call = self._offsets_caller.submit(
            self.producer.send_offsets_to_transaction, offsets, group_metadata, timeout_s
        )
        deadline_s = timeout_s + SEND_OFFSETS_GRACE_S
        try:
            call.result(deadline_s)
        except FutureTimeout:
            self.wedged = True
            self._offsets_caller.submit(self._close_wedged)  # runs once the hung call returns
            self._offsets_caller.shutdown(wait=False)
            raise KafkaException(
                KafkaError(
                    KafkaError._TIMED_OUT,  # noqa: SLF001
                    f"send_offsets_to_transaction did not return within {deadline_s:g} s "
                    "(the group coordinator is unreachable); this producer is given up",
                )
            ) from None

    def _close_wedged(self) -> None:
        try:
            self.producer.close()
        except Exception as exc:  # nothing waits for this producer any more
            log.debug("closing a wedged producer: %s", exc)

    def commit_transaction(self, timeout_s: float) -> None:
        with self.end_txn_gate.held():
            self.producer.commit_transaction(timeout_s)
        broker_outage().reachable()  # the coordinator answered

    def abort_transaction(self, timeout_s: float) -> None:
        with self.end_txn_gate.held():
            self.producer.abort_transaction(timeout_s)


@dataclass(frozen=True, eq=False)
class ProducerSettings:
    """What a record collector's producer is made from (the thread's, or one per task under
    exactly-once).

    :param changelog_topics: the topics whose failed deliveries are counted per partition.
    :param continue_on_error: ``default_production_exception_handler=continue``.
    """

    bootstrap_servers: str
    client_id: str
    overrides: Mapping[str, Any]
    changelog_topics: frozenset[str] = frozenset()
    continue_on_error: bool = False
    client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER


class RecordCollector:
    """Sends the records of one thread's tasks; see the module docstring."""

    #: no delivery report per record (the changelog offsets are counted by the tasks)
    reports_only_errors = True
    #: what a failing ``produce`` raises (handled by :meth:`_send_failed`)
    _send_errors: tuple[type[BaseException], ...] = (KafkaException,)

    def __init__(self, settings: ProducerSettings) -> None:
        overrides = settings.overrides
        self._changelog_topics = settings.changelog_topics
        #: changelog records whose delivery failed (skipped under ``continue``), per partition
        self.failed_changelog: dict[tuple[str, int], int] = {}
        self._error: BaseException | None = None
        self._continue_on_error = settings.continue_on_error
        #: the largest record the producer accepts (dead-letter records are bounded by it)
        self.max_message_bytes = int(overrides.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES))
        #: records skipped under ``default_production_exception_handler=continue``
        self.skipped = 0
        #: librdkafka fails a record with _MSG_TIMED_OUT after this long (then the handler decides)
        self.delivery_timeout_ms = delivery_timeout_ms(overrides)
        self.producer = StreamsProducer(
            settings.bootstrap_servers,
            settings.client_id,
            overrides,
            self._on_delivery,
            self.reports_only_errors or not self._changelog_topics,
            settings.client_supplier,
        )
        self._produce: Callable[..., None] = self.producer.produce
        # the client's own produce (partition -1: the partitioner's choice), for the hot path of
        # send; a full local queue falls back to StreamsProducer.produce, which waits and retries
        self._client_produce: Callable[..., None] | None = getattr(self.producer, "client_produce", None)

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Any, ...],
        timestamp: int,
        partition: int | None,
    ) -> None:
        if self._error is not None:
            self._raise_error()
        try:
            client_produce = self._client_produce
            if client_produce is not None:
                try:
                    client_produce(
                        topic,
                        value,
                        key,
                        -1 if partition is None else partition,
                        timestamp=timestamp,
                        headers=list(headers) if headers else None,
                    )
                    return
                except BufferError:
                    pass
            self._produce(topic, key, value, partition, timestamp, list(headers) if headers else None)
        except self._send_errors as exc:
            self._send_failed(exc, topic, key, value, headers, partition)

    def _send_failed(
        self,
        exc: BaseException,
        topic: str,
        key: Any,
        value: Any,
        headers: tuple[tuple[str, bytes | None], ...],
        partition: int | None,
    ) -> None:
        """``produce`` raised ``exc`` (one of ``_send_errors``): a record the producer refused
        (:meth:`_is_refusal`) goes to the production handler; any other error is the producer's
        (:meth:`_producer_failed`)."""
        err = _kafka_error(exc)
        if self._is_refusal(exc, err):
            self._refused(topic, key, value, headers, err, partition)
        else:
            self._producer_failed(exc, err, topic)

    def _is_refusal(self, exc: BaseException, err: KafkaError) -> bool:
        return _is_record_error(err)

    def _producer_failed(self, exc: BaseException, err: KafkaError, topic: str) -> None:
        """Fails the send."""
        raise ProductionError(f"error sending record to topic {topic}: {err}") from exc

    def _refused(
        self, topic: str, key: Any, value: Any, headers: Headers, err: Any, partition: int | None = None
    ) -> None:
        """``produce`` refused one record (see the module docstring): the production handler decides."""
        what = (
            f"record of {record_size(key, value, headers)} bytes for topic {topic} refused by the "
            f"producer (message.max.bytes={self.max_message_bytes}): {err.name()}: {err.str()}"
        )
        if self._continue_on_error:
            self.skipped += 1
            if topic in self._changelog_topics and partition is not None:
                tp = (topic, partition)
                self.failed_changelog[tp] = self.failed_changelog.get(tp, 0) + 1
            log.warning("%s; skipped (default_production_exception_handler=continue)", what)
            return
        raise ProductionError(f"{what} (default_production_exception_handler=fail)")

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            topic = msg.topic()
            if topic in self._changelog_topics:
                tp = (topic, msg.partition())
                self.failed_changelog[tp] = self.failed_changelog.get(tp, 0) + 1
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
        # a success: reported only where ``reports_only_errors`` is off, and the collectors that
        # turn it off (exactly-once) read their changelog offsets in their own ``_on_delivery``

    def take_failed_changelog(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """How many changelog records of ``partitions`` failed since the last call (then forgotten)."""
        failed = self.failed_changelog
        return {tp: failed.pop(tp) for tp in partitions if tp in failed}

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def send_now(self) -> None:
        """The thread has nothing to process: the records lingering in the producer leave now
        instead of after ``linger.ms`` (see the module docstring)."""
        self.producer.flush(SEND_NOW_S)

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


def _kafka_error(exc: BaseException) -> KafkaError:
    """The KafkaError of a confluent exception. A SystemError means a delivery report was served
    while librdkafka raised a fatal error (the callback ran with that exception pending): a
    fatal error whose cause is lost, reported as ``_FATAL``."""
    if isinstance(exc, KafkaException):
        error: KafkaError = exc.args[0]
        return error
    return KafkaError(_FATAL, f"fatal producer error ({exc})", fatal=True)
