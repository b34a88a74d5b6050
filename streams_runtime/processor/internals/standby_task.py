"""StandbyTask: a replica of one task's state stores, kept current from the task's changelogs.

Created and owned by a TaskManager for each standby or warm-up task of its thread's assignment;
borrows the client's StateDirectory (the task directory's lock is held from :meth:`initialize`
until :meth:`close`, exactly as for an active task) and is registered with the thread's
StoreChangelogReader as a standby: its changelogs are replayed continuously, never "complete",
and are paused while an active task of the thread restores (active restoration first).

No processor runs: the task has no input partitions, no record cache (reads go straight to the
stores) and no producer (its stores never write a changelog). Its ProcessorStateManager records
the offset each replayed batch reached (RocksDB keeps data and offset in one WriteBatch), and
:meth:`checkpoint` writes the ``.checkpoint`` file, so the offset sums this instance reports to
the assignor (``StateDirectory.task_offset_sums``) follow the standby's progress and the
assignor can give the task to the most caught-up instance when its active fails.

Lifecycle: the task state machine of :mod:`.abstract_task`; a standby passes through
RESTORING at once, as in Kafka Streams (its changelogs are replayed while it is RUNNING)::

    CREATED --initialize()--> RESTORING --> RUNNING --close()--> SUSPENDED --> CLOSED

Closing (revoked, or promoted to active on this instance), numbered:
  1. flush every store and write the checkpoint (skipped when closing dirty);
  2. close the stores, forget the state manager;
  3. the owner unregisters the task from the reader before and unlocks the directory after.
The active task that follows on this instance then restores only the changelog records after
that checkpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from streams_runtime.errors import StreamsError
from streams_runtime.processor.internals.abstract_task import IllegalStateError, State, Task
from streams_runtime.processor.internals.context import ProcessorContextImpl
from streams_runtime.processor.internals.partition_group import UNKNOWN
from streams_runtime.processor.internals.state_manager import ProcessorStateManager

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig
    from streams_runtime.processor.internals.metrics import StreamsMetrics
    from streams_runtime.processor.internals.state_directory import StateDirectory
    from streams_runtime.processor.task_id import TaskId

__all__ = ["StandbyTask"]

log = logging.getLogger("streams_runtime.processor")


class StandbyTask(Task):
    """See the module docstring.

    :param task_id: the task this replicates.
    :param store_names: the stores of the task's sub-topology.
    :param store_builders: store name -> StoreBuilder (one store instance built per task).
    :param config: the client's StreamsConfig.
    :param metrics: the thread's metrics registry.
    :param state_directory: the client's StateDirectory; the caller holds the task's lock.
    :param wall_clock: milliseconds since the epoch.
    """

    is_active = False

    def __init__(
        self,
        task_id: TaskId,
        store_names: list[str],
        store_builders: dict[str, Any],
        config: StreamsConfig,
        metrics: StreamsMetrics,
        state_directory: StateDirectory,
        wall_clock: Callable[[], int],
    ) -> None:
        super().__init__(task_id)
        self.stores: dict[str, Any] = {}
        self._store_names = list(store_names)
        self._store_builders = store_builders
        self._config = config
        self._metrics = metrics
        self._state_directory = state_directory
        self.wall_clock_ms = wall_clock
        self.stream_time = UNKNOWN  # read by the context; a standby has no stream time
        self.state_manager = ProcessorStateManager(task_id, state_directory)
        self.context: Any = None
        self._checkpointed: dict[tuple[str, int], int] = {}

    # ------------------------------------------------------------------ lifecycle
    def initialize(self) -> None:
        """Build and open the task's stores (they register their changelogs with the manager)."""
        if self.state is not State.CREATED:
            raise IllegalStateError(self.id, self.state, State.RESTORING)  # before any store opens
        task_dir = self._state_directory.task_dir(self.id)
        self.context = context = ProcessorContextImpl(
            self,
            self._config.required_application_id(),
            self.id,
            self._config,
            task_dir,
            self._metrics,
            None,
            None,
            None,
        )
        context.set_state_manager(self.state_manager)
        for name in self._store_names:
            self.stores[name] = self._store_builders[name].build()
        for store in self.stores.values():
            store.init(context, store)
            context.add_store(store)
        self._checkpointed = self.state_manager.checkpointed_offsets()
        self.transition_to(State.RESTORING)
        self.transition_to(State.RUNNING)

    def checkpoint(self, force: bool = False) -> bool:
        """Flush the stores and write the checkpoint when the replayed offsets moved (or ``force``);
        returns whether a checkpoint was written."""
        if self.state is not State.RUNNING:
            return False
        offsets = self.state_manager.checkpointed_offsets()
        if not force and offsets == self._checkpointed:
            return False
        self.state_manager.flush()
        self.state_manager.checkpoint()
        self._checkpointed = offsets
        return True

    def close(self, clean: bool = True) -> None:
        """The closing steps of the module docstring (the owner does step 3)."""
        if self.state is State.CLOSED:
            return
        errors: list[Exception] = []
        # Step 1
        if clean and self.state is State.RUNNING:
            try:
                self.checkpoint(force=True)
            except Exception as exc:
                errors.append(exc)
        # Step 2
        for store in reversed(list(self.stores.values())):
            try:
                store.close()
            except Exception as exc:
                errors.append(exc)
        self.suspend()
        self.state_manager.close()
        self.transition_to(State.CLOSED)
        if errors:
            raise StreamsError(f"standby task {self.id}: errors while closing: {errors}") from errors[0]

    # ------------------------------------------------------------------ what a context may ask
    def schedule(self, *args: object, **kwargs: object) -> NoReturn:
        raise StreamsError(f"standby task {self.id} runs no processors: nothing can be scheduled")

    def request_commit(self) -> None:
        """A standby commits nothing; its checkpoints follow the thread's commits."""
