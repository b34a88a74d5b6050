"""What the task manager and the task executor use of a stream thread's producer side.

Two implementations: :class:`~.shared_record_collectors.SharedRecordCollectors` (at-least-once,
one producer per thread shared by the tasks) and
:class:`~.transactional_record_collector.TaskRecordCollectors` (exactly-once, one transactional
producer per task). The processing guarantee lives inside them; the callers see only this
interface. :func:`create_record_collector` makes the one a thread's configuration asks for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.kafka.client_supplier import ConsumerClient, KafkaClientSupplier
from streams_runtime.processor.internals.context import TaskRecordCollector
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.record_collector import ProducerSettings, RecordCollector
from streams_runtime.processor.internals.shared_record_collectors import SharedRecordCollectors
from streams_runtime.processor.internals.transactional_record_collector import TaskRecordCollectors

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig

__all__ = ["ProducerSide", "TaskCollector", "create_record_collector"]


class TaskCollector(TaskRecordCollector, Protocol):
    """One active task's record collector (what its task and state manager read of it)."""

    @property
    def in_transaction(self) -> bool: ...


class ProducerSide(Protocol):
    """A thread's producer side: task collectors in, commits out (see the module docstring)."""

    @property
    def eos_enabled(self) -> bool: ...

    def prepare(self, task_ids: Iterable[Any]) -> None:
        """Make ready the producers of tasks about to be created (exactly-once: one each)."""

    def for_task(self, task_id: object) -> TaskCollector:
        """The collector of one active task."""

    def release(self, task_id: object, clean: bool) -> None:
        """A task is closing: let go of its collector (dirty: abort what it has open)."""

    def in_transaction(self, task_id: object) -> bool:
        """Whether the task has records in an open transaction."""

    def poll(self) -> None:
        """Serve delivery reports."""

    def unconfirmed_tasks(self) -> set[Any]:
        """Tasks whose last commit is not yet visible as committed offsets."""

    def confirm_commits(self, consumer: ConsumerClient) -> set[Any]:
        """Check the unconfirmed commits against ``consumer``'s committed offsets; the tasks
        still waiting."""

    def commit_tasks(
        self, commits: list[tuple[Any, list[Any]]], consumer: ConsumerClient, task_timeout_ms: int
    ) -> list[Any]:
        """Commit ``(task_id, offsets)`` pairs; per task, True or the error its commit raised."""

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        """Wait for every acknowledgement of what was sent."""

    def close(self, timeout_s: float = 10.0) -> None:
        """Flush and close the producers."""


def create_record_collector(
    config: StreamsConfig,
    bootstrap_servers: str,
    client_id: str,
    changelog_topics: Iterable[str],
    client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
) -> SharedRecordCollectors | TaskRecordCollectors:
    """The producer side of one StreamThread: one shared producer under at-least-once
    (:class:`~.shared_record_collectors.SharedRecordCollectors`), one transactional producer
    per task under exactly_once_v2
    (:class:`~.transactional_record_collector.TaskRecordCollectors`); either gives each task
    its own collector."""
    overrides = config.client_configs("producer.")
    continue_on_error = config.default_production_exception_handler == "continue"
    settings = ProducerSettings(
        bootstrap_servers,
        client_id,
        overrides,
        frozenset(changelog_topics),
        continue_on_error,
        client_supplier,
    )
    if config.processing_guarantee == "exactly_once_v2":
        return TaskRecordCollectors(settings, config.required_application_id())
    return SharedRecordCollectors(RecordCollector(settings))
