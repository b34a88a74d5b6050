"""StreamTask: processes the records of one task (one sub-topology x one partition).

Created by the TopologyTestDriver now (one task holding every non-global node, as Kafka Streams'
driver does) and by the TaskManager. The task owns its processor instances, its
stores, its input queues and its punctuation schedules; it borrows the RecordCollector (the
producer side), the metrics registry and the thread's record cache.

Lifecycle: the task state machine of :mod:`.abstract_task` (transitions not listed there
raise)::

    CREATED --initialize()--> RESTORING --complete_restoration()--> RUNNING
    any of them --suspend()--> SUSPENDED --close()--> CLOSED   (close() suspends first)

initialize() steps:
  1. build every store of the task from its StoreBuilder (one instance per task);
  2. init the stores in registration order (they register with the context, join the cache);
  3. init the processors in node order with each node current (so schedules bind to it);
  4. create one RecordQueue per source topic for the task's partition.

process() handles one record: pick the queue with the earliest head, advance stream time,
set the record context, forward from its source node. commit() flushes the stores in
registration order (caches first: a flush forwards downstream, possibly into later stores).
"""

from __future__ import annotations

import itertools
import logging
import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from streams_runtime.errors import (
    ProductionError,
    StreamsError,
    StreamsProcessingError,
    TaskMigratedError,
    TransactionError,
)
from streams_runtime.processor.api import PunctuationType, Record
from streams_runtime.processor.internals.abstract_task import IllegalStateError, State, Task
from streams_runtime.processor.internals.context import ProcessorContextImpl, TaskRecordCollector
from streams_runtime.processor.internals.handlers import DeserializationHandler, ProcessingHandler
from streams_runtime.processor.internals.nodes import ProcessorNode, ProcessorTopology, SinkNode, SourceNode
from streams_runtime.processor.internals.partition_group import (
    UNKNOWN,
    PartitionGroup,
    RawRecord,
    RecordQueue,
)
from streams_runtime.processor.internals.punctuation import PunctuationQueue, PunctuationSchedule
from streams_runtime.processor.task_id import GLOBAL_TASK_ID
from streams_runtime.processor.timestamps import ConsumerRecord, Extractor, resolve_extractor
from streams_runtime.serdes import serialize_or_raise

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig
    from streams_runtime.processor.internals.metrics import StreamsMetrics
    from streams_runtime.processor.task_id import TaskId
    from streams_runtime.serdes import Serde
    from streams_runtime.state.internals.record_cache import ThreadCache

log = logging.getLogger("streams_runtime.processor")

_new_tuple = tuple.__new__  # a named tuple without its Python-level constructor
#: what follows a batch's last message in the drain loop, so the record read ahead of it goes in
#: by the same lines as every other one
_END_OF_BATCH = (None,)


def resolve_serde(serde: Serde | None, config: StreamsConfig, side: str) -> Serde:
    """A node's serde, or the config default; wrapper serdes (Change) get the default inside."""
    if serde is None:
        # a configured default is any object with the two methods (SerdeLike); the runtime
        # calls nothing else of a Serde on it
        return cast("Serde", config.default_serde(side))
    with_default = getattr(serde, "with_default_inner", None)
    if with_default is not None:
        wrapped: Serde = with_default(lambda: config.default_serde(side))
        return wrapped
    return serde


