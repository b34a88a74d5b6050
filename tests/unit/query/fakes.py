"""Fake client pieces for the interactive-query unit tests: threads with a query lock and a task
manager holding dict-backed stores, a setup with one sub-topology, a client with a state."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from streams_runtime import Serdes, StreamsConfig
from streams_runtime.kafka.partitioner import partition_for
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.thread_metrics import ThreadMetrics
from streams_runtime.processor.task_id import TaskId
from streams_runtime.query.interactive import InteractiveQueries
from streams_runtime.state.interfaces import KeyValue

PARTITIONS = 4
STORE = "counts"
KEY_SERDE = Serdes.String()


def partition_of(key: str) -> int:
    return partition_for(KEY_SERDE.serialize("t", key), PARTITIONS)


class _Iter:
    def __init__(self, items: list[KeyValue]) -> None:
        self._items = items

    def __enter__(self) -> list[KeyValue]:
        return iter(self._items)

    def __exit__(self, *exc: object) -> None:
        return None


class DictStore:
    """A key-value store over a dict; records whether it was read under its thread's lock."""

    def __init__(self, lock: Any, data: dict[str, int]) -> None:
        self._lock = lock
        self.data = dict(data)
        self.key_serde = KEY_SERDE
        self.reads_unlocked = 0

    def _check(self) -> None:
        if not self._lock._is_owned():  # noqa: SLF001 - RLock exposes ownership only this way
            self.reads_unlocked += 1

    def get(self, key: str) -> Any:
        self._check()
        return self.data.get(key)

    def range(self, lo: Any = None, hi: Any = None) -> _Iter:
        self._check()
        return _Iter(
            [
                KeyValue(k, v)
                for k, v in sorted(self.data.items())
                if (lo is None or k >= lo) and (hi is None or k <= hi)
            ]
        )

    def all(self) -> _Iter:
        return self.range()

    def approximate_num_entries(self) -> int:
        self._check()
        return len(self.data)


@dataclass
class FakeTaskManager:
    tasks: dict[TaskId, Any] = field(default_factory=dict)
    restoring: set[TaskId] = field(default_factory=set)
    standbys: dict[TaskId, dict[str, Any]] = field(default_factory=dict)

    def is_restoring(self, task_id: TaskId) -> bool:
        return task_id in self.restoring

    def changelog_offsets(self, task_id: TaskId) -> dict:
        return {(f"app-{STORE}-changelog", task_id.partition): 41}

    def standby_stores(self, task_id: TaskId) -> dict[str, Any]:
        return self.standbys.get(task_id, {})

    def standby_lags(self) -> dict:
        return {t: {(f"app-{STORE}-changelog", t.partition): 7} for t in self.standbys}


class FakeThread:
    def __init__(self, name: str, assignment: Any = None) -> None:
        self.name = name
        self.state = "RUNNING"
        self.query_lock = threading.RLock()
        self.task_manager = FakeTaskManager()
        self.standby_tasks: dict[TaskId, tuple] = {}
        self.assignment = assignment
        self.metrics = ThreadMetrics(name)
        self.streams_metrics = StreamsMetrics()

    @property
    def active_tasks(self) -> dict[TaskId, tuple]:
        return {t: () for t in self.task_manager.tasks}

    def is_alive_member(self) -> bool:
        return True

    def host(self, partition: int, data: dict[str, int], *, restoring: bool = False) -> DictStore:
        store = DictStore(self.query_lock, data)
        task_id = TaskId(0, partition)
        self.task_manager.tasks[task_id] = SimpleNamespace(stores={STORE: store})
        if restoring:
            self.task_manager.restoring.add(task_id)
        return store

    def host_standby(self, partition: int, data: dict[str, int]) -> DictStore:
        store = DictStore(self.query_lock, data)
        self.task_manager.standbys[TaskId(0, partition)] = {STORE: store}
        self.standby_tasks[TaskId(0, partition)] = ()
        return store


def fake_setup() -> Any:
    builder = SimpleNamespace(
        stores={STORE: SimpleNamespace(builder=type("KeyValueStoreBuilder", (), {"key_serde": KEY_SERDE})())}
    )
    info = SimpleNamespace(
        id=0, source_topics=["input"], stores=[STORE], changelog_topics={STORE: f"app-{STORE}-changelog"}
    )
    return SimpleNamespace(
        subtopologies={0: info},
        partition_counts={"input": PARTITIONS},
        builder=builder,
        config=SimpleNamespace(default_serde=lambda side: None),
    )


class FakeClient:
    """Just what InteractiveQueries, the HTTP app and the Prometheus collector read."""

    def __init__(
        self,
        threads: list[FakeThread],
        state: str = "RUNNING",
        endpoint: str = "127.0.0.1:9001",
        token: str | None = None,
        forwarding_secret: str | None = None,
        application_id: str = "app",
    ) -> None:
        self.threads = threads
        self.process_id = f"process-of-{endpoint}"
        self.state = SimpleNamespace(name=state)
        self.setup = fake_setup()
        self.config = StreamsConfig(
            application_id=application_id,
            application_server=endpoint,
            application_server_token=token,
            application_server_forwarding_secret=forwarding_secret,
        )
        self.restore_progress = None
        self.interactive_queries = InteractiveQueries(
            lambda: self.setup, lambda: self.threads, lambda: self.state.name, lambda: self.restore_progress
        )

    def local_threads(self) -> list[FakeThread]:
        return self.threads

    def query_metadata_for_key(self, store: str, key: Any, key_serializer: Any = None) -> Any:
        return self.interactive_queries.query_metadata_for_key(store, key, key_serializer)

    def all_metadata(self) -> list[Any]:
        return self.interactive_queries.all_metadata()

    def all_metadata_for_store(self, name: str) -> list[Any]:
        return self.interactive_queries.all_metadata_for_store(name)

    def all_local_store_partition_lags(self) -> dict:
        return self.interactive_queries.all_local_store_partition_lags()
