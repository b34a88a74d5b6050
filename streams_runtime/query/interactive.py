"""InteractiveQueries: the query side of one KafkaStreams client (its ``store``, metadata and lags).

Created and owned by a KafkaStreams client, which hands it read access to its RuntimeSetup, its
live threads, its state and its restore progress; KafkaStreams' public query methods forward
here. Reads only: it never changes a task (work that must, goes through ``StreamThread.submit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.query.local_stores import (
    KEY_VALUE,
    LOCK_TIMEOUT_S,
    SESSION,
    WINDOW,
    KeySerializer,
    LocalStores,
    for_each_task_manager,
)
from streams_runtime.query.metadata import (
    KeyQueryMetadata,
    LagInfo,
    StreamsMetadata,
    hosts_of,
    latest_assignment,
    streams_metadata,
)
from streams_runtime.query.views import ReadOnlyKeyValueView, ReadOnlySessionView, ReadOnlyWindowView

if TYPE_CHECKING:
    from streams_runtime.processor.internals.stream_thread import StreamThread
    from streams_runtime.processor.internals.task_manager import TaskManager

_VIEWS = {KEY_VALUE: ReadOnlyKeyValueView, WINDOW: ReadOnlyWindowView, SESSION: ReadOnlySessionView}


class InteractiveQueries:
    """See the module docstring."""

    def __init__(
        self,
        setup: Callable[[], Any],
        threads: Callable[[], list[Any]],
        state: Callable[[], str],
        restore_progress: Callable[[], Any],
    ) -> None:
        self.local = LocalStores(setup, threads, state)
        self._threads = threads
        self._restore_progress = restore_progress

    def store(self, name: str, allow_stale: bool = False, partition: int | None = None) -> Any:
        """A read-only view of store ``name`` over this client's replicas (module :mod:`.views`)."""
        kind = self.local.kind(name)
        if partition is not None:
            self.local.task_of(name, partition)  # validates the partition number
        return _VIEWS[kind](self.local, name, allow_stale, partition)

    def _source_topics(self, name: str) -> list[str]:
        return list(self.local.subtopology_of(name).source_topics)

    def query_metadata_for_key(
        self, store: str, key: object, key_serializer: KeySerializer | None = None
    ) -> KeyQueryMetadata:
        partition = self.local.partition_of(store, key, key_serializer)
        topics = self._source_topics(store)
        assignment = latest_assignment(self._threads())
        if assignment is None:
            return KeyQueryMetadata(None, frozenset(), partition)
        active = hosts_of(assignment.partitions_by_host, topics, partition)
        standby = hosts_of(assignment.standby_partitions_by_host, topics, partition)
        return KeyQueryMetadata(min(active) if active else None, frozenset(standby), partition)

    def all_metadata(self) -> list[StreamsMetadata]:
        store_topics = {name: self._source_topics(name) for name in self.local.store_names()}
        return streams_metadata(latest_assignment(self._threads()), store_topics)

    def all_metadata_for_store(self, name: str) -> list[StreamsMetadata]:
        self.local.subtopology_of(name)
        return [
            m
            for m in self.all_metadata()
            if name in m.state_store_names or name in m.standby_state_store_names
        ]

    def all_local_store_partition_lags(self) -> dict[str, dict[int, LagInfo]]:
        """Every local replica (active or standby) of every store: its lag behind the changelog end.

        A RUNNING active task is caught up (lag 0, positions = its last changelog offset + 1, as
        Kafka Streams reports running actives); a restoring one reports the restore's position and
        end; a standby reports the lag the TaskManager's ``standby_lags()`` gives (its positions are
        not tracked there: -1)."""
        setup = self.local.setup()
        store_of_changelog = {
            topic: store
            for info in setup.subtopologies.values()
            for store, topic in info.changelog_topics.items()
        }
        restores = self._restore_progress().snapshot() if self._restore_progress() is not None else {}
        lags: dict[str, dict[int, LagInfo]] = {}

        def of_manager(_thread: StreamThread, manager: TaskManager) -> None:
            for task_id, task in list(manager.tasks.items()):
                restoring = manager.is_restoring(task_id)
                offsets = manager.changelog_offsets(task_id)
                for name in task.stores:
                    tp = next(((t, p) for (t, p) in offsets if store_of_changelog.get(t) == name), None)
                    position = offsets[tp] + 1 if tp is not None else 0
                    entry = restores.get(tp) if tp is not None else None
                    if restoring and entry is not None and not entry.done:
                        info = LagInfo(entry.current_offset, entry.end_offset, entry.remaining)
                    else:
                        info = LagInfo(position, position, 0)
                    lags.setdefault(name, {})[task_id.partition] = info
            standby_lags = getattr(manager, "standby_lags", None)
            if standby_lags is not None:
                for task_id, by_tp in (standby_lags() or {}).items():
                    for (topic, _), lag in by_tp.items():
                        store = store_of_changelog.get(topic)
                        if store is not None:
                            lags.setdefault(store, {})[task_id.partition] = LagInfo(-1, -1, int(lag))

        for_each_task_manager(self._threads(), LOCK_TIMEOUT_S, of_manager)
        return lags