class StreamTask(Task):
    """See the module docstring.

    Besides its processors and stores, the task carries what the TaskManager needs of it:
    ``state_manager`` (None for a stateless task), ``input_partitions``, the input offsets last
    committed (``committed_offsets``) and the group's committed offsets when its input was
    assigned (``assigned_offsets``), the moment its first input queue ran empty while another
    had records (``idle_since``, for ``max_task_idle_ms``) and the moment it began waiting for
    records of an empty input that are on the broker (``fetch_wait_since``), its input queues when
    it has several (``multi_queues``) and its ``process-total`` sensor (``processed_sensor``).
    """

    def __init__(
        self,
        task_id: TaskId,
        topology: ProcessorTopology,
        store_builders: dict[str, Any],
        config: StreamsConfig,
        collector: TaskRecordCollector,
        metrics: StreamsMetrics,
        cache: ThreadCache | None,
        wall_clock: Callable[[], int],
        state_dir: pathlib.Path | None,
        global_stores: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(task_id)
        self.topology = topology
        self.config = config
        self._store_builders = store_builders
        self._collector = collector
        self.collector = collector
        self.state_manager: Any = None
        self.input_partitions: list[tuple[str, int]] = []
        self.committed_offsets: dict[tuple[str, int], int] = {}
        #: the group's committed offsets (next to read) when the input was assigned (for the console)
        self.assigned_offsets: dict[tuple[str, int], int] = {}
        self.idle_since: int | None = None
        self.fetch_wait_since: int | None = None  # waiting for records on the broker (TaskExecutor)
        self.multi_queues: list[Any] | None = None
        self.processed_sensor: Any = None
        self._collector_flush = getattr(collector, "flush", None)
        self._store_list: list[Any] = []
        self.wall_clock_ms = wall_clock
        self.stream_time = UNKNOWN
        self.commit_requested = False
        self.consumed_offsets: dict[tuple[str, int], int] = {}
        #: changelog offsets the stores reflected when the task began running, and the records
        #: of each changelog partition the producer failed since (see post_commit)
        self._changelog_base: dict[tuple[str, int], int] = {}
        self._changelog_failed: dict[tuple[str, int], int] = {}
        #: exactly-once: committed transactions that wrote each changelog partition, and the
        #: partition's sent count at the last of them (see post_commit)
        self._changelog_markers: dict[tuple[str, int], int] = {}
        self._changelog_sent_at_commit: dict[tuple[str, int], int] = {}
        self.dropped = metrics.dropped_records(task_id)
        #: each record's lateness against the task's stream time (debug recording level, and not
        #: for the global task, as in Kafka Streams: its records go through no partition group)
        self.lateness: Any = None
        if config.metrics_recording_level != "info" and task_id != GLOBAL_TASK_ID:
            self.lateness = metrics.record_lateness(task_id)
        self.processing_handler = ProcessingHandler(
            config.processing_exception_handler, self.dropped, task_id
        )
        self.deserialization_handler = DeserializationHandler(
            config.default_deserialization_exception_handler,
            config.dead_letter_topic,
            self.dropped,
            collector,
            task_id,
            lambda: metrics.dead_letter_records(task_id),
        )
        self.context = ProcessorContextImpl(
            self,
            config.required_application_id(),
            task_id,
            config,
            state_dir,
            metrics,
            cache,
            collector,
            self.processing_handler,
        )
        self.stores: dict[str, Any] = {}
        self._global_stores = global_stores or {}
        self.partition_group = PartitionGroup()
        self._stream_punctuations = PunctuationQueue()
        self._wall_punctuations = PunctuationQueue()

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, input_partition: int | None = None) -> None:
        if self.state is not State.CREATED:
            raise IllegalStateError(self.id, self.state, State.RESTORING)  # before any store opens
        context = self.context
        partition = self.id.partition if input_partition is None else input_partition
        # Step 1 (with a zero-byte cache the caching layers are stripped, as Kafka Streams does)
        no_cache = self.config.statestore_cache_max_bytes == 0
        for name in self.topology.store_names:
            builder = self._store_builders[name]
            if no_cache and callable(getattr(builder, "with_caching_disabled", None)):
                builder.with_caching_disabled()
            self.stores[name] = builder.build()
        for store in self._global_stores.values():
            context.add_store(store, is_global=True)
        # Step 2
        for store in self.stores.values():
            store.init(context, store)
            context.add_store(store)
        # Step 3
        default_extractor = resolve_extractor(self.config.default_timestamp_extractor, self.wall_clock_ms)
        for node in self.topology.nodes.values():
            context.set_current_node(node)
            if isinstance(node, SinkNode):
                node.key_serde = resolve_serde(node.key_serde, self.config, "key")
                node.value_serde = resolve_serde(node.value_serde, self.config, "value")
                node.bind(context, self._collector, serialize_or_raise)
            node.init(context)
        context.set_current_node(None)
        # Step 4
        for topic, source in self.topology.sources_by_topic.items():
            self.add_queue_for(topic, partition, source, default_extractor)
        self._store_list = list(self.stores.values())
        queues = list(self.partition_group.queues.values())
        self.multi_queues = queues if len(queues) > 1 else None
        self.transition_to(State.RESTORING)

    def complete_restoration(self) -> None:
        """RESTORING -> RUNNING: every store is current; the task may process. The changelog
        offsets the stores reflect now are the base its written offsets are counted from
        (:meth:`post_commit`)."""
        manager = self.state_manager
        self._changelog_base = manager.checkpointed_offsets() if manager is not None else {}
        self._changelog_failed = {}
        self._changelog_markers = {}
        self._changelog_sent_at_commit = {}
        self.context.reset_changelog_counts()
        self.transition_to(State.RUNNING)

    def add_pattern_topic(self, topic: str, partition: int) -> bool:
        """Start reading ``topic`` (a partition of it) when a pattern source matches it; True if one does."""
        source = self.topology.source_for_pattern_topic(topic)
        if source is None:
            return False
        self.topology.sources_by_topic[topic] = source
        default = resolve_extractor(self.config.default_timestamp_extractor, self.wall_clock_ms)
        self.add_queue_for(topic, partition, source, default)
        return True

    def add_queue_for(
        self, topic: str, partition: int, source: SourceNode, default_extractor: Extractor
    ) -> None:
        extractor = (
            resolve_extractor(source.timestamp_extractor, self.wall_clock_ms)
            if source.timestamp_extractor is not None
            else default_extractor
        )
        key_serde = resolve_serde(source.key_serde, self.config, "key")
        value_serde = resolve_serde(source.value_serde, self.config, "value")
        self.partition_group.add_queue(
            RecordQueue(
                topic,
                partition,
                source,
                key_serde,
                value_serde,
                extractor,
                self.deserialization_handler,
                self.dropped,
            )
        )

    def close(self) -> None:
        """Close processors and stores (suspending first); a closed task stays closed."""
        if self.state is State.CLOSED:
            return
        self.suspend()
        errors = []
        for node in self.topology.nodes.values():
            try:
                node.close()
            except Exception as exc:  # keep closing the rest; report the first
                errors.append(exc)
        for store in self.stores.values():
            try:
                store.close()
            except Exception as exc:
                errors.append(exc)
        self._stream_punctuations.close()
        self._wall_punctuations.close()
        self.transition_to(State.CLOSED)
        if errors:
            raise StreamsError(f"task {self.id}: errors while closing: {errors}") from errors[0]

    # ------------------------------------------------------------------ input and processing
    def add_record(self, record: RawRecord) -> None:
        topic, partition = record.topic(), record.partition()
        queue = self.partition_group.queue_for(topic, partition)
        if queue is None:
            raise StreamsError(f"task {self.id} does not read topic {topic} partition {partition}")
        queue.add(record)

    def has_records_queued(self) -> bool:
        return self.partition_group.has_records()

    def process(self) -> bool:
        """Process the next record; False when no queue has a record."""
        queue = self.partition_group.next_queue()
        if queue is None:
            return False
        consumed, time = queue.poll()
        if self.lateness is not None:
            self._record_lateness(time)
        elif time > self.stream_time:
            self.stream_time = time
        record = Record(consumed.key, consumed.value, time, consumed.headers)
        context = self.context
        context.set_source(consumed.topic, consumed.partition, consumed.offset, record)
        context.set_current_node(queue.source)
        try:
            context.forward(record)
        finally:
            context.set_current_node(None)
        # only once every downstream node (sinks included) took the record: a record whose
        # processing raised is never covered by a committed offset, even if the error is handled
        # above and a commit follows (its output may never have been sent)
        self.consumed_offsets[(consumed.topic, consumed.partition)] = consumed.offset
        return True

    def _record_lateness(self, time: int) -> None:
        """Stream time moves on to a later ``time``; the record's lateness against it (0 when it
        moved on) is recorded. Called only where lateness is recorded (debug level): otherwise the
        processing paths move stream time on inline."""
        if time > self.stream_time:
            self.stream_time = time
            self.lateness.record(0)
        else:
            self.lateness.record(self.stream_time - time)

    def process_all(self) -> int:
        """Process every buffered record; return how many. A task with one input queue has no
        order to choose: it drains the queue in one loop (:meth:`_drain`)."""
        queues = self.partition_group.ordered_queues
        if len(queues) != 1:
            n = 0
            while self.process():
                n += 1
            return n
        return self._drain(queues[0])

    def _drain(self, queue: RecordQueue) -> int:
        """:meth:`process` for every record of the task's only queue, in one loop over the
        consumer's raw messages: the same rules (deserialization handler, timestamp extraction,
        stream time, record context, the processing handler at the first node), without a
        queue operation or an intermediate record per input. As the queue does, the record after
        the one to process is deserialized first (it becomes the head): when that fails under
        ``log_and_fail``, the record before it is dropped with it, unprocessed and uncommitted,
        as in Kafka Streams. The consumed offset is recorded once, for the last record every
        downstream node took; records not reached when one raises go back to the queue."""
        forward = queue.source_forward
        if forward is None:  # made once per queue (the topology is fixed once initialized)
            forward = queue.source_forward = self.context.source_forwarder(queue.source)
        topic, partition = queue.topic, queue.partition
        n = 0
        offset = -1
        # the record to process next, deserialized, and its offset (-1: none read ahead)
        ahead: Record | None = None
        ahead_offset = -1
        if queue.head is not None:  # read by the one-record path (or before a queue was added)
            head, time = queue.pop_head()
            ahead, ahead_offset = Record(head.key, head.value, time, head.headers), head.offset
        raw = queue.take_raw()
        key_deserialize, value_deserialize = queue.key_serde.deserialize, queue.value_serde.deserialize
        # C functions for the serdes that have them (Json, String, Bytes): no Python call per field
        key_decode, value_decode = queue.key_decode, queue.value_decode
        fast_time = queue.fast_extraction
        lateness = self.lateness
        taken = 0
        try:
            for msg in itertools.chain(raw, _END_OF_BATCH):
                taken += 1
                if msg is not None:
                    try:
                        key = msg.key()
                        if key_decode is None or key is None:
                            key = key_deserialize(topic, key)
                        else:
                            key = key_decode(key)
                        value = msg.value()
                        if value_decode is None or value is None:
                            value = value_deserialize(topic, value)
                        else:
                            value = value_decode(value)
                    except Exception:  # the queue's path: the error named, the handler decides
                        consumed = queue.deserialize(msg)
                        if consumed is None:
                            continue
                        key, value = consumed.key, consumed.value
                    time = msg.timestamp()[1]
                    if not (fast_time and time >= 0):
                        time = queue.extract_time(
                            _new_tuple(
                                ConsumerRecord,
                                (topic, partition, msg.offset(), time, key, value, msg.headers() or ()),
                            )
                        )
                        if time < 0:
                            continue
                if ahead is not None:
                    # the record read ahead into the topology (stream time first, as process())
                    ahead_time = ahead.timestamp
                    if ahead_time > queue.partition_time:
                        queue.partition_time = ahead_time
                    if lateness is not None:
                        self._record_lateness(ahead_time)
                    elif ahead_time > self.stream_time:
                        self.stream_time = ahead_time
                    try:
                        forward(topic, partition, ahead_offset, ahead)
                    except BaseException:
                        taken -= 1  # the record read ahead stays queued (the queue's head)
                        raise
                    offset = ahead_offset
                    n += 1
                if msg is None:  # the end of the batch: the last record read ahead went in
                    break
                ahead, ahead_offset = Record(key, value, time, msg.headers() or ()), msg.offset()
        finally:
            if taken < len(raw):  # one raised: what it did not reach stays queued
                queue.give_back(list(itertools.islice(raw, taken, None)))
            if offset >= 0:
                self.consumed_offsets[(topic, partition)] = int(offset)
        return n

    # ------------------------------------------------------------------ punctuation
    def schedule(
        self, node: ProcessorNode, interval: int, kind: PunctuationType, punctuator: Callable[[int], None]
    ) -> PunctuationSchedule:
        if kind is PunctuationType.STREAM_TIME:
            return self._stream_punctuations.schedule(PunctuationSchedule(node, 0, interval, punctuator))
        due = self.wall_clock_ms() + interval
        return self._wall_punctuations.schedule(PunctuationSchedule(node, due, interval, punctuator))

    def maybe_punctuate_stream_time(self) -> bool:
        if self.stream_time == UNKNOWN:
            return False
        return self._stream_punctuations.may_punctuate(self.stream_time, self._punctuate)

    def maybe_punctuate_system_time(self) -> bool:
        return self._wall_punctuations.may_punctuate(self.wall_clock_ms(), self._punctuate)

    def _punctuate(self, schedule: PunctuationSchedule, now: int) -> None:
        context = self.context
        context.set_source(None, -1, -1, Record(None, None, now, ()))
        context.set_current_node(schedule.node)
        try:
            schedule.punctuator(now)
        except (StreamsProcessingError, TaskMigratedError, TransactionError, ProductionError):
            raise
        except Exception as exc:
            self.processing_handler.handle(exc, schedule.node.name, None, None)
        finally:
            context.set_current_node(None)
            context.set_source(None, -1, -1, None)

    # ------------------------------------------------------------------ commit
    def request_commit(self) -> None:
        self.commit_requested = True

    def commit(self) -> None:
        """Flush every store (record caches first, forwarding downstream), then the collector."""
        for store in self._store_list:
            store.flush()
        flush = self._collector_flush
        if flush is not None:
            flush()
        self.commit_requested = False

    def post_commit(self) -> None:
        """After the task's offsets were committed: its state manager learns the changelog
        offsets it wrote, and the checkpoint is written at once unless the collector is
        transactional (then only a clean close writes it: state on disk must never be ahead of
        what a read_committed changelog holds).

        No delivery report per record: a changelog partition's last offset is counted from the
        offset the store reflected when the task began running, ``base + sent - failed``, plus
        under exactly-once one marker for each committed transaction that wrote the partition
        before the one holding its last record; never above the true one (see
        :mod:`.record_collector`)."""
        manager = self.state_manager
        if manager is None:
            return
        collector = self._collector
        transactional = collector.eos_enabled
        sent = self.context.changelog_counts()
        if sent:
            partitions = [tp for tp in manager.changelog_partitions() if tp[0] in sent]
            take_failed = getattr(collector, "take_failed_changelog", None)
            failed = self._changelog_failed
            if take_failed is not None:
                for tp, n in take_failed(partitions).items():
                    failed[tp] = failed.get(tp, 0) + n
            base = self._changelog_base
            counted = {tp: base.get(tp, -1) + sent[tp[0]] - failed.get(tp, 0) for tp in partitions}
            if transactional:
                # the transaction just committed wrote the partitions whose count moved: each
                # such transaction ends with one marker; all but the last precede the last record
                markers, at_commit = self._changelog_markers, self._changelog_sent_at_commit
                for tp in partitions:
                    if sent[tp[0]] != at_commit.get(tp, 0):
                        at_commit[tp] = sent[tp[0]]
                        markers[tp] = markers.get(tp, 0) + 1
                    counted[tp] += markers.get(tp, 1) - 1
            manager.update_changelog_offsets({tp: o for tp, o in counted.items() if o >= 0})
        if not transactional:
            manager.checkpoint()
