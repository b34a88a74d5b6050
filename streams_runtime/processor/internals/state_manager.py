"""ProcessorStateManager: the stores of one task, their changelog partitions and offsets.

Owner: one StreamTask (created by the TaskManager before the task initializes, bound to the
task's context with ``context.set_state_manager``); borrowed by the thread's
StoreChangelogReader (restore) and fed by the RecordCollector (changelog offsets written).

Registration: when the task initializes its stores, each inner store calls
``context.register(root_store, restore_callback, changelog_topic=...)``; the context forwards
that here. A store with a changelog topic gets the changelog partition of the task
(``<application_id>-<store>-changelog``, partition = the task's partition), a record converter
(:func:`record_converter_for`) and its starting offset:

* persistent stores: the offset the store keeps with its data (RocksDB writes data and offset in
  one WriteBatch, so it is exact), else the task's ``.checkpoint`` file;
* in-memory stores: none (their data died with the process: restore from the beginning).

Offsets are the LAST changelog offset a store reflects; restore resumes at ``offset + 1``.

Checkpoint protocol (:meth:`checkpoint`, commit step 4 of the TaskManager), called only after
the stores and the producer were flushed (steps 1-2), so every offset it records describes data
already in the stores:

1. each persistent store with a new offset records it next to its data (``commit_offset``);
2. the ``.checkpoint`` file is replaced atomically with the offsets of the persistent stores.

A crash between the steps leaves the file behind the stores; restore then replays a few records
already applied, which is idempotent (each changelog record sets a key to its final value).
Step 2 is skipped when the offsets are the ones last written (the state directory does not
write an unchanged checkpoint again) and, given ``min_delta``, while the offsets moved by no
more than ``min_delta`` records in all since the file was last written (Kafka Streams writes
its checkpoint at commit only past 10,000 records): every persistent store keeps its own offset
with its data (step 1), so the file only feeds the assignor's offset sums between such writes.

Invariants: one registration per store name (the same store object may register again, as it
does when :meth:`wipe_state` re-initializes it); offsets only move forward between wipes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import ProcessorStateError
from streams_runtime.state.internals.timestamped import RecordConverter, record_converter_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.processor.internals.state_directory import StateDirectory
    from streams_runtime.processor.task_id import TaskId
    from streams_runtime.state.interfaces import StateStore

__all__ = ["ProcessorStateManager", "StoreMetadata"]

log = logging.getLogger("streams_runtime.state")

ChangelogPartition = tuple[str, int]


@dataclass
class StoreMetadata:
    """One registered store: what restore and checkpointing need to know about it."""

    store: Any
    inner: Any
    restore_callback: Any
    changelog: ChangelogPartition | None
    converter: RecordConverter
    timestamped: bool
    persistent: bool
    offset: int | None = None
    committed: int | None = None

    @property
    def name(self) -> str:
        name: str = self.store.name
        return name


class ProcessorStateManager:
    """The state of one task; see the module docstring.

    :param task_id: the task (its partition is the changelog partition).
    :param state_directory: where checkpoints live; ``None`` keeps offsets in memory only.
    :param changelog_partition: overrides the changelog partition (default: the task's).
    """

    def __init__(
        self,
        task_id: TaskId,
        state_directory: StateDirectory | None = None,
        *,
        changelog_partition: int | None = None,
    ) -> None:
        self.task_id = task_id
        self._state_directory = state_directory
        self._partition = task_id.partition if changelog_partition is None else changelog_partition
        self._stores: dict[str, StoreMetadata] = {}
        self._by_changelog: dict[ChangelogPartition, StoreMetadata] = {}
        self._checkpoint_file: dict[ChangelogPartition, int] | None = None
        self._file_written = False  # this manager wrote the file (what _checkpoint_file holds)
        self._context: Any = None

    def bind_context(self, context: object) -> None:
        """Called by ``context.set_state_manager``: the context stores re-initialize with."""
        self._context = context

    # ------------------------------------------------------------------ registration
    def register(
        self, store: StateStore, restore_callback: Callable[..., Any], changelog_topic: str | None = None
    ) -> None:
        """Record a store of the task (called through ``context.register`` during ``init``)."""
        name = store.name
        previous = self._stores.get(name)
        if previous is not None and previous.store is not store:
            raise ProcessorStateError(f"task {self.task_id}: a store named {name} is already registered")
        inner_of = getattr(store, "inner", None)
        inner = inner_of() if callable(inner_of) else store
        changelog = (changelog_topic, self._partition) if changelog_topic else None
        meta = StoreMetadata(
            store=store,
            inner=inner,
            restore_callback=restore_callback,
            changelog=changelog,
            converter=record_converter_for(store),
            timestamped=bool(getattr(store, "timestamped", False)),
            persistent=bool(getattr(store, "persistent", False)),
        )
        if changelog is not None and meta.persistent:
            meta.offset = meta.committed = self._initial_offset(inner, changelog)
        self._stores[name] = meta
        if changelog is not None:
            self._by_changelog[changelog] = meta
        log.debug(
            "task %s: registered store %s (changelog %s, offset %s)",
            self.task_id,
            name,
            changelog,
            meta.offset,
        )

    def _initial_offset(self, inner: object, changelog: ChangelogPartition) -> int | None:
        committed = getattr(inner, "committed_offset", None)
        if callable(committed):
            offset: int | None = committed()
            return offset
        if self._checkpoint_file is None:
            self._checkpoint_file = (
                self._state_directory.read_checkpoint(self.task_id) if self._state_directory else {}
            )
        return self._checkpoint_file.get(changelog)

    # ------------------------------------------------------------------ queries
    def stores(self) -> list[Any]:
        """The registered (root) stores, in registration order."""
        return [meta.store for meta in self._stores.values()]

    def changelog_partitions(self) -> dict[ChangelogPartition, Any]:
        """``(topic, partition) -> root store`` for every store with a changelog."""
        return {tp: meta.store for tp, meta in self._by_changelog.items()}

    def changelog_metadata(self) -> dict[ChangelogPartition, StoreMetadata]:
        """``(topic, partition) -> StoreMetadata`` (for the StoreChangelogReader)."""
        return dict(self._by_changelog)

    def checkpointed_offsets(self) -> dict[ChangelogPartition, int]:
        """The last changelog offset each logged store reflects, where one is known."""
        return {tp: meta.offset for tp, meta in self._by_changelog.items() if meta.offset is not None}

    # ------------------------------------------------------------------ offsets
    def update_changelog_offsets(self, offsets: dict[ChangelogPartition, int]) -> None:
        """Record the last changelog offsets written for this task (RecordCollector deliveries)."""
        for tp, offset in offsets.items():
            meta = self._by_changelog.get(tp)
            if meta is not None and (meta.offset is None or offset > meta.offset):
                meta.offset = offset

    def restored(self, changelog: ChangelogPartition, batch_end_offset: int) -> None:
        """Record that a restore batch ending at ``batch_end_offset`` was applied."""
        self._by_changelog[changelog].offset = batch_end_offset

    # ------------------------------------------------------------------ flush and checkpoint
    def flush(self) -> None:
        """Flush every store (root first: caches forward, then the layers below persist)."""
        for meta in self._stores.values():
            meta.store.flush()

    def checkpoint(self, *, min_delta: int = 0) -> None:
        """Write the offsets the stores reflect; see the module docstring for the protocol.

        :param min_delta: leave the file as it is while the offsets moved by at most this many
            records in all since this manager last wrote it (0: write whenever they moved).
        """
        offsets: dict[ChangelogPartition, int] = {}
        for tp, meta in self._by_changelog.items():
            if not meta.persistent or meta.offset is None:
                continue
            # Step 1
            if meta.offset != meta.committed:
                commit = getattr(meta.inner, "commit_offset", None)
                if callable(commit):
                    commit(meta.offset)
                meta.committed = meta.offset
            offsets[tp] = meta.offset
        # Step 2
        if offsets and self._state_directory is not None:
            if min_delta > 0 and self._file_written and self._moved(offsets) <= min_delta:
                return
            self._state_directory.write_checkpoint(self.task_id, offsets)
            self._checkpoint_file = dict(offsets)
            self._file_written = True

    def _moved(self, offsets: dict[ChangelogPartition, int]) -> int:
        """How many records the offsets moved since the file was written (a new partition: all)."""
        written = self._checkpoint_file or {}
        return sum(offset - written.get(tp, -1) for tp, offset in offsets.items())

    # ------------------------------------------------------------------ wiping
    def wipe_state(self) -> None:
        """Throw the task's local state away and re-open its stores empty (fresh broker).

        1. close every registered store (whole stacks, last registered first);
        2. delete the task directory's content (stores, checkpoint), keeping the lock;
        3. re-initialize the same store objects in registration order; they register again
           with no offset, so restore starts from the beginning of each changelog.

        :raises ProcessorStateError: when no context is bound (nothing to re-initialize with).
        """
        if self._context is None:
            raise ProcessorStateError(f"task {self.task_id}: cannot wipe state without a bound context")
        roots = self.stores()
        # Step 1
        for store in reversed(roots):
            store.close()
        # Step 2
        if self._state_directory is not None:
            self._state_directory.wipe_task(self.task_id)
        self._checkpoint_file = {}
        self._file_written = False
        self._stores.clear()
        self._by_changelog.clear()
        # Step 3
        for store in roots:
            store.init(self._context, store)

    def close(self) -> None:
        """Forget the stores (the task closes them); the checkpoint stays on disk."""
        self._stores.clear()
        self._by_changelog.clear()
        self._context = None
