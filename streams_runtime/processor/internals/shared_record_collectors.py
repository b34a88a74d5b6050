"""The at-least-once producer side of a StreamThread: the tasks share the thread's producer.

Created by :func:`~.producer_side.create_record_collector` when ``processing_guarantee`` is
``at_least_once``: one :class:`~.record_collector.RecordCollector` (one plain producer) for the
thread, one :class:`SharedProducerCollector` per active task. Offers the TaskManager the same
interface as the exactly-once :class:`~.transactional_record_collector.TaskRecordCollectors`, so
the commit protocol has one path; here steps 2-3 are "wait for every acknowledgement, then
commit every input offset with the consumer" (:meth:`SharedRecordCollectors.commit_tasks`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import COORDINATOR_ERRORS, UNREACHABLE_ERRORS, KafkaError, KafkaException
from streams_runtime.kafka.outage import broker_outage
from streams_runtime.processor.internals.record_collector import DEFAULT_MAX_MESSAGE_BYTES, RecordCollector

__all__ = ["SharedProducerCollector", "SharedRecordCollectors", "commit_offsets"]

log = logging.getLogger("streams_runtime.processor")


class SharedProducerCollector:
    """The collector of one active task under at-least-once: its records go to the thread's
    :class:`RecordCollector` (one producer per thread). ``send`` is the shared collector's own
    bound method, so a record pays no extra call for going through the task's collector."""

    eos_enabled = False
    in_transaction = False

    def __init__(self, task_id: object, shared: RecordCollector) -> None:
        self.task_id = task_id
        self.send = shared.send
        self.max_message_bytes = getattr(shared, "max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES)
        self._shared = shared

    def take_failed_changelog(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """How many changelog records of ``partitions`` failed since the last call (then forgotten)."""
        taken: dict[tuple[str, int], int] = self._shared.take_failed_changelog(partitions)
        return taken


class SharedRecordCollectors:
    """The producer side of one StreamThread under at-least-once: one :class:`RecordCollector`
    (one plain producer) for the thread, one :class:`SharedProducerCollector` per active task.

    Its interface is the one the TaskManager uses for either guarantee (the exactly-once twin is
    :class:`~.transactional_record_collector.TaskRecordCollectors`): ``for_task``/``prepare``/
    ``release`` around a task's life, :meth:`commit_tasks` for commit steps 2-3, ``poll``,
    ``send_now``, ``close``.
    """

    eos_enabled = False

    def __init__(self, collector: RecordCollector) -> None:
        self.collector = collector

    def prepare(self, task_ids: Iterable[Any]) -> None:
        """Nothing to prepare: the tasks share the thread's producer."""

    def for_task(self, task_id: object) -> SharedProducerCollector:
        return SharedProducerCollector(task_id, self.collector)

    def release(self, task_id: object, clean: bool) -> None:
        """Nothing to release: the thread's producer outlives its tasks."""

    def in_transaction(self, task_id: object) -> bool:
        return False

    def poll(self) -> None:
        self.collector.poll()

    def send_now(self) -> None:
        """The thread ran out of input: its records leave without waiting out the linger."""
        self.collector.send_now()

    def unconfirmed_tasks(self) -> set[Any]:
        """Commit step 5 is exactly-once's: no task ever waits for its offsets to show."""
        return set()

    def confirm_commits(self, consumer: object) -> set[Any]:
        return set()

    def commit_tasks(
        self, commits: list[tuple[Any, list[Any]]], consumer: object, task_timeout_ms: int
    ) -> list[Any]:
        """Commit steps 2-3 for ``(task_id, offsets)`` pairs: wait for every acknowledgement of
        the thread's producer, then commit all input offsets at once. Returns True per task; an
        error is raised (the thread fails; no offset was committed past an unacknowledged
        output)."""
        self.collector.wait_for_acks(task_timeout_ms)  # Step 2
        offsets = [tp for _, task_offsets in commits for tp in task_offsets]
        if offsets:  # Step 3
            commit_offsets(consumer, offsets, task_timeout_ms)
        return [True] * len(commits)

    def wait_for_acks(self, task_timeout_ms: int = 0) -> None:
        self.collector.wait_for_acks(task_timeout_ms)

    def close(self, timeout_s: float = 10.0) -> None:
        self.collector.close(timeout_s)


def commit_offsets(consumer: Any, offsets: list[Any], task_timeout_ms: int) -> None:
    """At-least-once commit step 3, retried through an outage for up to ``task_timeout_ms`` (a
    retriable error, or a timeout, is not the end: the offsets are committed again once the broker
    answers). Each retry is an outage signal, logged once per outage (:mod:`~streams_runtime.kafka.outage`),
    and at DEBUG."""
    deadline = time.monotonic() + task_timeout_ms / 1000
    while True:
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
            broker_outage().reachable()
            return
        except KafkaException as exc:
            err = exc.args[0]
            if err.fatal() or not _transient(err) or time.monotonic() >= deadline:
                raise StreamsError(
                    f"committing input offsets failed: {err} (task_timeout_ms={task_timeout_ms})"
                ) from exc
            broker_outage().unreachable(f"committing input offsets: {err.str()}")
            log.debug("committing input offsets failed (%s); retrying", err)
            time.sleep(0.5)


#: offset-commit errors an outage causes; anything else (e.g. the member was fenced) fails at once
_TRANSIENT_COMMIT_ERRORS = (
    UNREACHABLE_ERRORS
    | COORDINATOR_ERRORS
    | {
        KafkaError._WAIT_COORD,  # noqa: SLF001
        KafkaError.NETWORK_EXCEPTION,
    }
)


def _transient(err: Any) -> bool:
    return bool(err.retriable() or err.code() in _TRANSIENT_COMMIT_ERRORS)
