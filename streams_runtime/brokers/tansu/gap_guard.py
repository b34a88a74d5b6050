"""RepartitionGapGuard: a stream thread re-reads repartition offsets a fetch passed over.

Owned by a StreamThread (made only under ``at_least_once`` and when the topology reads a
repartition topic). It sees every batch the thread's consumer returns, between ``consume`` and
the tasks' queues, and learns of the consumer's assignments, unassignments and seeks through the
consumer it hands back from :meth:`RepartitionGapGuard.watch` (the TaskManager uses that one).

Why: the embedded broker can answer a fetch with a batch ABOVE offsets whose batch is stored but
not readable yet when two producers write one partition; the consumer's position moves past them
and it never fetches them again (docs/decisions/0001-embedded-broker.md). A repartition topic is
written by tasks on every instance, and its reader is a live consumer, so it could pass over input
records. Apache Kafka never does this.

The rule (also correct on Apache Kafka). Under ``at_least_once`` every write to a repartition
topic is non-transactional and repartition topics are never compacted, so on Kafka the offsets a
consumer receives from such a partition are contiguous: each record is the previous one + 1.
Per assigned repartition partition the guard keeps the next expected offset:

- known after an assignment from the committed offset; with none committed (and
  ``auto.offset.reset=earliest``, the profile's) the consumer starts at the log start, which is
  offset 0 of a repartition topic the runtime never purges; otherwise (reset to latest, a
  logical seek) unknown until the first record, which is then taken as it comes;
- each record in order moves it on; a record below it passes unchanged (a consumer never
  delivers one; the guard never drops what it cannot explain).

A record ABOVE the expected offset is a gap: the guard seeks the consumer back to the expected
offset, drops that record and every later record of its partition in this batch (they are read
again), counts it and logs a WARNING naming topic, partition, expected and got. If the seek
fails, nothing is dropped (the records pass as they came). A gap is verified: when, after the
seek-back, the first record of the partition again arrives at (or above) the offset that
revealed the gap, and the gap has lasted ``grace_s`` (``GAP_GRACE_S``: the embedded broker's
unreadable batch becomes readable within milliseconds), the offsets in between are truly absent
(deleted by retention or a purge, transaction markers left by an earlier exactly-once run) and
the guard accepts it and moves on; before that it seeks back again. If the record arrives lower
but still above the expected offset, the gap narrowed and is checked again. After
``MAX_SEEK_BACKS`` seek-backs for one expected offset the gap is accepted anyway, so the guard
never loops.

Cost: a batch is looked at only while a repartition partition is assigned; then each record of
another topic costs one ``topic()`` call and a set lookup, and a repartition record a few more
calls and a dict update. Nothing of this runs per record for a thread without repartition input.
Topics not guarded (user source topics, which compaction and transaction markers may leave with
gaps) pass untouched.

Metrics (the thread's StreamsMetrics, group ``stream-thread-metrics``, tags ``topic`` and
``partition``): ``repartition-gap-seeks`` (a gap seen, the consumer sought back) and
``repartition-gaps-accepted`` (a gap verified as absent records).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.kafka.broker_identity import BrokerIdentity
from streams_runtime.kafka.clients import OFFSET_BEGINNING, TopicPartition

if TYPE_CHECKING:  # types only
    from streams_runtime.kafka.client_supplier import ConsumerClient


class InternalTopic(Protocol):
    """What the guard reads of an internal topic's declaration."""

    @property
    def kind(self) -> str: ...

    def configs(self) -> Mapping[str, str]: ...


class TopologyBuilder(Protocol):
    """What the guard reads of the topology's builder: the internal topics and their real names."""

    @property
    def internal_topics(self) -> Mapping[str, InternalTopic]: ...

    def decorate(self, topic: str) -> str: ...


class RuntimeSetup(Protocol):
    """What the guard reads of a client's RuntimeSetup (the processor runtime's, a layer above)."""

    @property
    def builder(self) -> TopologyBuilder: ...

    @property
    def subtopologies(self) -> Mapping[int, Any]: ...

    @property
    def config(self) -> Mapping[str, Any]: ...

    @property
    def broker(self) -> BrokerIdentity: ...


class Counter(Protocol):
    """A sensor the guard counts on."""

    def increment(self) -> None: ...


class StreamsMetrics(Protocol):
    """Where the guard counts its seeks (the thread's StreamsMetrics)."""

    def sensor(self, name: str, group: str = ..., tags: dict[str, Any] | None = ...) -> Counter: ...


log = logging.getLogger("streams_runtime.processor")

__all__ = ["GAP_GRACE_S", "MAX_SEEK_BACKS", "RepartitionGapGuard", "guarded_topics"]

