"""Exception handlers: what happens to a record that cannot be deserialized or processed.

Deserialization (config ``default_deserialization_exception_handler``):
  - ``log_and_fail`` (default): log, raise DeserializationFailedError naming topic/partition/offset.
  - ``log_and_continue``: log, count in ``dropped-records``, skip the record.
  - ``dead_letter``: send the raw record to ``dead_letter_topic`` with headers naming the error
    (Kafka Streams' KIP-1034 names: ``__streams.errors.exception``, ``.message``, ``.stacktrace``,
    ``.topic``, ``.partition``, ``.offset``), log, count, skip. Nothing is lost: a stream task
    sends through its thread's collector, the global task through the GlobalStreamThread's
    (whose producer is created on the first dead-letter record). The dead-letter record is
    bounded so the producer always accepts it: the message header is cut to
    :data:`MAX_MESSAGE_HEADER` bytes and the stack trace to :data:`MAX_STACKTRACE_HEADER` (its
    head and its tail, the lines that name the error); when the record would still exceed the
    producer's ``message.max.bytes``, its value is dropped and ``__streams.errors.value.dropped``
    says how many bytes it had (the original stays in the source topic at the offset named by the
    headers); a key too large goes the same way (``__streams.errors.key.dropped``).
Processing (config ``processing_exception_handler``), invoked at the processor that raised:
  - ``log_and_fail`` (default): raise StreamsProcessingError naming node, task and source record.
  - ``log_and_continue``: log, count in ``dropped-records``, and go on with the next sibling.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import DeserializationFailedError, StreamsProcessingError
from streams_runtime.processor.api import Headers, RecordMetadata
from streams_runtime.processor.internals.metrics import Sensor
from streams_runtime.processor.internals.record_collector import record_size
from streams_runtime.processor.task_id import TaskId

if TYPE_CHECKING:  # the context module imports this one
    from streams_runtime.processor.internals.context import RecordSender

log = logging.getLogger("streams_runtime.processor")

DLQ_EXCEPTION = "__streams.errors.exception"
DLQ_MESSAGE = "__streams.errors.message"
DLQ_STACKTRACE = "__streams.errors.stacktrace"
DLQ_TOPIC = "__streams.errors.topic"
DLQ_PARTITION = "__streams.errors.partition"
DLQ_OFFSET = "__streams.errors.offset"
DLQ_VALUE_DROPPED = "__streams.errors.value.dropped"
DLQ_KEY_DROPPED = "__streams.errors.key.dropped"

#: the largest error message and stack trace headers a dead-letter record carries (bytes)
MAX_MESSAGE_HEADER = 1024
MAX_STACKTRACE_HEADER = 4096
#: room kept under ``message.max.bytes`` for the headers added when a value or key is dropped
_DROP_HEADER_ROOM = 256


def _cut(text: bytes, limit: int) -> bytes:
    """``text`` at most ``limit`` bytes: its head and tail around a marker saying what was cut."""
    if len(text) <= limit:
        return text
    marker = f"\n... [{len(text) - limit} bytes cut] ...\n".encode()
    keep = max(0, limit - len(marker))
    head = keep // 3
    return text[:head] + marker + text[len(text) - (keep - head) :]


def dead_letter_headers(exc: BaseException, topic: str, partition: int, offset: int) -> Headers:
    """The error headers attached to a dead-lettered record (message and stack trace bounded)."""
    return (
        (DLQ_EXCEPTION, type(exc).__qualname__.encode()),
        (DLQ_MESSAGE, _cut(str(exc).encode(), MAX_MESSAGE_HEADER)),
        (DLQ_STACKTRACE, _cut("".join(traceback.format_exception(exc)).encode(), MAX_STACKTRACE_HEADER)),
        (DLQ_TOPIC, topic.encode()),
        (DLQ_PARTITION, str(partition).encode()),
        (DLQ_OFFSET, str(offset).encode()),
    )


def bounded_dead_letter(
    key: bytes | None, value: bytes | None, headers: Headers, max_bytes: int
) -> tuple[bytes | None, bytes | None, Headers]:
    """The dead-letter record ``(key, value, headers)`` made to fit under ``max_bytes`` (the
    producer's ``message.max.bytes``): the value is dropped first, then the key, each with a
    header naming its size; the original record's own headers go last if still too large."""
    budget = max_bytes - _DROP_HEADER_ROOM
    if record_size(key, value, headers) <= budget:
        return key, value, headers
    if value is not None:
        headers = (*headers, (DLQ_VALUE_DROPPED, f"{len(value)} bytes".encode()))
        value = None
    if record_size(key, value, headers) > budget and key is not None:
        headers = (*headers, (DLQ_KEY_DROPPED, f"{len(key)} bytes".encode()))
        key = None
    if record_size(key, value, headers) > budget:  # the source record's own headers are too large
        headers = tuple(h for h in headers if h[0].startswith("__streams.errors."))
    return key, value, headers


class DeserializationHandler:
    """Applies the configured deserialization policy for one task."""

    def __init__(
        self,
        mode: str,
        dead_letter_topic: str | None,
        dropped: Sensor,
        collector: RecordSender,
        task_id: TaskId,
        dead_lettered: Callable[[], Sensor] | None = None,
    ) -> None:
        self.mode = mode
        self.dead_letter_topic = dead_letter_topic
        self._dropped = dropped
        self._dead_lettered = dead_lettered  # the sensor, made on the first dead-letter record
        self._collector = collector
        self._task_id = task_id

    def handle(self, exc: BaseException, msg: Any) -> None:
        """Called for a corrupt record (``msg``: a consumed client message, or a
        :class:`~.partition_group.RawRecord`); returns to skip it or raises to fail."""
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        where = f"topic={topic} partition={partition} offset={offset}"
        if self.mode == "log_and_fail":
            log.error("Deserialization error in task %s, %s: %s", self._task_id, where, exc)
            raise DeserializationFailedError(
                f"deserialization failed for the record at {where} in task {self._task_id}: {exc} "
                f"(default_deserialization_exception_handler=log_and_fail)"
            ) from exc
        if self.mode == "dead_letter":
            if self.dead_letter_topic is None:  # the config requires one with this mode
                raise DeserializationFailedError(f"no dead_letter_topic to send the record at {where} to")
            max_bytes = getattr(self._collector, "max_message_bytes", 1_000_000)
            key, value, all_headers = bounded_dead_letter(
                msg.key(),
                msg.value(),
                tuple(msg.headers() or ()) + dead_letter_headers(exc, topic, partition, offset),
                max_bytes,
            )
            timestamp = msg.timestamp()[1]
            self._collector.send(self.dead_letter_topic, key, value, all_headers, max(timestamp, 0), None)
            log.warning(
                "Deserialization error in task %s, %s: %s; record sent to dead-letter topic %s",
                self._task_id,
                where,
                exc,
                self.dead_letter_topic,
            )
            if self._dead_lettered is not None:
                self._dead_lettered().record()
        else:
            log.warning(
                "Deserialization error in task %s, %s: %s; record skipped "
                "(default_deserialization_exception_handler=log_and_continue)",
                self._task_id,
                where,
                exc,
            )
        self._dropped.record()


class ProcessingHandler:
    """Applies the configured processing-error policy for one task."""

    def __init__(self, mode: str, dropped: Sensor, task_id: TaskId) -> None:
        self.continue_on_error = mode == "log_and_continue"
        self._dropped = dropped
        self._task_id = task_id

    def handle(
        self, exc: BaseException, node_name: str, record: object, metadata: RecordMetadata | None
    ) -> None:
        where = (
            f"topic={metadata.topic} partition={metadata.partition} offset={metadata.offset}"
            if metadata is not None and metadata.topic is not None
            else "no source record (punctuation)"
        )
        if not self.continue_on_error:
            log.error(
                "Processing error in task %s at processor %s (%s): %r", self._task_id, node_name, where, exc
            )
            raise StreamsProcessingError(
                f"exception caught in process: task {self._task_id}, processor {node_name}, {where}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        log.warning(
            "Processing error in task %s at processor %s (%s): %r; record skipped "
            "(processing_exception_handler=log_and_continue)",
            self._task_id,
            node_name,
            where,
            exc,
        )
        self._dropped.record()
