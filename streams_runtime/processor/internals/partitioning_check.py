"""SourcePartitioningCheck: is each record a stream thread reads where Kafka puts its key?

Owned by a StreamThread (made unless ``source_partitioning_check`` is ``off``). It sees every
run of one partition of each batch the thread's consumer returns, as the task executor hands the
runs to the tasks' queues (after the repartition gap guard, before any record is processed).

Why: Kafka Streams takes a keyed input record to be on partition
``toPositive(murmur2(key bytes)) % partitions``, where the Java producer's default partitioner
puts it (:mod:`streams_runtime.kafka.partitioner`): a join looks the other side up in the same
partition of a co-partitioned topic, interactive queries send a key's lookup to the instance
running that partition. A producer that places keys by another rule, most often librdkafka's
own default (``consistent_random``, CRC32 of the key) in confluent-kafka, puts records where
nobody looks: joins miss without an error, a lookup answers 404. Kafka Streams does not check
this; this runtime does (docs/decisions/0010-input-and-output-checks.md).

What is checked: records with a key, of every topic the thread reads that has more than one
partition, user source topics and repartition topics alike. The runtime writes repartition
topics itself with murmur2, so there a misplaced record means a ``producer.partitioner``
override or another writer, which breaks the same joins. Left out: topics a sink of the topology
writes with its own partitioner (``Produced`` or ``Repartitioned`` with a stream partitioner, the
foreign-key join's response topic), which are placed by another rule on purpose. A user topic
partitioned by another rule on purpose (``TableJoined`` with a partitioner) wants the check
``off``.

Cost (``bench/partitioning_check.py``, 2000-record batches on 8 partitions, this 2-core machine
under load): the hash is pure Python, about 1.5 us for a 10-byte key (4 us for 36 bytes), where a
whole per-key count costs about 18 us of CPU per record end to end and the task's own path
2.6 us (stateless) to 5.9 us (the count) (``bench/task_path.py``). So a record is hashed only
while its partition is new, for its first ``FULL_CHECKS`` records (a test or a first run shows a
misplacing producer at once), then one in ``SAMPLE_EVERY`` (a producer changed later shows
within a few thousand records). What every record pays is nothing more: the task executor cuts each batch into
runs of one partition anyway (to hand each run to its queue) and passes each run to the check,
which, past a partition's first records, costs a lookup and a little arithmetic per run.

A misplaced record is counted on its task's sensor ``mispartitioned-records`` (group
``stream-task-metrics``, tags ``task-id`` and ``topic``: Prometheus
``kafka_streams_stream_task_mispartitioned_records_total``); the first one of each partition is
logged at WARNING with the fix; under ``fail`` it raises :class:`SourcePartitioningError` (the
thread stops before any record of the batch is processed; the uncaught-exception handler
decides).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import SourcePartitioningError
from streams_runtime.kafka.partitioner import partition_for
from streams_runtime.processor.internals.metrics import TASK_GROUP, Sensor, StreamsMetrics
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder, SinkFactory
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:  # the setup module imports the thread's collaborators
    from streams_runtime.processor.internals.runtime_setup import RuntimeSetup

__all__ = [
    "FULL_CHECKS",
    "SAMPLE_EVERY",
    "SENSOR",
    "SourcePartitioningCheck",
    "topics_with_own_partitioner",
]

log = logging.getLogger("streams_runtime.processor")

#: records of a partition checked one by one before the check samples
FULL_CHECKS = 1_000
#: after FULL_CHECKS, one record in this many is checked
SAMPLE_EVERY = 1_000
SENSOR = "mispartitioned-records"
#: how much of a key a message shows
_KEY_SHOWN = 40
FIX = (
    "produce with partitioner=murmur2_random in confluent-kafka (librdkafka), the Java clients' "
    "default; or set source_partitioning_check='off' if the topic is partitioned by another rule "
    "on purpose"
)


def topics_with_own_partitioner(builder: InternalTopologyBuilder) -> frozenset[str]:
    """The topics (real names) a sink of the topology writes with its own partitioner."""
    return frozenset(
        builder.decorate(factory.topic)
        for factory in builder.nodes.values()
        if isinstance(factory, SinkFactory) and factory.topic is not None and factory.partitioner is not None
    )


class _Partition:
    """What the check keeps of one partition it reads."""

    __slots__ = ("partitions", "full_left", "seen", "sensor", "warned")

    def __init__(self, partitions: int, full_checks: int, sensor: Sensor) -> None:
        self.partitions = partitions  # the topic's partition count
        self.full_left = full_checks  # records still checked one by one
        self.seen = 0  # records seen after those (the sample's position)
        self.sensor = sensor
        self.warned = False


@dataclass(eq=False)
class SourcePartitioningCheck:
    """See the module docstring.

    :param partition_counts: gives topic -> partition count of the topics the thread reads (the
        runtime's, asked when a partition is first seen: sources by pattern add topics).
    :param subtopologies: gives sub-topology id -> info (``source_topics``), to name a task.
    :param metrics: the thread's StreamsMetrics (the task sensors).
    :param fail: raise on a misplaced record instead of counting and warning.
    :param skipped: topics not checked (:func:`topics_with_own_partitioner`).
    """

    partition_counts: Callable[[], Mapping[str, int]]
    subtopologies: Callable[[], Mapping[int, Any]]
    metrics: StreamsMetrics
    _: KW_ONLY
    fail: bool = False
    skipped: frozenset[str] = frozenset()
    full_checks: int = FULL_CHECKS
    sample_every: int = SAMPLE_EVERY
    #: (topic, partition) -> its state, or None for a partition not checked
    _partitions: dict[tuple[str, int], _Partition | None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.sample_every = max(1, self.sample_every)

    @classmethod
    def for_runtime(cls, runtime: RuntimeSetup, metrics: StreamsMetrics) -> SourcePartitioningCheck | None:
        """The check of one stream thread, or None when ``source_partitioning_check`` is ``off``."""
        mode = runtime.config.source_partitioning_check
        if mode == "off":
            return None
        return cls(
            lambda: runtime.partition_counts,
            lambda: runtime.subtopologies,
            metrics,
            fail=mode == "fail",
            skipped=topics_with_own_partitioner(runtime.builder),
        )

    # ------------------------------------------------------------------ the batch (stream thread)
    def check(self, messages: Sequence[Any]) -> None:
        """Check one poll batch (runs of one partition, in offset order), before it is processed.
        The stream thread does not call this: the cut of its batch into runs is made once, by the
        task executor, which hands each run to :meth:`check_run`.

        :raises SourcePartitioningError: under ``fail``, at the first misplaced record.
        """
        topic: Any = None
        partition = -1
        start = 0
        for index, msg in enumerate(messages):
            p = msg.partition()
            if p != partition or msg.topic() != topic:
                if index > start:
                    self.check_run(topic, partition, messages[start:index])
                topic, partition, start = msg.topic(), p, index
        if len(messages) > start:
            self.check_run(topic, partition, messages[start:])

    def check_run(self, topic: str, partition: int, run: Sequence[Any]) -> None:
        """``run``, consecutive records of one partition: every one while the partition is new,
        then one in ``SAMPLE_EVERY`` by its position in the partition."""
        state = self._partitions.get((topic, partition), _UNSEEN)
        if state is _UNSEEN:
            state = self._partitions[(topic, partition)] = self._new_partition(topic, partition)
        if state is None:
            return
        start, end = 0, len(run)
        if state.full_left > 0:
            start = min(state.full_left, end)
            state.full_left -= start
            self._check_records(state, topic, partition, run[:start])
        if start < end:
            first = start + (-state.seen) % self.sample_every
            state.seen += end - start
            if first < end:
                self._check_records(state, topic, partition, run[first : end : self.sample_every])

    def _new_partition(self, topic: str, partition: int) -> _Partition | None:
        count = self.partition_counts().get(topic, 0) if topic is not None else 0
        if topic in self.skipped or count <= 1:  # one partition: every key is where it belongs
            return None
        task = _task_of(self.subtopologies(), topic, partition)
        sensor = self.metrics.sensor(SENSOR, TASK_GROUP, {"task-id": task, "topic": topic})
        return _Partition(count, self.full_checks, sensor)

    def _check_records(self, state: _Partition, topic: str, partition: int, messages: Sequence[Any]) -> None:
        count = state.partitions
        for msg in messages:
            key = msg.key()
            if key is None:
                continue
            expected = partition_for(key, count)
            if expected != partition:
                self._misplaced(state, topic, partition, msg, key, expected)

    def _misplaced(
        self, state: _Partition, topic: str, partition: int, msg: Any, key: bytes, expected: int
    ) -> None:
        state.sensor.increment()
        where = (
            f"the record at offset {msg.offset()} of {topic}-{partition} has key {_shown(key)}, which "
            f"Kafka's default partitioner (murmur2) puts on partition {expected} of {state.partitions}"
        )
        if self.fail:
            raise SourcePartitioningError(
                f"{where}: it was produced with another partitioner, so joins and interactive "
                f"queries look for it on partition {expected} (source_partitioning_check='fail'); {FIX}"
            )
        if not state.warned:
            state.warned = True
            log.warning(
                "%s: records of %s were produced with another partitioner, so joins and interactive "
                "queries look for them elsewhere (counted in %s; this is logged once per partition); %s",
                where,
                topic,
                SENSOR,
                FIX,
            )


_UNSEEN: Any = object()


def _task_of(subtopologies: Mapping[int, Any], topic: str, partition: int) -> str:
    """The id of the task reading ``partition`` of ``topic`` ("" if no sub-topology reads it)."""
    for subtopology, info in subtopologies.items():
        if topic in info.source_topics:
            return str(TaskId(subtopology, partition))
    return ""


def _shown(key: bytes) -> str:
    text = repr(key[:_KEY_SHOWN])
    return text if len(key) <= _KEY_SHOWN else f"{text}... ({len(key)} bytes)"
