"""ActiveTaskCreator and StandbyTaskCreator: build a thread's tasks (Kafka Streams' names).

Owned by a TaskManager, run on its stream thread. Creating a stateful task, numbered:
  1. lock the task directory (``None`` is returned while another owner still holds it: the
     TaskManager keeps the task pending and tries again);
  2. wipe the directory if an exactly-once owner left it dirty (its stores may be ahead of the
     committed changelog); a task whose collector is transactional marks it dirty before its
     stores open (only a clean close removes the mark);
  3. build the task with its own collector (from the thread's producer side) and its state
     manager, and open its stores; a store that cannot be opened (``CorruptedStoreError``) gets
     the task's local state wiped and the task built once more, to restore from the changelog.
A stateless task skips steps 1-2. The created task is RESTORING (a standby: RUNNING).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import CorruptedStoreError, StreamsError
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.standby_task import StandbyTask
from streams_runtime.processor.internals.state_manager import ProcessorStateManager
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.internals.topology_info import SubtopologyInfo
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:  # types only
    from pathlib import Path

    from streams_runtime.config import StreamsConfig
    from streams_runtime.processor.internals.metrics import StreamsMetrics
    from streams_runtime.processor.internals.producer_side import ProducerSide, TaskCollector
    from streams_runtime.processor.internals.state_directory import StateDirectory
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
    from streams_runtime.state.internals.record_cache import ThreadCache

__all__ = ["ActiveTaskCreator", "StandbyTaskCreator", "wipe_damaged"]

log = logging.getLogger("streams_runtime.processor")


def wipe_damaged(
    state_directory: StateDirectory, task_id: TaskId, exc: CorruptedStoreError, eos: bool
) -> None:
    """A store of ``task_id`` cannot be opened or read: throw the task's local state away (the
    lock is held) so its stores restore from their changelogs. Other tasks are untouched."""
    log.warning(
        "task %s: local state is damaged (%s); wiping %s and restoring it from the changelog",
        task_id,
        exc,
        state_directory.task_dir(task_id),
    )
    state_directory.wipe_task(task_id)
    if eos:
        state_directory.mark_eos_dirty(task_id)


@dataclass(eq=False, kw_only=True)
class ActiveTaskCreator:
    """Builds active tasks; see the module docstring.

    :param producers: the thread's producer side (``for_task``, ``eos_enabled``).
    """

    builder: InternalTopologyBuilder
    config: StreamsConfig
    producers: ProducerSide
    metrics: StreamsMetrics
    cache: ThreadCache | None
    wall_clock: Callable[[], int]
    state_directory: StateDirectory
    global_stores: dict[str, Any]
    #: store name -> its builder (what the tasks' stores are made from)
    store_builders: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.store_builders = {name: entry.builder for name, entry in self.builder.stores.items()}

    def create(
        self, task_id: TaskId, info: SubtopologyInfo, input_partitions: list[tuple[str, int]]
    ) -> StreamTask | None:
        """The RESTORING task, or None while its directory lock is held elsewhere (step 1)."""
        sd = self.state_directory
        task_dir: Path | None = None
        eos = bool(self.producers.eos_enabled)
        if info.stores:
            if not sd.lock(task_id):  # Step 1
                return None
            task_dir = sd.task_dir(task_id)
            sd.wipe_if_eos_dirty(task_id)  # Step 2
            if eos:
                sd.mark_eos_dirty(task_id)
        collector = self.producers.for_task(task_id)  # Step 3
        try:
            task = self._initialize(task_id, info, collector, task_dir)
        except CorruptedStoreError as exc:
            wipe_damaged(sd, task_id, exc, eos)
            task = self._initialize(task_id, info, collector, task_dir)
        task.input_partitions = list(input_partitions)
        task.processed_sensor = self.metrics.sensor("process-total", tags={"task-id": task_id})
        return task

    def _initialize(
        self, task_id: TaskId, info: SubtopologyInfo, collector: TaskCollector, task_dir: Path | None
    ) -> StreamTask:
        """Build and initialize a task (its stores open); a store that fails to open is closed
        with the others before the error leaves."""
        topology = build_processor_topology(self.builder, info.nodes)
        task = StreamTask(
            task_id,
            topology,
            self.store_builders,
            self.config,
            collector,
            self.metrics,
            self.cache,
            self.wall_clock,
            task_dir,
            self.global_stores,
        )
        if info.stores:
            task.state_manager = ProcessorStateManager(task_id, self.state_directory)
            task.context.set_state_manager(task.state_manager)
        try:
            task.initialize()
        except CorruptedStoreError:
            for store in task.stores.values():
                try:
                    store.close()
                except Exception:  # noqa: S110 - a store that never opened has nothing to close
                    pass
            raise
        return task


@dataclass(eq=False, kw_only=True)
class StandbyTaskCreator:
    """Builds standby (and warm-up) tasks: steps 1-3 of the module docstring without a
    collector; the standby's stores never write a changelog."""

    store_builders: dict[str, Any]
    config: StreamsConfig
    metrics: StreamsMetrics
    wall_clock: Callable[[], int]
    state_directory: StateDirectory
    eos: bool

    def create(self, task_id: TaskId, info: SubtopologyInfo) -> StandbyTask | None:
        """The RUNNING standby, or None while its directory lock is held elsewhere. The lock is
        released again when creation fails."""
        sd = self.state_directory
        if not sd.lock(task_id):
            return None
        sd.wipe_if_eos_dirty(task_id)  # left by a crashed exactly-once active
        standby = self._new(task_id, info)
        try:
            try:
                standby.initialize()
            except CorruptedStoreError as exc:  # damaged local state: replay it from the changelog
                try:
                    standby.close(clean=False)
                except StreamsError:
                    log.debug("standby task %s: closing stores that never opened", task_id)
                wipe_damaged(sd, task_id, exc, self.eos)
                standby = self._new(task_id, info)
                standby.initialize()
        except BaseException:
            try:
                standby.close(clean=False)
            finally:
                sd.unlock(task_id)
            raise
        return standby

    def _new(self, task_id: TaskId, info: SubtopologyInfo) -> StandbyTask:
        return StandbyTask(
            task_id,
            list(info.stores),
            self.store_builders,
            self.config,
            self.metrics,
            self.state_directory,
            self.wall_clock,
        )
