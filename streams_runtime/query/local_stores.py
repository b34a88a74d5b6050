"""LocalStores: finds the local replica of a store partition and reads it under its thread's lock.

Created by a KafkaStreams client for its interactive queries; reads the client's threads and its
RuntimeSetup, never changes them. Every read runs inside the owning StreamThread's ``query_lock``
(the loop holds it while it processes, restores, commits and closes tasks), on the outermost store
of the task, so it reads through the record cache (read-your-writes) and never sees a store that
is being closed. Results are materialized (lists) before the lock is released: no store iterator
escapes it.

Where a key lives: its partition is Kafka's default partitioner over the key serialized with the
store's key serde (the serializer given by the caller wins), modulo the partition count of the
sub-topology's source topics; the task is ``<sub-topology>_<partition>``. A task that is assigned
here but restoring (or waiting for its state directory) raises :class:`StateStoreMigratedError`;
a partition whose task is not here raises :class:`InvalidStateStorePartitionError`: never a wrong
or empty answer. With ``allow_stale`` a standby replica of the task answers too (H2's
``StreamThread.standby_tasks`` and ``TaskManager.standby_stores``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from streams_runtime.errors import (
    InvalidStateStoreError,
    InvalidStateStorePartitionError,
    StateStoreMigratedError,
    StreamsNotStartedError,
    UnknownStateStoreError,
)
from streams_runtime.kafka.partitioner import partition_for
from streams_runtime.processor.task_id import TaskId
from streams_runtime.serdes import serialize_or_raise

if TYPE_CHECKING:
    from streams_runtime.config import SerdeLike
    from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
    from streams_runtime.processor.internals.stream_thread import StreamThread
    from streams_runtime.processor.internals.task_manager import TaskManager
    from streams_runtime.processor.internals.topology_info import SubtopologyInfo
    from streams_runtime.serdes import Serde

T = TypeVar("T")

#: what turns a query's key into the bytes that pick its partition: a serde, or a function of the key
KeySerializer: TypeAlias = "SerdeLike | Callable[[Any], bytes | None]"

#: how long a query waits for a stream thread's lock (a thread closing its tasks holds it longer)
LOCK_TIMEOUT_S = 5.0

KEY_VALUE, WINDOW, SESSION = "key-value", "window", "session"


def for_each_task_manager(
    threads: Iterable[StreamThread], timeout_s: float, visit: Callable[[StreamThread, TaskManager], None]
) -> None:
    """``visit(thread, manager)`` for each thread's TaskManager, under the thread's ``query_lock``;
    a thread whose lock is not free within ``timeout_s`` seconds, or that has no manager, is skipped."""
    for thread in threads:
        if not thread.query_lock.acquire(timeout=timeout_s):
            continue
        try:
            manager = thread.task_manager
            if manager is not None:
                visit(thread, manager)
        finally:
            thread.query_lock.release()


def store_kind(store_builder: object) -> str:
    """``key-value``, ``window`` or ``session``, from the store's builder."""
    name = type(store_builder).__name__
    if "Session" in name:
        return SESSION
    if "Window" in name:
        return WINDOW
    return KEY_VALUE