#: seek-backs for one expected offset of a partition before its gap is accepted whatever comes
MAX_SEEK_BACKS = 50
#: how long a gap must last (seconds) before records seen again above it are taken as absent
GAP_GRACE_S = 1.0
#: what the consumer's ``committed()`` answers for a partition without a committed offset
OFFSET_INVALID = -1001
METRICS_GROUP = "stream-thread-metrics"
SEEKS_SENSOR = "repartition-gap-seeks"
ACCEPTED_SENSOR = "repartition-gaps-accepted"
_UNKNOWN = -1


def guarded_topics(runtime: RuntimeSetup) -> frozenset[str]:
    """The repartition topics (real names) the runtime's sub-topologies read whose records are
    never compacted away: those whose offsets the guard may expect to be contiguous."""
    builder = runtime.builder
    delete_only = {
        builder.decorate(name)
        for name, topic in builder.internal_topics.items()
        if topic.kind == "repartition" and topic.configs().get("cleanup.policy") == "delete"
    }
    read = {t for info in runtime.subtopologies.values() for t in info.repartition_source_topics}
    return frozenset(read & delete_only)


class RepartitionGapGuard:
    """See the module docstring.

    :param topics: the topics to guard (:func:`guarded_topics`).
    :param metrics: where the gap sensors are recorded (the thread's StreamsMetrics), or None.
    :param reset_earliest: the consumer starts a partition without a committed offset at the log
        start (``auto.offset.reset=earliest``).
    :param grace_s: how long a gap must last before it can be accepted.
    :param clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        topics: Iterable[str],
        metrics: StreamsMetrics | None = None,
        *,
        reset_earliest: bool = True,
        grace_s: float = GAP_GRACE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.topics = frozenset(topics)
        self._grace_s = grace_s
        self._clock = clock
        self._metrics = metrics
        self._reset_earliest = reset_earliest
        self._consumer: ConsumerClient | None = None
        #: (topic, partition) -> next expected offset (_UNKNOWN: take the next record as it comes),
        #: for every assigned partition of a guarded topic
        self._expected: dict[tuple[str, int], int] = {}
        #: (topic, partition) -> (offset that revealed the gap, seek-backs so far, when it was first
        #: seen) while a gap is checked
        self._checking: dict[tuple[str, int], tuple[int, int, float]] = {}
        self.seeks = 0
        self.accepted = 0

    @classmethod
    def for_runtime(
        cls, runtime: RuntimeSetup, consumer_overrides: Mapping[str, Any], metrics: StreamsMetrics | None
    ) -> RepartitionGapGuard | None:
        """The guard of one stream thread, or None when there is nothing to guard: a broker other
        than the embedded Tansu (a fetch there never passes over a readable offset), exactly-once
        (transactional writes, whose markers take offsets) or no repartition topic read."""
        if not runtime.broker.is_tansu:
            return None
        if runtime.config["processing_guarantee"] != "at_least_once":
            return None
        topics = guarded_topics(runtime)
        if not topics:
            return None
        reset = str(consumer_overrides.get("auto.offset.reset", "earliest"))
        return cls(topics, metrics, reset_earliest=reset in ("earliest", "smallest", "beginning"))

    # ------------------------------------------------------------------ the consumer's assignment
    def watch(self, consumer: ConsumerClient) -> ConsumerClient:
        """Guard ``consumer``: the guard seeks it back, and the consumer returned (the same
        client, its assignment calls and seeks reported to the guard) is the one to use."""
        self._consumer = consumer
        return _WatchedConsumer(consumer, self)

    def assigned(self, partitions: Iterable[Any]) -> None:
        """``partitions`` (TopicPartitions, offsets as given to ``assign``) were assigned."""
        for tp in partitions:
            if tp.topic in self.topics:
                key = (tp.topic, tp.partition)
                self._expected[key] = self._start(tp.offset)
                self._checking.pop(key, None)

    def revoked(self, partitions: Iterable[Any]) -> None:
        """``partitions`` were unassigned: forget them."""
        for tp in partitions:
            key = (tp.topic, tp.partition)
            self._expected.pop(key, None)
            self._checking.pop(key, None)

    def sought(self, partition: TopicPartition) -> None:
        """The consumer was sought (by someone else than the guard) to ``partition.offset``."""
        key = (partition.topic, partition.partition)
        if key in self._expected:
            self._expected[key] = self._start(partition.offset, seek=True)
            self._checking.pop(key, None)

    def reset(self) -> None:
        """The whole assignment was replaced or dropped."""
        self._expected.clear()
        self._checking.clear()

    def _start(self, offset: int, *, seek: bool = False) -> int:
        """The first offset the consumer will deliver after an assignment (or seek) at ``offset``."""
        if offset >= 0:
            return offset
        if offset == OFFSET_BEGINNING or (offset == OFFSET_INVALID and not seek and self._reset_earliest):
            return 0  # the log start of a repartition topic nothing purged; if records were
            # deleted, the first record reveals a gap that its verification accepts
        return _UNKNOWN

    def expected(self, topic: str, partition: int) -> int | None:
        """The next offset expected from a guarded partition (-1: unknown), None if not assigned."""
        return self._expected.get((topic, partition))

    # ------------------------------------------------------------------ the batches
    def check(self, messages: list[Any]) -> list[Any]:
        """The records of ``messages`` the tasks may take: ``messages`` itself unless a gap was
        found, else a copy without the records of each gapped partition from the gap on (the
        consumer was sought back to read them again)."""
        expected = self._expected
        if not expected:
            return messages
        topics, checking = self.topics, self._checking
        cut: dict[tuple[str, int], int] | None = None  # gapped partition -> index of its first dropped record
        for index, msg in enumerate(messages):
            topic = msg.topic()
            if topic not in topics or msg.error() is not None:
                continue
            key = (topic, msg.partition())
            want = expected.get(key)
            if want is None or (cut is not None and key in cut):
                continue  # revoked since the fetch (the tasks drop it) or already cut
            offset = msg.offset()
            if offset == want or want == _UNKNOWN:
                expected[key] = offset + 1
                if checking and key in checking:
                    del checking[key]  # the records of the gap arrived
            elif offset > want:
                if self._gap(key, want, offset):
                    if cut is None:
                        cut = {}
                    cut[key] = index
                else:
                    expected[key] = offset + 1
        if cut is None:
            return messages
        return [
            m
            for i, m in enumerate(messages)
            if m.error() is not None or i < cut.get((m.topic(), m.partition()), len(messages))
        ]

    def _gap(self, key: tuple[str, int], want: int, got: int) -> bool:
        """A record at ``got`` above the expected ``want``: True if the consumer was sought back
        (drop the partition's rest of the batch), False if the gap is accepted."""
        topic, partition = key
        now = self._clock()
        revealed, seeks, since = self._checking.get(key, (None, 0, now))
        lasted = now - since >= self._grace_s
        if revealed is not None and ((got >= revealed and lasted) or seeks >= MAX_SEEK_BACKS):
            del self._checking[key]
            self.accepted += 1
            self._record(ACCEPTED_SENSOR, key)
            log.warning(
                "repartition topic %s partition %d: offsets %d-%d absent after a seek-back "
                "(deleted from the log?): going on from offset %d",
                topic,
                partition,
                want,
                got - 1,
                got,
            )
            return False
        assert self._consumer is not None, "watch() a consumer before check()"
        try:
            self._consumer.seek(TopicPartition(topic, partition, want))
        except Exception as exc:  # cannot read them again: pass the records on as they came
            self._checking.pop(key, None)
            log.warning(
                "repartition topic %s partition %d: expected offset %d, got %d, and seeking back failed "
                "(%s): going on from offset %d",
                topic,
                partition,
                want,
                got,
                exc,
                got,
            )
            return False
        self._checking[key] = (got, seeks + 1, since)
        self.seeks += 1
        self._record(SEEKS_SENSOR, key)
        log.warning(
            "repartition topic %s partition %d: expected offset %d, got %d: a fetch passed over "
            "offsets; sought back to read them",
            topic,
            partition,
            want,
            got,
        )
        return True

    def _record(self, sensor: str, key: tuple[str, int]) -> None:
        if self._metrics is not None:
            tags = {"topic": key[0], "partition": key[1]}
            self._metrics.sensor(sensor, METRICS_GROUP, tags).increment()


class _WatchedConsumer:
    """The thread's consumer, its assignment calls and seeks also reported to a guard; every
    other attribute is the consumer's own (``consume`` included: no cost per call)."""

    def __init__(self, consumer: ConsumerClient, guard: RepartitionGapGuard) -> None:
        self._consumer = consumer
        self._guard = guard

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)

    def assign(self, partitions: list[Any]) -> None:
        self._consumer.assign(partitions)
        self._guard.reset()
        self._guard.assigned(partitions)

    def unassign(self) -> None:
        self._consumer.unassign()
        self._guard.reset()

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._consumer.incremental_assign(partitions)
        self._guard.assigned(partitions)

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._consumer.incremental_unassign(partitions)
        self._guard.revoked(partitions)

    def seek(self, partition: TopicPartition) -> None:
        self._consumer.seek(partition)
        self._guard.sought(partition)
