"""State rebuild: throw a store's local state away and restore it from its changelog.

Owner: :meth:`KafkaStreams.rebuild_state` creates a :class:`StateRebuilder` per call; the work on
the tasks runs on each owning StreamThread (``StreamThread.submit``), through
``TaskManager.rebuild_task`` / ``TaskManager.rebuild_report``, which delegate to the thread's
:class:`~.task_rebuilder.TaskRebuilder` (steps 1-4); the changelog is read here, on the caller's
thread, with a consumer of its own.

Protocol, for every local active task owning the store (optionally only the given tasks):

  1. on the owning thread: commit the task and close it cleanly (its input offsets are committed:
     they are reported, so a caller that rewrote the changelog knows what input the state covers);
  2. wipe the task directory (stores and checkpoint; the lock stays with the thread);
  3. create the task again: it registers with the changelog reader with no offset and restores
     every store from the beginning of its changelog;
  4. when the reader reports the task restored, BEFORE its input partitions are assigned (nothing
     processed yet), the thread snapshots the store: records restored, live keys, and the last
     changelog offset the store reflects (:func:`snapshot_restored_store`);
  5. here: read the task's changelog partition to its TRUE end (EOF, docs/decisions/0001-embedded-broker.md:
     never ListOffsets-latest)
     and count the distinct live keys among the records up to the offset the store reflects;
     ``ok`` when that count equals the store's key count.

Records the task writes to its changelog after step 4 (it runs again) are counted apart
(``changelog_records_after``) and never make the comparison wrong.

A rebuild call covers the tasks of ONE instance. To rebuild a whole store, a caller first asks any
instance which instance runs each of the store's tasks (:func:`store_instances`, from the group's
last assignment, as Kafka Streams' ``streamsMetadataForStore``), then asks each owner to rebuild
its own tasks.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.client_supplier import KafkaClientSupplier
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.processor.internals.state_manager import ProcessorStateManager
    from streams_runtime.processor.internals.stream_thread import StreamThread
    from streams_runtime.processor.internals.task import StreamTask
    from streams_runtime.processor.internals.task_manager import TaskManager
    from streams_runtime.state.interfaces import StateStore

T = TypeVar("T")

__all__ = [
    "ChangelogKeyCount",
    "StoreInstances",
    "RebuildTimeoutError",
    "StateRebuilder",
    "TaskRebuildReport",
    "count_changelog_live_keys",
    "count_store_keys",
    "snapshot_restored_store",
    "store_instances",
]

#: seconds between two checks of the owning threads for finished restores
_POLL_S = 0.05


class UnknownStoreError(StreamsError):
    """The topology has no store of that name."""


class TasksNotOwnedError(StreamsError):
    """Tasks asked for are not active on this instance (they moved, or never were here)."""


class RebuildTimeoutError(StreamsError):
    """The owning threads did not close, or the tasks did not restore, within the timeout."""


# ---------------------------------------------------------------------------- who runs which task
@dataclass(frozen=True)
class StoreInstances:
    """Every task of a store and the instances running it, from the group's last assignment.

    ``active``: task id -> the endpoint running it as an active task (a task missing there has no
    active owner now: a hand-off or a rebalance is under way); ``standby``: task id -> endpoints
    keeping a standby replica of it.
    """

    store: str
    tasks: tuple[str, ...]
    active: dict[str, str]
    standby: dict[str, tuple[str, ...]]

    def as_dict(self) -> dict[str, Any]:
        endpoints = sorted(set(self.active.values()) | {e for hosts in self.standby.values() for e in hosts})
        return {
            "store": self.store,
            "tasks": list(self.tasks),
            "unassigned_tasks": [t for t in self.tasks if t not in self.active],
            "instances": [
                {
                    "endpoint": endpoint,
                    "active_tasks": [t for t in self.tasks if self.active.get(t) == endpoint],
                    "standby_tasks": [t for t in self.tasks if endpoint in self.standby.get(t, ())],
                }
                for endpoint in endpoints
            ],
        }


def store_instances(
    store: str, subtopology: int, source_topics: Iterable[str], partitions: int, metadata: Iterable[Any]
) -> StoreInstances:
    """Which instance runs each of the store's ``partitions`` tasks (ids ``<subtopology>_<p>``).

    :param metadata: the instances' StreamsMetadata (``host_info``, ``topic_partitions``,
        ``standby_topic_partitions``: ``(topic, partition)`` of their tasks' source partitions).
    """
    topics = set(source_topics)
    tasks = tuple(str(TaskId(subtopology, p)) for p in range(partitions))
    active: dict[str, str] = {}
    standby: dict[str, list[str]] = {}
    for meta in sorted(metadata, key=lambda m: str(m.host_info)):
        endpoint = str(meta.host_info)
        for p in sorted({p for t, p in meta.topic_partitions if t in topics}):
            active.setdefault(str(TaskId(subtopology, p)), endpoint)
        for p in sorted({p for t, p in meta.standby_topic_partitions if t in topics}):
            standby.setdefault(str(TaskId(subtopology, p)), []).append(endpoint)
    return StoreInstances(store, tasks, active, {t: tuple(hosts) for t, hosts in standby.items()})


# ---------------------------------------------------------------------------- on the stream thread
def count_store_keys(store: StateStore) -> int:
    """Live entries of a store, counted on its innermost (bytes) store: exact, no deserialization.

    Called right after a restore, when the store's record cache holds nothing.
    """
    inner_of = getattr(store, "inner", None)
    inner: Any = inner_of() if callable(inner_of) else store  # the innermost store, of any kind
    scan = getattr(inner, "all", None)
    if not callable(scan):
        return int(inner.approximate_num_entries())
    iterator = scan()
    try:
        return sum(1 for _ in iterator)
    finally:
        close = getattr(iterator, "close", None)
        if callable(close):
            close()


def snapshot_restored_store(
    task: StreamTask, state_manager: ProcessorStateManager, store_name: str, restored: int
) -> dict[str, Any]:
    """Step 4: what the freshly restored ``store_name`` of ``task`` holds, before it processes."""
    store = task.stores[store_name]
    changelog = next(
        (tp for tp, s in state_manager.changelog_partitions().items() if s.name == store_name), None
    )
    offsets = state_manager.checkpointed_offsets()
    return {
        "records_restored": int(restored),
        "store_key_count": count_store_keys(store),
        "changelog": changelog,
        "restored_to_offset": None if changelog is None else offsets.get(changelog),
        "restored_at": time.monotonic(),  # compared with the caller's clock, same process
    }


# ---------------------------------------------------------------------------- reading the changelog
@dataclass(frozen=True)
class ChangelogKeyCount:
    """One changelog partition read to its true end."""

    records: int  # records up to (and including) the offset counted to
    live_keys: int  # distinct keys whose latest record up to that offset is not a tombstone
    end_offset: int  # the true end (offset after the last record)
    records_after: int  # records beyond the offset counted to


def count_changelog_live_keys(
    bootstrap_servers: str,
    topic: str,
    partition: int,
    upto: int | None,
    timeout: float = 60.0,
    client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
) -> ChangelogKeyCount:
    """Step 5: read ``topic[partition]`` from its start to EOF; count live keys at offsets <= ``upto``.

    :param upto: the last offset to count (``None``: nothing counts, every record is "after").
    :raises StreamsError: when the partition does not report its end within ``timeout`` seconds.
    """
    from streams_runtime.kafka.clients import TopicPartition
    from streams_runtime.kafka.offsets import EOF_OVERRIDES, PartitionReadError, read_to_end

    consumer = client_supplier.get_consumer(
        bootstrap_servers,
        f"streams-runtime-rebuild-check-{time.monotonic_ns()}",
        {**EOF_OVERRIDES, "auto.offset.reset": "earliest"},
        low_latency=True,
    )
    last = -1 if upto is None else upto
    latest_live: dict[bytes | None, bool] = {}
    counts = {"records": 0, "after": 0}

    def count(message: Any) -> None:
        if message.offset() <= last:
            counts["records"] += 1
            latest_live[message.key()] = message.value() is not None
        else:
            counts["after"] += 1

    try:
        low, _ = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
        ends = read_to_end(consumer, {(topic, partition): max(0, low)}, count, timeout)
    except PartitionReadError as exc:
        raise StreamsError(f"reading changelog {topic}-{partition} to its end failed: {exc}") from exc
    finally:
        consumer.close()
    records, after, end = counts["records"], counts["after"], ends[(topic, partition)]
    return ChangelogKeyCount(records, sum(latest_live.values()), end, after)


# ---------------------------------------------------------------------------- the client side
@dataclass
class TaskRebuildReport:
    """What the rebuild did to one task, and whether the restored store matches its changelog."""

    task_id: str
    thread: str
    store: str
    changelog_topic: str | None
    changelog_partition: int | None
    records_restored: int
    store_key_count: int
    changelog_live_keys: int
    changelog_records: int
    changelog_end_offset: int | None
    changelog_records_after: int
    restored_to_offset: int | None
    input_offsets: dict[str, int] = field(default_factory=dict)
    restore_seconds: float = 0.0
    ok: bool = False
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class StateRebuilder:
    """Runs the protocol of the module docstring for one ``rebuild_state`` call.

    :param threads: the client's live StreamThreads.
    :param subtopologies: sub-topology id -> SubtopologyInfo (which stores each one has).
    :param bootstrap_servers: the cluster of the changelogs.
    :param client_supplier: makes the consumer that counts a changelog's keys.
    """

    def __init__(
        self,
        threads: Iterable[Any],
        subtopologies: dict[int, Any],
        bootstrap_servers: str,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
    ) -> None:
        self._client_supplier = client_supplier
        self._threads = list(threads)
        self._subtopologies = subtopologies
        self._bootstrap = bootstrap_servers

    def owners(self, store_name: str, tasks: Iterable[str | TaskId] | None) -> dict[Any, list[TaskId]]:
        """thread -> the active tasks it runs that own ``store_name`` (filtered by ``tasks``)."""
        having = {i.id for i in self._subtopologies.values() if store_name in i.stores}
        if not having:
            known = sorted({s for i in self._subtopologies.values() for s in i.stores})
            raise UnknownStoreError(f"the topology has no store named {store_name!r}; its stores: {known}")
        wanted = (
            None if tasks is None else {t if isinstance(t, TaskId) else TaskId.parse(str(t)) for t in tasks}
        )
        found: dict[Any, list[TaskId]] = {}
        for thread in self._threads:
            mine = sorted(
                t for t in thread.active_tasks if t.subtopology in having and (wanted is None or t in wanted)
            )
            if mine:
                found[thread] = mine
        if wanted is not None:
            owned = {t for ids in found.values() for t in ids}
            missing = sorted(wanted - owned)
            if missing:
                here = sorted(str(t) for th in self._threads for t in th.active_tasks)
                raise TasksNotOwnedError(
                    f"tasks {[str(t) for t in missing]} owning store {store_name!r} are not active on this "
                    f"instance (active here: {here})"
                )
        return found

    def rebuild(
        self, store_name: str, tasks: Iterable[str | TaskId] | None = None, timeout: float = 120.0
    ) -> list[dict[str, Any]]:
        """Steps 1-5 of the module docstring; one report dict per rebuilt task (sorted by task)."""
        if threading.current_thread() in self._threads:  # it would wait for itself
            raise StreamsError(
                "rebuild_state() cannot be called from a stream thread (a processor or a listener)"
            )
        deadline = time.monotonic() + timeout
        owners = self.owners(store_name, tasks)
        started = time.monotonic()
        # Steps 1-3, on every owning thread at once
        closing = {
            thread: thread.submit(_rebuild_call(thread, ids, store_name)) for thread, ids in owners.items()
        }
        input_offsets: dict[TaskId, dict[str, int]] = {}
        for thread, future in closing.items():
            input_offsets.update(_wait(future, deadline, f"{thread.name} to close and wipe {owners[thread]}"))
        # Step 4: wait for the snapshots
        snapshots: dict[TaskId, tuple[Any, dict[str, Any]]] = {}
        pending = {thread: set(ids) for thread, ids in owners.items()}
        while any(pending.values()):
            for thread, ids in pending.items():
                if not ids:
                    continue
                got = _wait(
                    thread.submit(_report_call(thread, sorted(ids))), deadline, f"{thread.name} to answer"
                )
                for task_id, snapshot in got.items():
                    snapshots[task_id] = (thread, snapshot)
                    ids.discard(task_id)
            if any(pending.values()):
                if time.monotonic() > deadline:
                    late = sorted(str(t) for ids in pending.values() for t in ids)
                    raise RebuildTimeoutError(
                        f"tasks {late} did not finish restoring store {store_name!r} within {timeout:.0f}s"
                    )
                time.sleep(_POLL_S)

        # Step 5: one changelog read per task, in parallel (each with its own consumer)
        def report(task_id: TaskId) -> TaskRebuildReport:
            thread, snap = snapshots[task_id]
            return self._report(
                task_id,
                thread.name,
                store_name,
                snap,
                input_offsets.get(task_id, {}),
                snap["restored_at"] - started,
                max(1.0, deadline - time.monotonic()),
            )

        with concurrent.futures.ThreadPoolExecutor(min(8, max(1, len(snapshots))), "rebuild-verify") as pool:
            reports = list(pool.map(report, sorted(snapshots)))
        return [r.as_dict() for r in reports]

    def _report(
        self,
        task_id: TaskId,
        thread: str,
        store: str,
        snap: dict[str, Any],
        inputs: dict[str, int],
        seconds: float,
        timeout: float,
    ) -> TaskRebuildReport:
        changelog = snap["changelog"]
        report = TaskRebuildReport(
            task_id=str(task_id),
            thread=thread,
            store=store,
            changelog_topic=None if changelog is None else changelog[0],
            changelog_partition=None if changelog is None else changelog[1],
            records_restored=snap["records_restored"],
            store_key_count=snap["store_key_count"],
            changelog_live_keys=0,
            changelog_records=0,
            changelog_end_offset=None,
            changelog_records_after=0,
            restored_to_offset=snap["restored_to_offset"],
            input_offsets=inputs,
            restore_seconds=round(seconds, 3),
        )
        if changelog is None:
            report.problem = (
                f"store {store!r} has no changelog (logging disabled): nothing to restore it from"
            )
            return report
        counted = count_changelog_live_keys(
            self._bootstrap,
            changelog[0],
            changelog[1],
            snap["restored_to_offset"],
            timeout,
            self._client_supplier,
        )
        report.changelog_live_keys = counted.live_keys
        report.changelog_records = counted.records
        report.changelog_end_offset = counted.end_offset
        report.changelog_records_after = counted.records_after
        report.ok = counted.live_keys == report.store_key_count
        if not report.ok:
            report.problem = (
                f"the restored store holds {report.store_key_count} keys but changelog "
                f"{changelog[0]}-{changelog[1]} has {counted.live_keys} live keys up to offset "
                f"{snap['restored_to_offset']}"
            )
        return report


def _wait(future: concurrent.futures.Future[T], deadline: float, what: str) -> T:
    """The future's result by ``deadline`` (monotonic), else :class:`RebuildTimeoutError`."""
    try:
        return future.result(timeout=max(0.1, deadline - time.monotonic()))
    except concurrent.futures.TimeoutError as exc:
        future.cancel()  # not started yet: it never will; running: it finishes on its thread
        raise RebuildTimeoutError(f"timed out waiting for {what}") from exc


def _task_manager(thread: StreamThread) -> TaskManager:
    manager = thread.task_manager
    if manager is None:
        raise StreamsError(f"stream thread {thread.name} has not set up its tasks yet")
    return manager


def _rebuild_call(
    thread: StreamThread, task_ids: list[TaskId], store_name: str
) -> Callable[[], dict[TaskId, dict[str, int]]]:
    def call() -> dict[TaskId, dict[str, int]]:
        manager = _task_manager(thread)
        return {task_id: manager.rebuild_task(task_id, store_name) for task_id in task_ids}

    return call


def _report_call(thread: StreamThread, task_ids: list[TaskId]) -> Callable[[], dict[TaskId, dict[str, Any]]]:
    def call() -> dict[TaskId, dict[str, Any]]:
        manager = _task_manager(thread)
        found = {}
        for task_id in task_ids:
            snapshot = manager.rebuild_report(task_id)
            if snapshot is not None:
                found[task_id] = snapshot
        return found

    return call
