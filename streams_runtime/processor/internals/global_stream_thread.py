"""GlobalStreamThread: keeps the global stores (GlobalKTables, ``add_global_store``) of one client.

Created and owned by a KafkaStreams client (one per client, only when the topology has global
stores). It owns one consumer assigned to ALL partitions of every global source topic (manual
``assign``, made by the client supplier's ``get_global_consumer``: it
never joins a group and never commits offsets) and one global task (the global nodes of the
topology, as the TopologyTestDriver builds it). The source topic IS the store's changelog: no
changelog topic is created or written for a global store, as in Kafka Streams.

Corrupt records (restore and thread loop alike) go through the global task's deserialization
handler, as in a stream task: ``log_and_fail`` raises (a failed restore fails ``start()``, a
failure afterwards ends the thread and the client), ``log_and_continue`` logs and skips,
``dead_letter`` writes the raw record with the ``__streams.errors.*`` headers to
``dead_letter_topic`` through the :class:`GlobalRecordCollector`, whose producer is created only
when the first dead-letter record is sent and is flushed before every checkpoint.

Dead-letter records are sent once per corrupt record, not once per read. Every checkpoint the
thread writes comes after the dead-letter acks (see :meth:`GlobalStreamThread._checkpoint`), so
the on-disk ``.checkpoint`` also says "every corrupt record at or below this offset is in the
dead-letter topic". That holds whether or not the checkpoint is trusted for the stores' data, so
it is read at start even for in-memory global stores (which re-read the topic from its start):
records at or below it are applied again but not dead-lettered again; records past it (the tail
after a crash, whose acks were never confirmed) are dead-lettered again, so nothing is lost
(at-least-once only for that tail). A checkpoint outside ``[log start - 1, true end - 1]`` (a
fresh broker, docs/decisions/0001-embedded-broker.md) says nothing about the current log and is ignored for
this as well.

Local state: ``<state_dir>/<application_id>/global/`` (the StateDirectory's ``global`` task
directory, locked by this thread while it runs) holds the persistent global stores and a
``.checkpoint`` with the last source offset every partition's data reflects. A checkpoint is
only trusted when every global store is persistent (in-memory stores died with the process).

Start (:meth:`start_and_restore`, called by ``KafkaStreams.start()`` before any stream thread
starts; it returns when the stores are current or raises):

1. lock the global directory, build and initialize the global task, read the checkpoint;
2. ends: ListOffsets "latest" of every partition is its end on Apache Kafka (any broker but
   Tansu). On the embedded Tansu it only places a probe (docs/decisions/0001-embedded-broker.md):
   every partition is assigned at ``latest - 1`` and read until its EOF event, whose offset is the
   TRUE end;
3. a checkpoint beyond the true end (a fresh broker, docs/decisions/0001-embedded-broker.md) or below the log
   start: log a WARNING,
   wipe the global state and restore from the beginning; otherwise start at ``checkpoint + 1``;
4. restore: read every partition from its start to its true end, applying each record through
   the global processors (what they do on update, so ``add_global_store`` processors and
   GlobalKTable sources restore alike; corrupt records meet the deserialization handler); flush
   the stores, wait for the dead-letter records' acks, and write the checkpoint;
5. only now the stores are handed to the stream tasks (read-only to them, shared by every task
   of every thread of the client, through ``context.get_state_store``).

Then the thread loop: consume updates, apply them through the global processors, and every
``commit_interval_ms`` flush the stores and the dead-letter producer, then write the checkpoint.
An exception ends the loop and is reported to the client (``on_death``), which shuts down (as
Kafka Streams does when its global thread dies). Closing flushes, checkpoints, closes the task,
the producer (if any) and the consumer, and unlocks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka import clients
from streams_runtime.kafka.client_supplier import KafkaClientSupplier
from streams_runtime.kafka.offsets import (
    LIST_OFFSETS_RETRY_S,
    is_partition_eof,
    is_retriable_listing_error,
    probe_offset,
)
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.handlers import DLQ_OFFSET, DLQ_PARTITION, DLQ_TOPIC
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.record_collector import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ProducerSettings,
    RecordCollector,
)
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import GLOBAL_TASK_ID
from streams_runtime.processor.timestamps import resolve_extractor

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig
    from streams_runtime.processor.api import Headers
    from streams_runtime.processor.internals.runtime_setup import RuntimeSetup

log = logging.getLogger("streams_runtime.processor")

GLOBAL_DIR = "global"
CONSUME_BATCH = 2000
LIST_OFFSETS_TIMEOUT_S = 10.0
DEFAULT_RESTORE_TIMEOUT_S = 300.0

TopicPartitionKey = tuple[str, int]


class GlobalRecordCollector:
    """The global task's collector. Created and owned by the GlobalStreamThread; the global task
    borrows it (its deserialization handler and any change-logging store send through it).

    Global processors write no topics: the only records that leave the global thread are the
    dead-letter records of corrupt global records (``default_deserialization_exception_handler=
    "dead_letter"``), written exactly as a stream task writes them (the raw key, value, headers
    and timestamp plus the ``__streams.errors.*`` headers, see ``handlers.py``). Anything else is
    logged and dropped (a global store's changelog is its source topic).

    Invariants: the producer (a plain :class:`RecordCollector`, never transactional) is created on
    the first dead-letter record, so a global thread that meets no corrupt record opens no
    producer; :meth:`flush` (called by ``StreamTask.commit()``, i.e. by the thread's checkpoint
    step before the checkpoint is written) waits until every dead-letter record is acknowledged
    and raises if one failed, so the global checkpoint never moves past a record whose
    dead-letter copy is not in Kafka (unless ``default_production_exception_handler=continue``
    says to log and skip a failed write, as it does in a stream thread); :meth:`close` flushes
    and closes the producer.
    """

    eos_enabled = False  # its producer is never transactional

    def __init__(
        self,
        config: StreamsConfig,
        bootstrap_servers: str,
        client_id: str,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
    ) -> None:
        dead_letter = config.default_deserialization_exception_handler == "dead_letter"
        self.dead_letter_topic: str | None = config.dead_letter_topic if dead_letter else None
        overrides = config.client_configs("producer.")
        overrides.pop("transactional.id", None)  # never transactional: no transaction to join
        continue_on_error = config.default_production_exception_handler == "continue"
        self._settings = ProducerSettings(
            bootstrap_servers,
            client_id,
            overrides,
            continue_on_error=continue_on_error,
            client_supplier=client_supplier,
        )
        #: the largest record the producer accepts (dead-letter records are bounded by it)
        self.max_message_bytes = int(overrides.get("message.max.bytes", DEFAULT_MAX_MESSAGE_BYTES))
        self._collector: RecordCollector | None = None
        #: per source partition, the highest offset whose dead-letter copy is known to be in Kafka
        #: (the last checkpoint written); set by the GlobalStreamThread, see the module docstring
        self.dead_lettered_up_to: dict[TopicPartitionKey, int] = {}

    def send(
        self, topic: str, key: Any, value: Any, headers: Headers, timestamp: int, partition: int | None
    ) -> None:
        if self.dead_letter_topic is None or topic != self.dead_letter_topic:
            log.warning(
                "global stream thread: record for topic %s dropped (global processors write no topics)", topic
            )
            return
        source = _source_of(headers)
        if source is not None and source[1] <= self.dead_lettered_up_to.get(source[0], -1):
            log.debug(
                "global stream thread: corrupt record %s-%d@%d read again; its dead-letter copy is "
                "already in %s (at or below the checkpoint)",
                source[0][0],
                source[0][1],
                source[1],
                topic,
            )
            return
        if self._collector is None:
            log.info(
                "global stream thread: creating producer %s for dead-letter topic %s",
                self._settings.client_id,
                topic,
            )
            self._collector = RecordCollector(self._settings)
        self._collector.send(topic, key, value, headers, timestamp, None)

    def poll(self) -> None:
        """Serve delivery reports (raises a delivery error that came back)."""
        if self._collector is not None:
            self._collector.poll()

    def flush(self) -> None:
        """Wait until every dead-letter record sent so far is acknowledged (raises if one failed)."""
        if self._collector is not None:
            self._collector.wait_for_acks()

    def close(self) -> None:
        collector, self._collector = self._collector, None
        if collector is not None:
            collector.close()


def _source_of(headers: Headers) -> tuple[TopicPartitionKey, int] | None:
    """The source partition and offset the deserialization handler named in a dead-letter record's
    headers (its own headers come last, so a source record's headers cannot fake them)."""
    named: dict[str, bytes] = {}
    for key, value in reversed(list(headers or ())):
        if key in (DLQ_TOPIC, DLQ_PARTITION, DLQ_OFFSET) and key not in named:
            if value is None:  # a handler's header always has a value: not a dead-letter record
                return None
            named[key] = value
    try:
        return (named[DLQ_TOPIC].decode(), int(named[DLQ_PARTITION])), int(named[DLQ_OFFSET])
    except (KeyError, ValueError, AttributeError):
        return None


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


class GlobalStreamThread(threading.Thread):
    """See the module docstring. ``runtime`` is the client's RuntimeSetup (``global_topics`` set)."""

    def __init__(
        self, runtime: RuntimeSetup, on_death: Callable[[GlobalStreamThread], None] | None = None
    ) -> None:
        super().__init__(name=f"{runtime.client_id}-GlobalStreamThread", daemon=True)
        self._runtime = runtime
        self._on_death = on_death
        self._config = runtime.config
        self._partitions: list[TopicPartitionKey] = sorted(
            (topic, p) for topic, count in runtime.global_topics.items() for p in range(count)
        )
        self._stop_requested = threading.Event()
        self._ready = threading.Event()
        self._consumer: Any = None
        self._task: StreamTask | None = None
        self._collector = GlobalRecordCollector(
            self._config, runtime.bootstrap_servers, f"{self.name}-producer", runtime.client_supplier
        )
        self._locked = False
        self._positions: dict[TopicPartitionKey, int] = {}  # last offset applied per partition
        self._checkpointed: dict[TopicPartitionKey, int] = {}
        self.error: BaseException | None = None
        self.restored = 0  # records applied during the start-up restore

    # ------------------------------------------------------------------ public
    @property
    def stores(self) -> dict[str, Any]:
        return self._task.stores if self._task is not None else {}

    def start_and_restore(self, timeout_s: float = DEFAULT_RESTORE_TIMEOUT_S) -> dict[str, Any]:
        """Start the thread and wait until the global stores are current (steps 1-4).

        :returns: the global stores (name -> root store).
        :raises StreamsError: the restore failed or timed out (the thread is stopped then).
        """
        self.start()
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.05):
            if not self.is_alive():
                break
            if time.monotonic() > deadline:
                self.shutdown()
                self.join(30)
                raise StreamsError(f"{self.name}: global stores not restored within {timeout_s} s")
        if not self._ready.is_set():
            self.join()
            raise StreamsError(
                f"{self.name}: restoring the global stores failed: {self.error}"
            ) from self.error
        return self.stores

    def shutdown(self) -> None:
        self._stop_requested.set()

    # ------------------------------------------------------------------ thread body
    def run(self) -> None:
        try:
            self._initialize()  # Step 1
            self._restore()  # Steps 2-4
            self._ready.set()
            self._loop()
        except BaseException as exc:
            self.error = exc
            log.error("global stream thread %s failed: %s: %s", self.name, type(exc).__name__, exc)
        finally:
            self._close()
            if self._on_death is not None and self._ready.is_set():
                self._on_death(self)

    def _initialize(self) -> None:
        sd = self._runtime.state_directory
        if not sd.lock(GLOBAL_DIR):
            raise StreamsError(
                f"the global state directory {sd.task_dir(GLOBAL_DIR)} is locked by another "
                f"client or process (give each client its own state_dir)"
            )
        self._locked = True
        self._task = self._build_task()
        overrides = self._config.client_configs("global_consumer.")
        eos = self._config.processing_guarantee == "exactly_once_v2"  # as the main consumer
        self._consumer = self._runtime.client_supplier.get_global_consumer(
            self._runtime.bootstrap_servers,
            {
                "client.id": f"{self.name}-consumer",
                "isolation.level": clients.isolation_level(eos),
                **overrides,
            },
        )

    def _built(self) -> StreamTask:
        """The global task (built by ``start`` before any other use)."""
        if self._task is None:
            raise StreamsError(f"global stream thread {self.name}: the global task is not built yet")
        return self._task

    def _build_task(self) -> StreamTask:
        rt = self._runtime
        builder = rt.builder
        groups = builder.node_groups().values()
        nodes = [n for names in groups if builder.is_global_group(names) for n in names]
        topology = build_processor_topology(builder, nodes)
        topology.store_names = [n for n, e in builder.stores.items() if e.is_global]
        store_builders = {name: entry.builder for name, entry in builder.stores.items()}
        task = StreamTask(
            GLOBAL_TASK_ID,
            topology,
            store_builders,
            self._config,
            self._collector,
            StreamsMetrics(),
            None,
            _wall_clock_ms,
            rt.state_directory.task_dir(GLOBAL_DIR),
        )
        task.initialize(input_partition=0)
        extractor = resolve_extractor(self._config.default_timestamp_extractor, _wall_clock_ms)
        for topic, partition in self._partitions:
            if partition != 0:
                task.add_queue_for(topic, partition, topology.sources_by_topic[topic], extractor)
        return task

    def _trusted_checkpoint(self) -> dict[TopicPartitionKey, int]:
        if not all(getattr(s, "persistent", False) for s in self._built().stores.values()):
            return {}
        checkpoint: dict[TopicPartitionKey, int] = self._runtime.state_directory.read_checkpoint(GLOBAL_DIR)
        return checkpoint

    def _restore(self) -> None:
        consumer = self._consumer
        # Step 2
        lows: dict[TopicPartitionKey, int] = {}
        listed: dict[TopicPartitionKey, int] = {}
        probes = []
        for tp in self._partitions:
            low, latest = self._listed_offsets(tp)
            lows[tp] = max(0, low)
            listed[tp] = max(lows[tp], latest)
            probes.append(clients.TopicPartition(tp[0], tp[1], probe_offset(low, latest)))
        ends: dict[TopicPartitionKey, int] = {}
        if self._runtime.broker.is_tansu:
            consumer.assign(probes)
        else:
            ends = listed
        while len(ends) < len(self._partitions):
            self._check_stop("probing the global topics")
            for msg in consumer.consume(CONSUME_BATCH, 0.1):
                err = msg.error()
                if err is not None:
                    self._on_error(msg, ends)
        # Step 3
        checkpoint = self._trusted_checkpoint()
        stale = [tp for tp, off in checkpoint.items() if tp in ends and not lows[tp] <= off + 1 <= ends[tp]]
        if stale:
            for tp in stale:
                log.warning(
                    "global topic %s-%d ends at %d (log start %d) but the local global state is at "
                    "offset %d: fresh broker or deleted records? wiping the global state and "
                    "restoring it from the beginning",
                    tp[0],
                    tp[1],
                    ends[tp],
                    lows[tp],
                    checkpoint[tp],
                )
            self._built().close()
            self._runtime.state_directory.wipe_task(GLOBAL_DIR)
            self._task = self._build_task()
            checkpoint = {}
        self._collector.dead_lettered_up_to = self._dead_letter_watermark(lows, ends)
        starts = {tp: (checkpoint[tp] + 1 if tp in checkpoint else lows[tp]) for tp in self._partitions}
        self._positions = {tp: starts[tp] - 1 for tp in self._partitions}
        # Step 4
        consumer.assign([clients.TopicPartition(t, p, starts[(t, p)]) for t, p in self._partitions])
        began = time.monotonic()
        pending = {tp for tp in self._partitions if starts[tp] < ends[tp]}
        while pending:
            self._check_stop("restoring the global stores")
            eofs: dict[TopicPartitionKey, int] = {}
            self.restored += self._apply(consumer.consume(CONSUME_BATCH, 0.1), eofs)
            for tp in list(pending):
                if self._positions[tp] + 1 >= ends[tp] or eofs.get(tp, -1) >= ends[tp]:
                    pending.discard(tp)
        self._checkpoint()
        log.info(
            "%s: global stores %s restored (%d records in %.2fs)",
            self.name,
            sorted(self._built().stores),
            self.restored,
            time.monotonic() - began,
        )

    def _dead_letter_watermark(
        self, lows: dict[TopicPartitionKey, int], ends: dict[TopicPartitionKey, int]
    ) -> dict[TopicPartitionKey, int]:
        """The on-disk checkpoint, trusted or not for the stores (see the module docstring): corrupt
        records at or below it are already in the dead-letter topic. Empty when any partition's
        offset is outside its log (a fresh broker: the offsets name other records)."""
        written = self._runtime.state_directory.read_checkpoint(GLOBAL_DIR)
        if any(tp in ends and not lows[tp] <= off + 1 <= ends[tp] for tp, off in written.items()):
            return {}
        return {tp: off for tp, off in written.items() if tp in ends}

    def _on_error(self, msg: Any, ends: dict[TopicPartitionKey, int] | None = None) -> None:
        err = msg.error()
        if is_partition_eof(err):
            if ends is not None:
                ends.setdefault((msg.topic(), msg.partition()), msg.offset())
            return
        if err.fatal() or msg.topic() is not None:
            raise StreamsError(f"global consumer: {msg.topic()}-{msg.partition()}: {err}")
        log.warning("global consumer: %s", err)

    def _listed_offsets(self, tp: TopicPartitionKey) -> tuple[int, int]:
        """ListOffsets of one global partition, asked again while the cluster fails (a broker
        bounce: a leader moves, a broker catches up) for up to :data:`LIST_OFFSETS_RETRY_S`."""
        since = time.monotonic()
        while True:
            try:
                low, latest = self._consumer.get_watermark_offsets(
                    clients.TopicPartition(*tp), timeout=LIST_OFFSETS_TIMEOUT_S
                )
                return int(low), int(latest)
            except clients.KafkaException as exc:
                where = f"global topic {tp[0]}-{tp[1]}"
                if not is_retriable_listing_error(exc) or time.monotonic() - since >= LIST_OFFSETS_RETRY_S:
                    raise StreamsError(f"cannot list the offsets of {where}: {exc}") from exc
                log.info("%s: cannot list its offsets yet (%s); trying again", where, exc)
            self._check_stop("listing the global topics' offsets")
            time.sleep(0.5)

    def _check_stop(self, doing: str) -> None:
        if self._stop_requested.is_set():
            raise StreamsError(f"{self.name}: shut down while {doing}")

    def _apply(self, messages: list[Any], eofs: dict[TopicPartitionKey, int] | None = None) -> int:
        """Feed records to the global task and process them all; returns how many were fed."""
        task, positions, n = self._built(), self._positions, 0
        for msg in messages:
            if msg.error() is not None:
                self._on_error(msg, eofs)
                continue
            tp = (msg.topic(), msg.partition())
            offset = msg.offset()
            if offset <= positions.get(tp, -1):
                continue
            task.add_record(msg)
            positions[tp] = offset
            n += 1
        if n:
            while task.process():
                pass
        return n

    def _loop(self) -> None:
        commit_interval = self._config.commit_interval_ms
        poll_s = self._config.poll_ms / 1000
        last_commit = _wall_clock_ms()
        while not self._stop_requested.is_set():
            self._apply(self._consumer.consume(CONSUME_BATCH, poll_s))
            self._collector.poll()
            now = _wall_clock_ms()
            if now - last_commit >= commit_interval:
                self._checkpoint()
                last_commit = now

    def _checkpoint(self) -> None:
        """Flush the global stores and wait for the dead-letter records' acks (``task.commit()``
        flushes the stores, then the collector), then record the offsets their data reflects: a
        failed dead-letter write raises here, before the checkpoint moves past its record."""
        self._built().commit()
        offsets = {tp: off for tp, off in self._positions.items() if off >= 0}
        if offsets and offsets != self._checkpointed:
            self._runtime.state_directory.write_checkpoint(GLOBAL_DIR, offsets)
            self._checkpointed = dict(offsets)
            self._collector.dead_lettered_up_to = dict(offsets)

    def _close(self) -> None:
        """Checkpoint (after a clean run only), close the task, the producer (if one was created),
        the consumer, and unlock the global directory; each step runs even if one before failed."""
        task, self._task = self._task, None
        if task is not None:
            try:
                if self.error is None and self._ready.is_set():
                    self._task = task
                    self._checkpoint()
            except Exception:
                log.exception("%s: error checkpointing the global task on close", self.name)
            finally:
                self._task = None
            try:
                task.close()
            except Exception:
                log.exception("%s: error closing the global task", self.name)
        try:
            self._collector.close()
        except Exception:
            log.exception("%s: error closing the global producer", self.name)
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            try:
                consumer.close()
            except Exception:
                log.exception("%s: error closing the global consumer", self.name)
        if self._locked:
            self._runtime.state_directory.unlock(GLOBAL_DIR)
            self._locked = False
