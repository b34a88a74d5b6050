"""Exceptions raised by streams_runtime.

Every error a user can cause says what was wrong and what is allowed: a config error names the
key and the allowed values, a serialization error names the topic, the side and the serde, a
topology error names the node.
"""

from __future__ import annotations


class StreamsError(Exception):
    """Base class of every error raised by streams_runtime."""


class StreamsConfigError(StreamsError, ValueError):
    """A configuration value is missing, unknown or out of range."""


class TopologyError(StreamsError):
    """The topology is invalid (unknown parent, duplicate name, store not connected, ...)."""


class BrokerError(StreamsError):
    """The embedded broker could not be started, reached or stopped."""


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
            f"failed to {operation} the {side} of a record for topic {topic!r} "
            f"with serde {serde}{detail}"
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


class TimestampError(StreamsError):
    """The timestamp extractor returned an invalid (negative) timestamp and was told to fail."""


class InvalidStateStoreError(StreamsError, LookupError):
    """A processor asked for a state store that does not exist or is not connected to it."""


class NoSuchElementError(StreamsError, LookupError):
    """A TestOutputTopic was read while empty."""
