"""In-memory consumer, producer and admin client over an :class:`InMemoryCluster`.

Each has the part of confluent-kafka's interface the runtime calls (see
:mod:`streams_runtime.kafka.client_supplier`), with confluent's shapes: records are
``Message``-like objects, offsets travel in confluent ``TopicPartition`` objects, errors are
``KafkaException(KafkaError)``. Made by :class:`~streams_runtime.testing.InMemoryClientSupplier`.

Consumer: manual assignment only (``assign``/``incremental_assign``/``incremental_unassign``);
an assigned offset below 0 means "the committed offset, else ``auto.offset.reset``"
(``earliest`` unless configured). ``consume`` returns what the assigned, unpaused partitions hold
past their positions (read_committed: up to the last stable offset, aborted records skipped)
and, with ``enable.partition.eof``, one end-of-partition event each time a position reaches the
end; it waits up to its timeout for records (a fetch can be made to pass over offsets once:
``Faults.skip_once``). Producer: ``produce`` appends at once (inside a
transaction: an open record), delivery reports are served by ``poll``/``flush``; the transaction
calls fail with a fencing error once another producer took the transactional id.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from streams_runtime.kafka.clients import (
    OFFSET_BEGINNING,
    OFFSET_END,
    PARTITION_EOF,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.testing.in_memory_cluster import InMemoryCluster, StoredRecord, fenced_error, kafka_error

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["InMemoryAdmin", "InMemoryConsumer", "InMemoryMessage", "InMemoryProducer"]

#: librdkafka's "no offset" (committed() of a partition without a commit)
OFFSET_INVALID = -1001


class InMemoryMessage(RawRecord):
    """A record or an event (``error()`` set) as confluent's ``Message`` shows it: the runtime's
    :class:`~streams_runtime.processor.internals.partition_group.RawRecord` with an error."""

    __slots__ = ("_error",)

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        record: StoredRecord | None = None,
        error: KafkaError | None = None,
    ) -> None:
        if record is None:
            super().__init__(topic, partition, offset, -1, None, None, None)
        else:
            super().__init__(
                topic, partition, offset, record.timestamp, record.key, record.value, record.headers
            )
        self._error = error

    def error(self) -> KafkaError | None:  # type: ignore[override]  # RawRecord's is always None
        return self._error

    def __len__(self) -> int:
        return len(self._value or b"")


class InMemoryConsumer:
    """See the module docstring. ``role`` is ``consumer``, ``restore`` or ``global``."""

    def __init__(self, cluster: InMemoryCluster, config: Mapping[str, Any], role: str = "consumer") -> None:
        self.cluster = cluster
        self.config = dict(config)
        self.role = role
        self.group_id = str(self.config.get("group.id", ""))
        self.read_committed = self.config.get("isolation.level") == "read_committed"
        self._eof_events = bool(self.config.get("enable.partition.eof", False))
        self._reset_latest = self.config.get("auto.offset.reset", "earliest") in ("latest", "end", "largest")
        self._positions: dict[tuple[str, int], int] = {}
        self._eof_at: dict[tuple[str, int], int] = {}
        self._paused: set[tuple[str, int]] = set()
        self.closed = False
        #: every offset commit this consumer made (each a dict of next offsets)
        self.commits: list[dict[tuple[str, int], int]] = []

    # ------------------------------------------------------------------ assignment
    def _start(self, tp: tuple[str, int], offset: int) -> int:
        if offset >= 0:
            return offset
        if offset == OFFSET_BEGINNING:
            return 0
        end = self.cluster.end_offset(*tp, read_committed=self.read_committed)
        if offset == OFFSET_END:
            return end
        committed = self.cluster.committed(self.group_id).get(tp)
        if committed is not None:
            return committed
        return end if self._reset_latest else 0

    def assign(self, partitions: list[Any]) -> None:
        self._positions.clear()
        self._eof_at.clear()
        self._paused.clear()
        self.incremental_assign(partitions)

    def incremental_assign(self, partitions: list[Any]) -> None:
        for tp in partitions:
            key = (tp.topic, tp.partition)
            self.cluster.partition_count(tp.topic)  # unknown topic: raises
            self._positions[key] = self._start(key, tp.offset)
            self._eof_at.pop(key, None)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        for tp in partitions:
            key = (tp.topic, tp.partition)
            self._positions.pop(key, None)
            self._eof_at.pop(key, None)
            self._paused.discard(key)

    def unassign(self) -> None:
        self.assign([])

    def assignment(self) -> list[Any]:
        return [TopicPartition(t, p) for t, p in sorted(self._positions)]

    def pause(self, partitions: list[Any]) -> None:
        self._paused.update((tp.topic, tp.partition) for tp in partitions)

    def resume(self, partitions: list[Any]) -> None:
        self._paused.difference_update((tp.topic, tp.partition) for tp in partitions)

    def seek(self, partition: TopicPartition) -> None:
        key = (partition.topic, partition.partition)
        self._positions[key] = self._start(key, partition.offset)
        self._eof_at.pop(key, None)

    def position(self, partitions: list[Any]) -> list[Any]:
        return [
            TopicPartition(
                tp.topic, tp.partition, self._positions.get((tp.topic, tp.partition), OFFSET_INVALID)
            )
            for tp in partitions
        ]

    # ------------------------------------------------------------------ fetching
    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        deadline = time.monotonic() + max(0.0, timeout)
        with self.cluster.changed:
            while True:
                messages = self._fetch(num_messages)
                left = deadline - time.monotonic()
                if messages or left <= 0 or self.closed:
                    return messages
                self.cluster.changed.wait(left)

    def poll(self, timeout: float = -1) -> InMemoryMessage | None:
        found = self.consume(1, timeout)
        return found[0] if found else None

    def _fetch(self, limit: int) -> list[Any]:
        out: list[Any] = []
        for (topic, partition), position in sorted(self._positions.items()):
            if (topic, partition) in self._paused or len(out) >= limit:
                continue
            end = self.cluster.end_offset(topic, partition, read_committed=self.read_committed)
            if position < end:
                visible = self.cluster.read(
                    topic, partition, position, end, read_committed=self.read_committed
                )
                visible, end = self._skip_once(topic, partition, visible, position, end, limit - len(out))
                taken = visible[: limit - len(out)]
                out.extend(InMemoryMessage(topic, partition, r.offset, r) for r in taken)
                position = taken[-1].offset + 1 if len(taken) < len(visible) else end
                self._positions[(topic, partition)] = position
            if self._eof_events and position >= end and self._eof_at.get((topic, partition)) != position:
                self._eof_at[(topic, partition)] = position
                out.append(InMemoryMessage(topic, partition, position, error=KafkaError(PARTITION_EOF)))
        return out

    def _skip_once(
        self, topic: str, partition: int, visible: list[StoredRecord], start: int, end: int, room: int
    ) -> tuple[list[StoredRecord], int]:
        """Apply a pending ``Faults.skip_once`` to one fetch: the records and end it answers."""
        faults = self.cluster.faults
        hidden = faults.skips_between(topic, partition, start, end)
        if not hidden:
            return visible, end
        below = [r for r in visible if r.offset < hidden[0]]
        if len(below) < room and any(r.offset > hidden[-1] for r in visible):  # the fetch reaches above
            faults.passed_over(topic, partition, hidden)
            skipped = set(hidden)
            return [r for r in visible if r.offset not in skipped], end
        return below, hidden[0]  # not readable yet: the fetch stops below them

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float = -1, cached: bool = False
    ) -> tuple[int, int]:
        self.cluster.faults.check("list_offsets")
        return 0, self.cluster.end_offset(
            partition.topic, partition.partition, read_committed=self.read_committed
        )

    # ------------------------------------------------------------------ offsets
    def commit(
        self, message: object = None, offsets: list[Any] | None = None, asynchronous: bool = True
    ) -> list[Any]:
        self.cluster.faults.check("commit")
        wanted = {(tp.topic, tp.partition): tp.offset for tp in offsets or []}
        if offsets is None:
            wanted = dict(self._positions)
        self.cluster.commit_offsets(self.group_id, wanted)
        self.commits.append(wanted)
        return [TopicPartition(t, p, o) for (t, p), o in wanted.items()]

    def committed(self, partitions: list[Any], timeout: float = -1) -> list[Any]:
        found = self.cluster.committed(self.group_id)
        return [
            TopicPartition(tp.topic, tp.partition, found.get((tp.topic, tp.partition), OFFSET_INVALID))
            for tp in partitions
        ]

    def consumer_group_metadata(self) -> str:
        return self.group_id

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> SimpleNamespace:
        return _metadata(self.cluster)

    def close(self) -> None:
        self.closed = True


class InMemoryProducer:
    """See the module docstring; ``config`` is the producer's librdkafka configuration."""

    def __init__(self, cluster: InMemoryCluster, config: Mapping[str, Any]) -> None:
        self.cluster = cluster
        self.config = dict(config)
        self.transactional_id: str | None = self.config.get("transactional.id")
        self._on_delivery = self.config.get("on_delivery")
        self._errors_only = bool(self.config.get("delivery.report.only.error", False))
        self._pending: list[InMemoryMessage] = []
        self._epoch = 0
        self.in_transaction = False
        self.closed = False
        #: every transaction call in order (``init``, ``begin``, ``send_offsets``, ``commit``, ``abort``)
        self.transaction_calls: list[str] = []
        #: the ``flush`` calls, as their timeouts in seconds
        self.flushes: list[float] = []
        #: every call the runtime made, by confluent's method name, in order (failed calls too)
        self.calls: list[str] = []
        #: the timeout (seconds) of each timed call's latest invocation, by method name
        self.timeouts: dict[str, float] = {}

    def _called(self, name: str, timeout: float | None = None) -> None:
        self.calls.append(name)
        if timeout is not None:
            self.timeouts[name] = timeout

    # ------------------------------------------------------------------ sending
    def produce(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int = -1,
        on_delivery: Callable[..., Any] | None = None,
        timestamp: int = 0,
        headers: Iterable[tuple[str, bytes]] | None = None,
    ) -> None:
        self._called("produce")
        self.cluster.faults.check("produce")
        if self.transactional_id is not None:
            self._check_fenced()
            if not self.in_transaction:
                raise kafka_error(KafkaError._STATE, "produce outside a transaction")  # noqa: SLF001
        where = None if partition is None or partition < 0 else partition
        p, offset = self.cluster.append(
            topic,
            where,
            key,
            value,
            timestamp,
            headers,
            self.transactional_id if self.in_transaction else None,
        )
        self._pending.append(InMemoryMessage(topic, p, offset))

    def poll(self, timeout: float = -1) -> int:
        self._called("poll")
        self.cluster.faults.check("poll")
        return self._deliver()

    def _deliver(self) -> int:
        """Serve the delivery reports of everything sent so far; how many."""
        pending, self._pending = self._pending, []
        for message in pending:
            injected = self.cluster.faults.take("delivery")
            if injected is not None:
                error = _error_of(injected)
                if self._on_delivery is not None:
                    self._on_delivery(error, message)
            elif self._on_delivery is not None and not self._errors_only:
                self._on_delivery(None, message)
        return len(pending)

    def flush(self, timeout: float = -1) -> int:
        self._called("flush", timeout)
        self.flushes.append(timeout)
        self.cluster.faults.check("flush")
        self._deliver()
        return 0

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        self._called("purge")
        self._pending.clear()

    def __len__(self) -> int:
        return len(self._pending)

    # ------------------------------------------------------------------ transactions
    def _check_fenced(self) -> None:
        assert self.transactional_id is not None
        if self._epoch and self.cluster.epoch(self.transactional_id) != self._epoch:
            raise fenced_error(self.transactional_id)

    def _transactional(self, name: str, timeout: float | None = None) -> str:
        self._called(name, timeout)
        if self.transactional_id is None:
            raise kafka_error(KafkaError._NOT_CONFIGURED, "the producer has no transactional.id")  # noqa: SLF001
        self.cluster.faults.check(name)
        self._check_fenced()
        return self.transactional_id

    def init_transactions(self, timeout: float = -1) -> None:
        txn_id = self._transactional("init_transactions", timeout)
        self._epoch = self.cluster.init_transactions(txn_id)
        self.transaction_calls.append("init")

    def begin_transaction(self) -> None:
        self._transactional("begin_transaction")
        self.in_transaction = True
        self.transaction_calls.append("begin")

    def send_offsets_to_transaction(
        self, positions: list[Any], group_metadata: object, timeout: float = -1
    ) -> None:
        txn_id = self._transactional("send_offsets_to_transaction", timeout)
        offsets = {(tp.topic, tp.partition): tp.offset for tp in positions}
        self.cluster.add_offsets(txn_id, str(group_metadata), offsets)
        self.transaction_calls.append("send_offsets")

    def commit_transaction(self, timeout: float = -1) -> None:
        txn_id = self._transactional("commit_transaction", timeout)
        self._deliver()
        self.cluster.end_transaction(txn_id, commit=True)
        self.in_transaction = False
        self.transaction_calls.append("commit")

    def abort_transaction(self, timeout: float = -1) -> None:
        txn_id = self._transactional("abort_transaction", timeout)
        self._pending.clear()
        self.cluster.end_transaction(txn_id, commit=False)
        self.in_transaction = False
        self.transaction_calls.append("abort")

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> SimpleNamespace:
        return _metadata(self.cluster)

    def close(self, timeout: float = -1) -> bool:
        self._called("close")
        self.closed = True
        return True


