"""Exceptions raised by streams_runtime.

Every error a user can cause says what was wrong and what is allowed: a config error names the
key and the allowed values, a serialization error names the topic, the side and the serde, a
topology error names the node.
"""

from __future__ import annotations

from collections.abc import Iterable


class StreamsError(Exception):
    """Base class of every error raised by streams_runtime."""


class StreamsConfigError(StreamsError, ValueError):
    """A configuration value is missing, unknown or out of range."""


class TopologyError(StreamsError):
    """The topology is invalid (unknown parent, duplicate name, store not connected, ...)."""


class BrokerError(StreamsError):
    """The embedded broker could not be started, reached or stopped."""


class MissingSourceTopicError(StreamsError):
    """A source topic of the topology does not exist (not created yet, or deleted): Kafka Streams'
    ``MissingSourceTopicException``. Raised by ``KafkaStreams.start()`` before anything is read,
    its message naming every missing topic of the application (sinks too) and how to create it."""


class MissingSinkTopicError(StreamsError):
    """A topic the topology writes by name (a sink's topic, the dead-letter topic) does not exist.
    Raised by ``KafkaStreams.start()`` before anything is read or written, its message naming every
    missing topic and how to create it (Kafka Streams finds this out only on the first send)."""


class SerializationError(StreamsError):
    """A serde failed to serialize or deserialize a key or a value.

    Raised by :func:`streams_runtime.serdes.serialize_or_raise` and
    :func:`streams_runtime.serdes.deserialize_or_raise`, which wrap whatever the serde raised; the
    original exception is kept as ``cause`` and as ``__cause__``.

    :param topic: the topic the data was read from or written to (a changelog topic for stores).
    :param side: ``"key"`` or ``"value"``.
    :param serde: the serde's name, e.g. ``"Serdes.Integer"``.
    :param cause: the exception the serde raised.
    :param operation: ``"serialize"`` or ``"deserialize"``.
    """

    def __init__(
        self,
        *,
        topic: str,
        side: str,
        serde: str,
        cause: BaseException | None = None,
        operation: str = "serialize",
    ) -> None:
        self.topic = topic
        self.side = side
        self.serde = serde
        self.cause = cause
        self.operation = operation
        detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        super().__init__(
            f"failed to {operation} the {side} of a record for topic {topic!r} with serde {serde}{detail}"
        )


class ProcessorStateError(StreamsError):
    """A state store could not be opened, written, flushed or restored (I/O or storage failure)."""


# --- DSL / runtime errors (owner: DSL/runtime engineer) ---


class StreamsProcessingError(StreamsError):
    """A processor raised and the processing exception handler said fail.

    The message names the processor node, the task and the source record's topic/partition/offset.
    """


class DeserializationFailedError(StreamsError):
    """A source record could not be deserialized and the handler said fail (log_and_fail)."""


class ApplicationShutdownRequestedError(StreamsError):
    """Another instance (or thread) of the application asked every instance to shut down
    (its uncaught-exception handler answered SHUTDOWN_APPLICATION); this client goes to ERROR."""


class SourcePartitioningError(StreamsError):
    """A keyed input record is not on the partition Kafka's default partitioner (murmur2 of the key
    bytes) gives its key, and ``source_partitioning_check`` is ``fail``. The message names the
    topic, the partition, the offset, the key and the partition it belongs on."""


class TimestampError(StreamsError):
    """The timestamp extractor returned an invalid (negative) timestamp and was told to fail."""


class InvalidStateStoreError(StreamsError, LookupError):
    """A state store cannot be used: a processor asked for a store that does not exist or is not
    connected to it, or an interactive query asked for a store that is not queryable here now."""


class UnknownStateStoreError(InvalidStateStoreError):
    """An interactive query named a store the topology does not have."""


class StreamsNotStartedError(InvalidStateStoreError):
    """An interactive query ran before the client started (or after it stopped)."""


class InvalidStateStorePartitionError(InvalidStateStoreError):
    """An interactive query asked for a partition of a store that is not hosted on this instance."""


class StateStoreMigratedError(InvalidStateStoreError):
    """The queried store partition is hosted here but migrating: its task restores (or waits for
    its state directory); retry, or ask the instance ``query_metadata_for_key`` names."""


class NoSuchElementError(StreamsError, LookupError):
    """A TestOutputTopic was read while empty."""


class TaskMigratedError(StreamsError):
    """Exactly-once: a task's transactional producer was fenced (a newer producer holds its
    transactional id), so the task belongs to someone else now; its thread closes it dirty and
    rejoins the group. Never given to the processing exception handler."""

    def __init__(self, task_ids: Iterable[object], message: str) -> None:
        super().__init__(message)
        self.task_ids = frozenset(task_ids)


class TaskCorruptedError(TaskMigratedError):
    """Exactly-once: a task's transaction cannot commit because a send or a transactional call
    timed out or failed with an abortable error (a cluster losing leaders or brokers); the
    transaction is aborted and, as for Kafka Streams' TaskCorruptedException, the task is closed
    dirty (its local state wiped and restored from the changelog) and picked up again from its
    last committed offsets. Handled as a migrated task; never given to the exception handlers."""


class TransactionError(StreamsError):
    """Exactly-once: a transaction failed for a reason other than fencing (it was aborted when it
    could be); the stream thread fails. Never given to the processing exception handler."""


class ProductionError(StreamsError):
    """A record could not be written to Kafka (a delivery report error, or ``produce`` refused it)
    and ``default_production_exception_handler`` is ``fail``. Never given to the processing
    exception handler: the production handler already decided."""


class CorruptedStoreError(ProcessorStateError):
    """A persistent store's files cannot be opened or fail their checksums (a file missing,
    truncated or damaged). The task's local state is thrown away and restored from the changelog;
    the error reaches the caller only when that fails too."""
