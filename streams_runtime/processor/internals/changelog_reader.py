"""StoreChangelogReader: restores the stores of a thread's tasks from their changelog topics.

Owner: one StreamThread; it owns the restore consumer (created on first need through
:meth:`~streams_runtime.kafka.client_supplier.KafkaClientSupplier.get_restore_consumer`: manual
assign, never commits) and
borrows each task's ProcessorStateManager from ``register`` until ``unregister``. Called only
from the thread's loop, so it needs no locks; ``restore`` is step-wise (one poll per call) so a
thread can process its ready tasks between steps.

Each changelog partition moves ``PROBING -> RESTORING -> COMPLETED`` (or straight from
PROBING to COMPLETED when its store is current); a task is done when all of its are.

Restore protocol, one step per :meth:`restore` call:

1. Ends: list each newly registered changelog's offsets (log start, "latest"), with the restore
   consumer's isolation level (read_committed under exactly-once: "latest" is the last stable
   offset). On Apache Kafka (any broker that is not Tansu, :mod:`streams_runtime.kafka.broker_identity`)
   "latest" is the end, as in Kafka Streams. On the embedded Tansu it is not
   (docs/decisions/0001-embedded-broker.md: the last batch's base offset + 1): the changelog is
   assigned at ``latest - 1`` and the EOF event after the first fetch carries the TRUE end (the
   fetch's high watermark); "latest" only places that probe at or before the true end. Explicit
   offsets, not ``OFFSET_END``/``OFFSET_BEGINNING``: librdkafka resolves those with a delay.
2. Poll one batch from the restore consumer.
3. Apply the batch: records of RESTORING changelogs go, converted into store format, into the
   store's restore callback together with the batch's last offset (RocksDB writes data and
   offset in one WriteBatch); the state manager and the listener hear of each batch.
4. Start tasks whose probes are all back: when a changelog ends below the local checkpoint (a
   fresh broker behind old local state, docs/decisions/0001-embedded-broker.md) or its checkpoint fell below
   the log start, log a WARNING, wipe the task's state and restore it from the beginning; otherwise seek each
   changelog to ``checkpoint + 1`` (or the beginning). Changelogs already at their end are
   COMPLETED without reading a record: a task whose state is current restores nothing.
5. Complete changelogs that reached their end (last record or EOF), unassign them; tasks whose
   changelogs are all COMPLETED get their checkpoint written and are returned. An EOF below the
   end found in step 1 is not the end (a new leader's high watermark catching up after a
   failover): the restore reads on.

Exactly-once (``skip_aborted=True``) on the embedded Tansu: the restore consumer reads committed
records only, but a broker that sends no aborted-transaction list (Tansu) hands it the records of
aborted transactions too, for example the changelog writes of a fenced zombie. Applied, they
would put increments into the state that the committed input offsets do not cover, and the input
would be counted again. So every batch, active restore and standby replay alike, first goes
through an :class:`~streams_runtime.brokers.tansu.transaction_markers.AbortedFilter`, which reads the
COMMIT/ABORT markers of the changelog partition from the log and drops the records of aborted
transactions; the batch's last offset still moves the store's offset (the dropped records are
skipped, not lost). On Apache Kafka the consumer leaves them out itself: no filter is made.

Exactly-once on Tansu, step 1: the end is taken only where the changelog is stable (its
read_committed end is its high watermark): a pending transaction of the previous owner is waited
for, so its input offsets are committed before the task reads them (see
:meth:`StoreChangelogReader._stable`). Apache Kafka completes or aborts that transaction when the
new owner's producer initializes; the last stable offset is the end there.

Records beyond the end probed in step 1 (only possible if someone else writes the changelog
meanwhile) are applied too: newer changelog data never makes a store wrong.

Standby tasks (``register(..., standby=True)``) go through the same probe and start (step 4,
fresh-broker check included), but their changelogs never complete: they stay assigned in
RESTORING and every step applies what their active task wrote since (the restore listener is not
told; :meth:`StoreChangelogReader.standby_lags` reports how far behind they are). Priority: while
any active task's changelog is not COMPLETED, the standby changelogs are paused, so active
restoration gets the whole restore consumer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.brokers.tansu import MarkerScanError
from streams_runtime.errors import ProcessorStateError
from streams_runtime.kafka import clients
from streams_runtime.kafka.broker_identity import BrokerIdentity, identify_broker
from streams_runtime.kafka.client_supplier import ConsumerClient, KafkaClientSupplier
from streams_runtime.kafka.offsets import (
    LIST_OFFSETS_RETRY_S,
    is_partition_eof,
    is_retriable_listing_error,
    probe_offset,
)
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.restore_listener import StateRestoreListener

if TYPE_CHECKING:
    from streams_runtime.processor.internals.state_manager import ProcessorStateManager

__all__ = ["StateRestoreListener", "StoreChangelogReader"]

log = logging.getLogger("streams_runtime.state")

PROBING, RESTORING, COMPLETED = "PROBING", "RESTORING", "COMPLETED"
DEFAULT_MAX_BATCH_RECORDS = 10_000
LIST_OFFSETS_TIMEOUT_S = 10.0
#: exactly-once: how long a probe waits for a pending transaction on a changelog (``_stable``)
STABLE_END_WAIT_S = 30.0
#: an active task's restoration that applied nothing and reached no end for this long is logged
#: (WARNING, with each changelog's state, position and end), and again as often while it lasts
RESTORE_STALL_WARN_S = 30.0
#: how often a changelog whose offsets cannot be listed has its topic's metadata asked for again
METADATA_REFRESH_S = 1.0

ChangelogPartition = tuple[str, int]


@dataclass
class _Changelog:
    tp: ChangelogPartition
    meta: Any
    state: str = PROBING
    end: int | None = None
    low: int = 0
    start: int = 0
    restored: int = 0
    #: when listing its offsets first failed with a cluster error (None: not failing)
    listing_since: float | None = None
    #: the last listing's error while it fails
    listing_error: str = ""
    #: when the topic's metadata was last asked for after a failed listing
    metadata_asked_at: float = 0.0
    #: exactly-once: an end seen while a transaction on the changelog was still pending, and when
    unstable_end: int | None = None
    unstable_since: float = 0.0


@dataclass
class _TaskRestore:
    manager: Any
    changelogs: dict[ChangelogPartition, _Changelog]
    started: bool = False
    done: bool = False
    began_at: float = field(default_factory=time.monotonic)
    standby: bool = False
    #: the last time a record was applied or a changelog completed (or the task registered)
    progress_at: float = field(default_factory=time.monotonic)

    @property
    def restored(self) -> int:
        return sum(c.restored for c in self.changelogs.values())


class RestoreConsumerOwner:
    """Owns a restore consumer made at its first use (through the client supplier) and kept."""

    def __init__(
        self,
        bootstrap_servers: str,
        consumer_overrides: Mapping[str, Any] | None,
        client_supplier: KafkaClientSupplier,
        broker: BrokerIdentity | None,
    ) -> None:
        self._bootstrap_servers = bootstrap_servers
        self._overrides = dict(consumer_overrides or {})
        self._client_supplier = client_supplier
        #: what the broker is; asked through the restore consumer at the first use when None
        self._broker = broker
        self._consumer: ConsumerClient = None  # made at the first use

    def _restore_consumer(self) -> ConsumerClient:
        if self._consumer is None:
            self._consumer = self._client_supplier.get_restore_consumer(
                self._bootstrap_servers, self._overrides
            )
        return self._consumer


class StoreChangelogReader(RestoreConsumerOwner):
    """Restores registered tasks step by step; see the module docstring.

    :param bootstrap_servers: the cluster of the changelog topics.
    :param consumer_overrides: librdkafka settings for the restore consumer.
    :param restore_listener: receives start/batch/end of every changelog restored.
    :param max_batch_records: records polled per step (and at most per store batch).
    :param client_supplier: makes the restore consumer (the real one by default).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        consumer_overrides: dict[str, Any] | None = None,
        restore_listener: StateRestoreListener | None = None,
        max_batch_records: int = DEFAULT_MAX_BATCH_RECORDS,
        skip_aborted: bool = False,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
        broker: BrokerIdentity | None = None,
    ) -> None:
        super().__init__(bootstrap_servers, consumer_overrides, client_supplier, broker)
        self._skip_aborted = skip_aborted
        #: exactly-once on Tansu: drops the records of aborted transactions (see the module docstring)
        self._aborted: Any = None
        self._listener = restore_listener or StateRestoreListener()
        self._max_batch = max_batch_records
        self._tasks: dict[Any, _TaskRestore] = {}
        self._by_tp: dict[ChangelogPartition, tuple[Any, _Changelog]] = {}
        self._to_probe: list[_Changelog] = []
        self._assigned: set[ChangelogPartition] = set()
        self._paused: set[ChangelogPartition] = set()  # standby changelogs, while actives restore
        #: records the last step applied to standby stores (the thread polls its input without
        #: waiting while standbys are catching up)
        self.standby_records_last_step = 0

    def set_restore_listener(self, listener: StateRestoreListener | None) -> None:
        self._listener = listener or StateRestoreListener()

    # ------------------------------------------------------------------ registration
    def register(self, state_manager: ProcessorStateManager, *, standby: bool = False) -> None:
        """Start restoring the task of ``state_manager`` (after its stores initialized); a
        ``standby`` task keeps replaying its changelogs until it is unregistered."""
        task_id = state_manager.task_id
        if task_id in self._tasks:
            raise ProcessorStateError(f"task {task_id} is already registered for restoration")
        changelogs = {tp: _Changelog(tp, meta) for tp, meta in state_manager.changelog_metadata().items()}
        for tp in changelogs:
            if tp in self._by_tp:
                raise ProcessorStateError(f"changelog {tp[0]}-{tp[1]} is already restored for another task")
        self._tasks[task_id] = _TaskRestore(state_manager, changelogs, standby=standby)
        for tp, changelog in changelogs.items():
            self._by_tp[tp] = (task_id, changelog)
            self._to_probe.append(changelog)

    def unregister(self, task_id: object) -> None:
        """Stop restoring ``task_id`` (task closed or revoked); idempotent."""
        entry = self._tasks.pop(task_id, None)
        if entry is None:
            return
        for tp in entry.changelogs:
            self._by_tp.pop(tp, None)
            if self._aborted is not None:
                self._aborted.reset(tp)
        self._to_probe = [c for c in self._to_probe if c.tp not in entry.changelogs]
        self._unassign([tp for tp in entry.changelogs if tp in self._assigned])
        self._paused.difference_update(entry.changelogs)

    def is_restoring(self, task_id: object) -> bool:
        entry = self._tasks.get(task_id)
        return entry is not None and not entry.done

    def restored_count(self, task_id: object) -> int:
        """Records restored for ``task_id`` since it was registered."""
        entry = self._tasks.get(task_id)
        return 0 if entry is None else entry.restored

    def close(self) -> None:
        """Close the restore consumer; registered tasks are forgotten."""
        self._tasks.clear()
        self._by_tp.clear()
        self._to_probe.clear()
        self._assigned.clear()
        self._paused.clear()
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()
        if self._aborted is not None:
            self._aborted.close()

    # ------------------------------------------------------------------ the protocol
    def restore(self, timeout_s: float = 0.0) -> set[Any]:
        """Run one restore step, blocking at most about ``timeout_s`` in the poll.

        :returns: the ids of the tasks that finished restoring in this call (each reported once;
            a task with nothing to restore is reported by the first call after ``register``).
        """
        # Step 1
        if self._to_probe:
            probes, self._to_probe = self._to_probe, []
            listed = [(c, self._listed_offsets(c)) for c in probes]
            self._to_probe = [c for c, latest in listed if latest is None]  # the cluster failing: again
            if self._lists_true_ends():
                for c, latest in listed:
                    if latest is not None:
                        c.end = latest
            else:
                self._assign(
                    [(c.tp, probe_offset(c.low, latest)) for c, latest in listed if latest is not None]
                )
        eofs: dict[ChangelogPartition, int] = {}
        self.standby_records_last_step = 0
        # Step 2
        if any(c.state != COMPLETED for _, c in self._by_tp.values()):
            self._prioritize_active()
            messages = self._consumer.consume(self._max_batch, timeout_s)
            # Step 3
            self._apply(messages, eofs)
        for tp, offset in eofs.items():
            self._on_eof(tp, offset)
        for _, c in self._by_tp.values():  # exactly-once: pending ends past their wait (_stable)
            pending = c.unstable_end
            if pending is not None and c.end is None and self._stable_wait_over(c):
                c.end = pending
        # Step 4
        for task_id, entry in self._tasks.items():
            if not entry.started and all(c.end is not None for c in entry.changelogs.values()):
                self._start(task_id, entry)
        # Step 5
        finished = set()
        for task_id, entry in self._tasks.items():
            if (
                not entry.done
                and not entry.standby
                and entry.started
                and all(c.state == COMPLETED for c in entry.changelogs.values())
            ):
                entry.done = True
                entry.manager.checkpoint()
                finished.add(task_id)
                log.info(
                    "task %s: restoration complete, %d records restored in %.2fs",
                    task_id,
                    entry.restored,
                    time.monotonic() - entry.began_at,
                )
        self._warn_stalled()
        return finished

    def _warn_stalled(self) -> None:
        """Log an active task whose restoration made no progress for :data:`RESTORE_STALL_WARN_S`."""
        now = time.monotonic()
        for task_id, entry in self._tasks.items():
            if entry.standby or entry.done or now - entry.progress_at < RESTORE_STALL_WARN_S:
                continue
            log.warning(
                "task %s: restoration made no progress for %.0fs (%d records restored): %s",
                task_id,
                now - entry.progress_at,
                entry.restored,
                "; ".join(self._describe(c) for c in entry.changelogs.values()),
            )
            entry.progress_at = now  # warned: again after as long

    def _describe(self, c: _Changelog) -> str:
        where = f"{c.tp[0]}-{c.tp[1]} {c.state}"
        if c.state == PROBING:
            failing = f", listing failing: {c.listing_error}" if c.listing_since else ""
            return f"{where} (end not known yet{failing})"
        position: Any = "unassigned"
        if self._consumer is not None and c.tp in self._assigned:
            try:
                position = self._consumer.position([clients.TopicPartition(*c.tp)])[0].offset
            except clients.KafkaException as exc:
                position = f"unknown ({exc})"
        paused = ", paused" if c.tp in self._paused else ""
        return f"{where} from offset {c.start} to {c.end}, position {position}{paused}"

    def _apply(self, messages: list[Any], eofs: dict[ChangelogPartition, int]) -> None:
        """Step 3: split off the events, group the records per changelog, restore each group."""
        data = [m for m in messages if m.error() is None]
        if len(data) != len(messages):
            for message in messages:
                if message.error() is not None:
                    self._on_error(message, eofs)
        if not data:
            return
        if len(self._assigned) == 1:  # the common case: no grouping needed
            (tp,) = self._assigned
            first, last = data[0], data[-1]
            batches = (
                {tp: data}
                if (first.topic(), first.partition()) == tp == (last.topic(), last.partition())
                else _group(data)
            )
        else:
            batches = _group(data)
        for tp, batch in batches.items():
            found = self._by_tp.get(tp)
            if found is not None and found[1].state == RESTORING:
                self._restore_batch(found[1], batch)

    def _restore_batch(self, changelog: _Changelog, batch: list[Any]) -> None:
        meta = changelog.meta
        if batch[0].offset() < changelog.start:  # left over from before the seek: drop
            batch = [m for m in batch if m.offset() >= changelog.start]
            if not batch:
                return
        last = batch[-1].offset()
        if self._aborted is not None:
            try:
                batch = self._aborted.committed(changelog.tp, batch)
            except MarkerScanError as exc:
                where = f"{changelog.tp[0]}-{changelog.tp[1]}"
                raise ProcessorStateError(
                    f"cannot read the transaction markers of changelog {where}: {exc}"
                ) from exc
        if meta.timestamped:
            convert = meta.converter
            records = [convert(m.key(), m.value(), m.timestamp()[1]) for m in batch]
        else:
            records = [(m.key(), m.value()) for m in batch]
        meta.restore_callback(records, last)
        entry = self._tasks[self._by_tp[changelog.tp][0]]
        entry.progress_at = time.monotonic()
        entry.manager.restored(changelog.tp, last)
        changelog.restored += len(records)
        if entry.standby:  # never completes; the listener hears of active restoration only
            self.standby_records_last_step += len(records)
            changelog.end = max(changelog.end, last + 1)
            return
        self._listener.on_batch_restored(changelog.tp, meta.name, last, len(records))
        if last + 1 >= changelog.end:
            changelog.end = max(changelog.end, last + 1)
            self._complete([changelog])

    def _on_error(self, message: Any, eofs: dict[ChangelogPartition, int]) -> None:
        error = message.error()
        if is_partition_eof(error):
            eofs[(message.topic(), message.partition())] = message.offset()
            return
        where = f"{message.topic()}-{message.partition()}" if message.topic() else "the restore consumer"
        if error.fatal() or message.topic() is not None:
            raise ProcessorStateError(f"restoring from {where} failed: {error}")
        log.warning("restore consumer: %s", error)

    def _on_eof(self, tp: ChangelogPartition, offset: int) -> None:
        found = self._by_tp.get(tp)
        if found is None:
            return
        changelog = found[1]
        if changelog.state == PROBING and changelog.end is None:
            if self._aborted is None or self._stable(changelog, offset):
                changelog.end = offset
        elif changelog.state == RESTORING and self._tasks[found[0]].standby:
            changelog.end = max(changelog.end or 0, offset)
        elif changelog.state == RESTORING:
            if changelog.end is not None and offset < changelog.end:
                # the end of a leader that just took over, whose high watermark (or last stable
                # offset) has not caught up yet: the end listed before is the end, as in Kafka
                # Streams (completing here restored a state behind the committed outputs)
                return
            changelog.end = offset
            self._complete([changelog])

    def _stable(self, changelog: _Changelog, offset: int) -> bool:
        """Exactly-once, step 1: a read_committed end (the last stable offset) is the end only
        when no transaction on the changelog is pending, i.e. it is the high watermark too. On
        Apache Kafka it always is once the task's producer ran ``init_transactions`` (the task's
        producer is the changelog's only writer, and the coordinator completes or aborts the
        previous owner's transaction first). The embedded broker answers EndTxn before it
        completes the transaction (see ``CONFIRM_NUDGE_S`` in the transactional record collector): until it
        does, the previous owner's last input offsets are not committed, and state restored to
        the stable offset plus input read from the committed offsets would still be consistent,
        but the output the pending transaction already wrote with its COMMIT marker would be
        written again. So the probe waits (the changelog stays PROBING and the next end-of-
        partition event is checked again) for up to :data:`STABLE_END_WAIT_S`."""
        tp = clients.TopicPartition(*changelog.tp)
        try:
            _, high = self._consumer.get_watermark_offsets(tp, cached=True)
        except clients.KafkaException:
            high = offset
        if offset >= high:
            changelog.unstable_end = None
            return True
        if changelog.unstable_end is None:
            changelog.unstable_since = time.monotonic()
            log.info(
                "changelog %s-%d: stable up to offset %d of %d (a transaction is still pending); "
                "waiting for it before taking the end",
                changelog.tp[0],
                changelog.tp[1],
                offset,
                high,
            )
        changelog.unstable_end = offset
        return self._stable_wait_over(changelog)

    def _stable_wait_over(self, changelog: _Changelog) -> bool:
        if time.monotonic() - changelog.unstable_since < STABLE_END_WAIT_S:
            return False
        log.warning(
            "changelog %s-%d: a transaction is still pending after %.0fs; taking the stable offset "
            "%d as the end (the previous owner's last output may be written twice)",
            changelog.tp[0],
            changelog.tp[1],
            STABLE_END_WAIT_S,
            changelog.unstable_end,
        )
        changelog.unstable_end = None
        return True

    def _start(self, task_id: object, entry: _TaskRestore) -> None:
        """Step 4 for one task: fresh-broker check, then seek or complete each changelog."""
        entry.started = True
        changelogs = list(entry.changelogs.values())
        stale = [
            c for c in changelogs if c.meta.offset is not None and not c.low <= c.meta.offset + 1 <= c.end
        ]
        if stale:
            for c in stale:
                log.warning(
                    "task %s: %s; wiping the task's local state and restoring it from the beginning",
                    task_id,
                    _stale_reason(c),
                )
            entry.manager.wipe_state()
            metadata = entry.manager.changelog_metadata()
            for c in changelogs:
                c.meta = metadata[c.tp]
        seeks, done = [], []
        for c in changelogs:
            c.start = c.low if c.meta.offset is None else c.meta.offset + 1
            if entry.standby:  # keeps reading whatever its active task writes next
                c.state = RESTORING
                seeks.append((c.tp, c.start))
                continue
            end = c.end if c.end is not None else c.start  # probed (step 3) before this step
            if c.start >= end:
                done.append(c)
                continue
            c.state = RESTORING
            seeks.append((c.tp, c.start))
            self._listener.on_restore_start(c.tp, c.meta.name, c.start, end)
        self._unassign([tp for tp, _ in seeks])
        self._assign(seeks)
        self._complete(done)

    def _complete(self, changelogs: list[_Changelog]) -> None:
        """Step 5 for changelogs at their end."""
        unassign = []
        for c in changelogs:
            found = self._by_tp.get(c.tp)
            if found is not None:
                self._tasks[found[0]].progress_at = time.monotonic()
            if c.state == RESTORING:
                self._listener.on_restore_end(c.tp, c.meta.name, c.restored)
                unassign.append(c.tp)
            elif c.state == PROBING:
                unassign.append(c.tp)
            c.state = COMPLETED
        self._unassign(unassign)

    # ------------------------------------------------------------------ standbys and progress
    def _prioritize_active(self) -> None:
        """Pause the standby changelogs while an active task's changelog is not complete."""
        active_busy = any(not entry.standby and not entry.done for entry in self._tasks.values())
        wanted = (
            {
                tp
                for entry in self._tasks.values()
                if entry.standby
                for tp, c in entry.changelogs.items()
                if c.state == RESTORING and tp in self._assigned
            }
            if active_busy
            else set()
        )
        pause, resume = wanted - self._paused, self._paused - wanted
        if pause:
            self._consumer.pause([clients.TopicPartition(t, p) for t, p in sorted(pause)])
        resume &= self._assigned
        if resume:
            self._consumer.resume([clients.TopicPartition(t, p) for t, p in sorted(resume)])
        self._paused = wanted

    def is_standby(self, task_id: object) -> bool:
        entry = self._tasks.get(task_id)
        return entry is not None and entry.standby

    def standby_lags(self) -> dict[Any, dict[ChangelogPartition, int]]:
        """Per standby task, per changelog partition: records its stores are behind the end
        (the highest of the probed end, the last record seen and the last fetch's high
        watermark). Call on the stream thread or under its query lock (the consumer is not
        thread-safe)."""
        lags: dict[Any, dict[ChangelogPartition, int]] = {}
        for task_id, entry in self._tasks.items():
            if not entry.standby:
                continue
            mine = lags[task_id] = {}
            for tp, c in entry.changelogs.items():
                end = c.end or 0
                if self._consumer is not None and tp in self._assigned:
                    try:
                        _, high = self._consumer.get_watermark_offsets(
                            clients.TopicPartition(*tp), cached=True
                        )
                        end = max(end, high)
                    except clients.KafkaException:
                        pass
                position = c.low if c.meta.offset is None else c.meta.offset + 1
                mine[tp] = max(0, end - position)
        return lags

    def restore_progress(self) -> dict[Any, tuple[int, int | None]]:
        """Per registered active task: ``(records restored, records to restore in total)``;
        the total is ``None`` until every changelog of the task was probed."""
        progress: dict[Any, tuple[int, int | None]] = {}
        for task_id, entry in self._tasks.items():
            if entry.standby:
                continue
            total: int | None = None
            if entry.started:
                total = sum(
                    max(c.end - c.start, c.restored) for c in entry.changelogs.values() if c.end is not None
                )
            progress[task_id] = (entry.restored, total)
        return progress

    # ------------------------------------------------------------------ consumer plumbing
    def _lists_true_ends(self) -> bool:
        """Whether ListOffsets answers the true end (every broker but Tansu); on the first call
        also makes the aborted-record filter where one is needed (exactly-once on Tansu)."""
        if self._broker is None:
            self._broker = identify_broker(self._restore_consumer(), LIST_OFFSETS_TIMEOUT_S)
        if self._aborted is None and self._broker.is_tansu and self._skip_aborted:
            self._aborted = self._client_supplier.get_aborted_filter(self._bootstrap_servers)
        return not self._broker.is_tansu

    def _listed_offsets(self, changelog: _Changelog) -> int | None:
        """Step 1 for one changelog: record its log start; return ListOffsets "latest", or None
        while the cluster cannot answer (a lost leader, a timeout: tried again next step, for up
        to :data:`LIST_OFFSETS_RETRY_S`; Kafka Streams retries such timeouts the same way)."""
        tp = clients.TopicPartition(*changelog.tp)
        where = f"{changelog.tp[0]}-{changelog.tp[1]}"
        try:
            low, latest = self._restore_consumer().get_watermark_offsets(tp, timeout=LIST_OFFSETS_TIMEOUT_S)
        except clients.KafkaException as exc:
            transient = is_retriable_listing_error(exc)
            now = time.monotonic()
            if transient and now - (changelog.listing_since or now) < LIST_OFFSETS_RETRY_S:
                changelog.listing_since = changelog.listing_since or now
                changelog.listing_error = str(exc)
                log.info("changelog %s: cannot list its offsets yet (%s); trying again", where, exc)
                if now - changelog.metadata_asked_at >= METADATA_REFRESH_S:
                    changelog.metadata_asked_at = now
                    self._refresh_metadata(changelog.tp[0])
                return None
            raise ProcessorStateError(f"cannot list the offsets of changelog {where}: {exc}") from exc
        changelog.listing_since = None
        changelog.low = max(0, int(low))
        return max(changelog.low, int(latest))

    def _refresh_metadata(self, topic: str) -> None:
        """Ask the cluster about ``topic`` now: librdkafka answers a listing from the metadata it
        holds, and a broker restarted moments before can have told it the topic or its partition
        does not exist, which it then believed for minutes (every instance's restore stood
        "unknown partition" for 2 minutes after a node of a 3-node cluster was killed)."""
        try:
            self._restore_consumer().list_topics(topic, timeout=LIST_OFFSETS_TIMEOUT_S)
        except clients.KafkaException as exc:
            log.info("changelog topic %s: its metadata cannot be read yet (%s)", topic, exc)

    def _assign(self, positions: list[tuple[ChangelogPartition, int]]) -> None:
        if not positions:
            return
        self._restore_consumer().incremental_assign(
            [clients.TopicPartition(t, p, o) for (t, p), o in positions]
        )
        self._assigned.update(tp for tp, _ in positions)

    def _unassign(self, tps: list[ChangelogPartition]) -> None:
        tps = [tp for tp in tps if tp in self._assigned]  # a ListOffsets start assigned none yet
        if tps and self._consumer is not None:
            self._consumer.incremental_unassign([clients.TopicPartition(t, p) for t, p in tps])
            self._assigned.difference_update(tps)
            self._paused.difference_update(tps)


def _stale_reason(c: _Changelog) -> str:
    where = f"changelog {c.tp[0]}-{c.tp[1]}"
    if c.meta.offset + 1 > c.end:
        return (
            f"fresh broker? {where} ends at offset {c.end} but the local state of store {c.meta.name} "
            f"is at offset {c.meta.offset}: the broker lost data the local state still has (a restarted "
            f"in-memory broker or a re-created topic)"
        )
    return (
        f"{where} starts at offset {c.low}, after the local state of store {c.meta.name} (offset "
        f"{c.meta.offset}): the records in between were deleted"
    )


def _group(messages: list[Any]) -> dict[ChangelogPartition, list[Any]]:
    """Records per changelog partition, in order (runs of one partition are the norm)."""
    batches: dict[ChangelogPartition, list[Any]] = {}
    run_tp: Any = None
    run: list[Any] = []
    for message in messages:
        tp = (message.topic(), message.partition())
        if tp != run_tp:
            run_tp = tp
            run = batches.setdefault(tp, [])
        run.append(message)
    return batches