class InMemoryAdmin:
    """Lists and creates topics of the cluster (what the runtime's start needs)."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        self.cluster = cluster

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> SimpleNamespace:
        return _metadata(self.cluster)

    def create_topics(
        self, new_topics: list[Any], operation_timeout: float = 0, **_: object
    ) -> dict[str, Future[None]]:
        futures: dict[str, Future[None]] = {}
        for spec in new_topics:
            self.cluster.create_topic(spec.topic, spec.num_partitions)
            done: Future[None] = Future()
            done.set_result(None)
            futures[spec.topic] = done
        return futures

    def describe_configs(self, resources: list[Any], **_: object) -> dict[Any, Future[dict[str, Any]]]:
        futures: dict[Any, Future[dict[str, Any]]] = {}
        for resource in resources:
            described: Future[dict[str, Any]] = Future()
            described.set_result({})
            futures[resource] = described
        return futures


def _error_of(injected: BaseException) -> KafkaError:
    """The KafkaError a delivery report carries for an injected ``delivery`` fault."""
    if isinstance(injected, KafkaException):
        error: KafkaError = injected.args[0]
        return error
    return KafkaError(KafkaError._FAIL, str(injected))  # noqa: SLF001


def _metadata(cluster: InMemoryCluster) -> SimpleNamespace:
    """What ``list_topics`` answers: ``topics`` (name -> partitions, error) and one broker, the
    leader and only replica of every partition."""
    topics = {
        name: SimpleNamespace(
            topic=name,
            partitions={p: SimpleNamespace(id=p, leader=1, replicas=[1], isrs=[1]) for p in range(count)},
            error=None,
        )
        for name, count in cluster.topics().items()
    }
    return SimpleNamespace(
        topics=topics,
        brokers={1: SimpleNamespace(id=1, host="in-memory", port=0)},
        cluster_id=cluster.cluster_id,
    )