class LocalStores:
    """See the module docstring.

    :param setup: returns the client's RuntimeSetup (None before start).
    :param threads: returns the client's live StreamThreads.
    :param state: returns the client's state name (queries need RUNNING or REBALANCING).
    """

    def __init__(
        self,
        setup: Callable[[], RuntimeSetup | None],
        threads: Callable[[], list[Any]],
        state: Callable[[], str],
    ) -> None:
        self._setup = setup
        self._threads = threads
        self._state = state

    # ------------------------------------------------------------------ the topology's stores
    def setup(self) -> RuntimeSetup:
        setup = self._setup()
        if setup is None or self._state() not in ("RUNNING", "REBALANCING"):
            raise StreamsNotStartedError(
                f"KafkaStreams is not running (state {self._state()}): stores are queryable only while "
                f"RUNNING or REBALANCING"
            )
        return setup

    def store_names(self) -> list[str]:
        setup = self._setup()
        if setup is None:
            return []
        return sorted({name for info in setup.subtopologies.values() for name in info.stores})

    def store_subtopologies(self) -> dict[str, int]:
        """Every store of the topology -> the id of the sub-topology hosting it."""
        setup = self._setup()
        if setup is None:
            return {}
        return {name: info.id for info in setup.subtopologies.values() for name in info.stores}

    def subtopology_of(self, name: str) -> SubtopologyInfo:
        """The SubtopologyInfo hosting store ``name``; UnknownStateStoreError if none does."""
        for info in self.setup().subtopologies.values():
            if name in info.stores:
                return info
        known = ", ".join(self.store_names()) or "none"
        raise UnknownStateStoreError(f"store {name} is not a store of this topology (stores: {known})")

    def partition_count(self, name: str) -> int:
        info = self.subtopology_of(name)
        counts: Mapping[str, int] = self.setup().partition_counts
        return max(counts[t] for t in info.source_topics)

    def kind(self, name: str) -> str:
        self.subtopology_of(name)
        return store_kind(self.setup().builder.stores[name].builder)

    def key_serde(self, name: str) -> SerdeLike:
        """The store's key serde: a local instance's (resolved at init), the builder's, or the
        config's default."""
        for thread in self._threads():
            manager = thread.task_manager
            if manager is None:
                continue
            for task in list(manager.tasks.values()):
                store = task.stores.get(name)
                serde: SerdeLike | None = getattr(store, "key_serde", None)
                if serde is not None:
                    return serde
        setup = self.setup()
        serde = getattr(setup.builder.stores[name].builder, "key_serde", None)
        return serde if serde is not None else setup.config.default_serde("key")

    def partition_of(self, name: str, key: Any, key_serializer: KeySerializer | None = None) -> int:
        """The partition of ``key`` for store ``name`` (module docstring)."""
        count = self.partition_count(name)
        serde = key_serializer if key_serializer is not None else self.key_serde(name)
        if callable(serde) and not hasattr(serde, "serialize"):
            data = serde(key)
        else:
            # a Serde or a serde-like object: serialize_or_raise calls its serialize() only
            data = serialize_or_raise(cast("Serde", serde), f"{name}-query", "key", key)
        if data is None:
            raise InvalidStateStoreError(f"store {name}: a None key has no partition")
        return partition_for(data, count)

    def task_of(self, name: str, partition: int) -> TaskId:
        count = self.partition_count(name)
        if not 0 <= partition < count:
            raise InvalidStateStorePartitionError(
                f"store {name} has partitions 0..{count - 1}; partition {partition} does not exist"
            )
        return TaskId(self.subtopology_of(name).id, partition)

    # ------------------------------------------------------------------ reads
    def read(self, name: str, partition: int, fn: Callable[[Any], T], *, allow_stale: bool = False) -> T:
        """``fn(store)`` on the local replica of ``name``'s ``partition``, under its thread's lock."""
        task_id = self.task_of(name, partition)
        migrating = False
        for standby in (False, True) if allow_stale else (False,):
            for thread in self._threads():
                found, result = self._read_on(thread, task_id, name, fn, standby)
                if found == "ok":
                    answer: T = result
                    return answer
                migrating = migrating or found == "migrating"
        if migrating:
            raise StateStoreMigratedError(
                f"store {name} partition {partition} is migrating (restoring) on this instance; "
                f"retry when its task {task_id} runs"
            )
        raise InvalidStateStorePartitionError(
            f"store {name} partition {partition} is not hosted on this instance"
            + ("" if allow_stale else " (as an active task; allow_stale also reads standbys)")
        )

    def read_all(
        self,
        name: str,
        fn: Callable[[Any], T],
        *,
        partitions: list[int] | None = None,
        allow_stale: bool = False,
    ) -> dict[int, T]:
        """``fn(store)`` on every local replica of ``name`` (or of the given partitions) ->
        ``{partition: result}``. A local partition that is migrating raises (the answer would miss
        its entries); partitions not hosted here are left out unless asked for explicitly."""
        if partitions is not None:
            return {p: self.read(name, p, fn, allow_stale=allow_stale) for p in partitions}
        results: dict[int, T] = {}
        hosted = self.local_partitions(name, standby=allow_stale)
        for partition in sorted(hosted):
            results[partition] = self.read(name, partition, fn, allow_stale=allow_stale)
        return results

    def local_partitions(self, name: str, standby: bool = False) -> set[int]:
        """Partitions of ``name`` whose task is assigned to this client (active; with ``standby``
        also standby), restoring or not."""
        sub = self.subtopology_of(name).id
        found: set[Any] = set()
        for thread in self._threads():
            tasks = list(thread.active_tasks)
            if standby:
                tasks += list(getattr(thread, "standby_tasks", {}) or {})
            found.update(t.partition for t in tasks if t.subtopology == sub)
        return found

    @staticmethod
    def _read_on(
        thread: StreamThread, task_id: TaskId, name: str, fn: Callable[[Any], Any], standby: bool
    ) -> tuple[str, Any]:
        if not thread.is_alive_member():
            return "absent", None
        if not thread.query_lock.acquire(timeout=LOCK_TIMEOUT_S):
            return "migrating", None
        try:
            if not thread.is_alive_member():
                return "absent", None
            manager = thread.task_manager
            if manager is None:
                return "absent", None
            if standby:
                stores_of = getattr(manager, "standby_stores", None)
                if stores_of is None or task_id not in (getattr(thread, "standby_tasks", None) or {}):
                    return "absent", None
                store = (stores_of(task_id) or {}).get(name)
                return ("ok", fn(store)) if store is not None else ("absent", None)
            if manager.is_restoring(task_id):
                return "migrating", None
            task = manager.tasks.get(task_id)
            if task is None:
                return "absent", None
            store = task.stores.get(name)
            if store is None:
                return "absent", None
            return "ok", fn(store)
        finally:
            thread.query_lock.release()
