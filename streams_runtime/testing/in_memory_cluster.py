"""InMemoryCluster: topics, partitions, committed offsets and transactions kept in memory.

The broker side of :class:`~streams_runtime.testing.InMemoryClientSupplier`: every in-memory
consumer, producer and admin client of one supplier reads and writes one cluster, from any
thread (one condition variable guards it and wakes consumers waiting in ``consume``).

Semantics follow Apache Kafka where the runtime depends on them:
  - a partition is an append-only list of records, offsets from 0, no compaction or retention;
  - a keyed record produced without a partition goes where Kafka's default partitioner (murmur2)
    puts it, as librdkafka's ``murmur2_random`` and the Java clients do;
  - records written inside a transaction are *open* until the transaction commits or aborts; a
    ``read_committed`` reader stops at the first open record (the last stable offset) and skips
    aborted records, a ``read_uncommitted`` reader sees everything;
  - ``init_transactions`` for a transactional id bumps its epoch, which fences the producer that
    held the id before (its next call fails with a fencing error) and aborts its open transaction;
  - committed offsets are kept per consumer group.
Transaction markers take no offsets here (on Kafka they do); nothing in the runtime counts on them.

Faults a test injects (:class:`Faults`) are raised by the next matching client call; a fetch
can also be made to pass over offsets once (:meth:`Faults.skip_once`).
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from streams_runtime.kafka.clients import KafkaError, KafkaException
from streams_runtime.kafka.partitioner import partition_for

__all__ = ["Faults", "InMemoryCluster", "StoredRecord", "fenced_error", "kafka_error"]

COMMITTED, OPEN, ABORTED = "committed", "open", "aborted"


@dataclass
class StoredRecord:
    """One record of a partition; ``state`` is committed, open (in a transaction) or aborted."""

    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: list[tuple[str, bytes]] | None = None
    transactional_id: str | None = None
    state: str = COMMITTED


def kafka_error(
    code: int, reason: str = "", *, fatal: bool = False, retriable: bool = False
) -> KafkaException:
    """A ``KafkaException`` carrying a ``KafkaError`` with ``code``, as the real clients raise it."""
    return KafkaException(
        KafkaError(code, reason or f"injected error {code}", fatal=fatal, retriable=retriable)
    )


def fenced_error(transactional_id: str) -> KafkaException:
    """The error a fenced transactional producer raises (librdkafka's fatal ``_FENCED``)."""
    return kafka_error(
        KafkaError._FENCED,  # noqa: SLF001 (librdkafka names its local codes with "_")
        f"producer {transactional_id!r} was fenced by a newer instance",
        fatal=True,
    )


class Faults:
    """Errors to raise from named client calls: ``inject("commit", error, times=2)`` makes the next
    two calls of ``commit`` (on any client of the supplier that checks that name) raise ``error``.
    Names: ``commit`` (consumer offset commit), ``produce``, ``poll``, ``flush``, ``delivery`` (the
    next delivery report carries the error's ``KafkaError``), ``init_transactions``,
    ``begin_transaction``, ``send_offsets_to_transaction``, ``commit_transaction``,
    ``abort_transaction``.

    Besides errors, :meth:`skip_once` makes consumers' fetches pass over offsets once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, deque[BaseException]] = defaultdict(deque)
        #: how often each name raised
        self.raised: dict[str, int] = defaultdict(int)
        self._skips: dict[tuple[str, int], set[int]] = {}
        #: ``(topic, partition) -> offsets`` every fetch passed over so far (see :meth:`skip_once`)
        self.skipped: dict[tuple[str, int], list[int]] = defaultdict(list)

    def inject(self, name: str, error: BaseException, times: int = 1) -> None:
        with self._lock:
            self._pending[name].extend([error] * times)

    def clear(self, name: str) -> None:
        with self._lock:
            self._pending.pop(name, None)

    def take(self, name: str) -> BaseException | None:
        """The next injected error of ``name`` (removed), or None."""
        with self._lock:
            queue = self._pending.get(name)
            if not queue:
                return None
            self.raised[name] += 1
            return queue.popleft()

    def check(self, name: str) -> None:
        """Raise the next injected error of ``name``, if any."""
        error = self.take(name)
        if error is not None:
            raise error

    def skip_once(self, topic: str, partition: int, offsets: Iterable[int]) -> None:
        """Make one fetch pass over ``offsets`` of ``topic``/``partition``: the race of a broker
        that answers a fetch with a batch above offsets whose batch is not readable yet (the
        embedded broker's, with two producers writing one partition; Apache Kafka never does it).

        Until a record above the highest of ``offsets`` is in the partition, consumers read
        only up to the lowest of them (they are not readable yet). The first fetch (by any
        consumer of the cluster) that then returns a record above them leaves them out, so that
        consumer's position moves past them; afterwards they are ordinary records, returned to
        any fetch from an offset at or below them. The offsets a fetch passed over are added to
        :attr:`skipped`. Offsets the records never reach stay pending; :meth:`clear_skips` drops
        them."""
        with self._lock:
            self._skips.setdefault((topic, partition), set()).update(offsets)

    def clear_skips(self) -> None:
        """Forget every pending :meth:`skip_once`."""
        with self._lock:
            self._skips.clear()

    def skips_between(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        """The pending skipped offsets of the partition in ``[start, end)``, sorted (for the
        in-memory consumer's fetch)."""
        with self._lock:
            pending = self._skips.get((topic, partition))
            return sorted(o for o in pending if start <= o < end) if pending else []

    def passed_over(self, topic: str, partition: int, offsets: list[int]) -> None:
        """A fetch passed over ``offsets`` (they are no longer pending)."""
        with self._lock:
            pending = self._skips.get((topic, partition), set())
            pending.difference_update(offsets)
            if not pending:
                self._skips.pop((topic, partition), None)
            self.skipped[(topic, partition)].extend(offsets)


@dataclass
class _Transaction:
    epoch: int = 0
    records: list[tuple[str, int, int]] = field(default_factory=list)  # (topic, partition, offset)
    offsets: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)  # group -> offsets


class InMemoryCluster:
    """See the module docstring."""

    def __init__(self, cluster_id: str = "in-memory") -> None:
        #: what the cluster's metadata answers say it is ("tansu..." turns the runtime's
        #: embedded-broker workarounds on, as Tansu's own id does)
        self.cluster_id = cluster_id
        self.changed = threading.Condition()
        self.faults = Faults()
        self._topics: dict[str, list[list[StoredRecord]]] = {}
        self._committed: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
        self._transactions: dict[str, _Transaction] = {}

    # ------------------------------------------------------------------ topics
    def create_topic(self, name: str, partitions: int = 1) -> None:
        """Create ``name`` with ``partitions`` partitions (nothing happens if it exists)."""
        with self.changed:
            self._topics.setdefault(name, [[] for _ in range(partitions)])

    def topics(self) -> dict[str, int]:
        """Every topic and its partition count."""
        with self.changed:
            return {name: len(parts) for name, parts in self._topics.items()}

    def partition_count(self, topic: str) -> int:
        with self.changed:
            return len(self._partitions(topic))

    def _partitions(self, topic: str) -> list[list[StoredRecord]]:
        try:
            return self._topics[topic]
        except KeyError:
            raise kafka_error(KafkaError.UNKNOWN_TOPIC_OR_PART, f"unknown topic {topic}") from None

    # ------------------------------------------------------------------ writing and reading
    def append(
        self,
        topic: str,
        partition: int | None,
        key: bytes | None,
        value: bytes | None,
        timestamp: int = 0,
        headers: Iterable[tuple[str, bytes]] | None = None,
        transactional_id: str | None = None,
    ) -> tuple[int, int]:
        """Append one record; returns ``(partition, offset)``. Without a partition a keyed record
        goes where Kafka's default partitioner puts it (murmur2 of the key bytes), a record
        without a key to partition 0."""
        with self.changed:
            partitions = self._partitions(topic)
            if partition is None:
                partition = 0 if key is None else partition_for(key, len(partitions))
            if not 0 <= partition < len(partitions):
                raise kafka_error(KafkaError._UNKNOWN_PARTITION, f"{topic} has no partition {partition}")  # noqa: SLF001
            log = partitions[partition]
            state = OPEN if transactional_id is not None else COMMITTED
            record = StoredRecord(
                len(log), key, value, timestamp, list(headers) if headers else None, transactional_id, state
            )
            log.append(record)
            if transactional_id is not None:
                self._transactions.setdefault(transactional_id, _Transaction()).records.append(
                    (topic, partition, record.offset)
                )
            self.changed.notify_all()
            return partition, record.offset

    def records(
        self, topic: str, partition: int | None = None, *, read_committed: bool = False
    ) -> list[StoredRecord]:
        """The records of one partition (or of every partition, in partition order); with
        ``read_committed`` only those of committed transactions and non-transactional ones."""
        with self.changed:
            logs = self._partitions(topic) if partition is None else [self._partitions(topic)[partition]]
            return [r for log in logs for r in log if not read_committed or r.state == COMMITTED]

    def end_offset(self, topic: str, partition: int, *, read_committed: bool = False) -> int:
        """The high watermark, or the last stable offset (first open record) when ``read_committed``."""
        with self.changed:
            log = self._partitions(topic)[partition]
            if read_committed:
                for record in log:
                    if record.state == OPEN:
                        return record.offset
            return len(log)

    def read(
        self, topic: str, partition: int, start: int, limit: int, *, read_committed: bool
    ) -> list[StoredRecord]:
        """Records from offset ``start`` below ``limit`` visible to the reader (aborted ones left out
        for ``read_committed``)."""
        with self.changed:
            log = self._partitions(topic)[partition]
            return [r for r in log[start:limit] if not (read_committed and r.state == ABORTED)]

    # ------------------------------------------------------------------ committed offsets
    def commit_offsets(self, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        with self.changed:
            self._committed[group_id].update(offsets)
            self.changed.notify_all()

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """The offsets ``group_id`` committed (next offset to read, per partition)."""
        with self.changed:
            return dict(self._committed.get(group_id, {}))

    # ------------------------------------------------------------------ transactions
    def init_transactions(self, transactional_id: str) -> int:
        """A producer takes ``transactional_id``: abort what the previous holder left open and
        return the new epoch (the previous holder is fenced)."""
        with self.changed:
            previous = self._transactions.get(transactional_id)
            if previous is not None:
                self._end(transactional_id, ABORTED)
            epoch = previous.epoch + 1 if previous is not None else 1
            self._transactions[transactional_id] = _Transaction(epoch)
            return epoch

    def fence(self, transactional_id: str) -> None:
        """Act as a newer producer with the same id (a zombie's successor): the current holder
        is fenced and its open transaction aborted."""
        self.init_transactions(transactional_id)

    def epoch(self, transactional_id: str) -> int:
        with self.changed:
            found = self._transactions.get(transactional_id)
            return found.epoch if found is not None else 0

    def add_offsets(self, transactional_id: str, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        with self.changed:
            self._transactions[transactional_id].offsets.setdefault(group_id, {}).update(offsets)

    def end_transaction(self, transactional_id: str, commit: bool) -> None:
        with self.changed:
            self._end(transactional_id, COMMITTED if commit else ABORTED)
            self.changed.notify_all()

    def _end(self, transactional_id: str, state: str) -> None:
        txn = self._transactions[transactional_id]
        for topic, partition, offset in txn.records:
            self._topics[topic][partition][offset].state = state
        if state == COMMITTED:
            for group_id, offsets in txn.offsets.items():
                self._committed[group_id].update(offsets)
        txn.records.clear()
        txn.offsets.clear()
        self.changed.notify_all()
