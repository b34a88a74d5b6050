"""FixedKeyProcessor and FixedKeyProcessorContext: processors that may change values, never keys
(Kafka Streams 3.3+, used by ``KStream.process_values``).

A FixedKeyProcessor receives :class:`FixedKeyRecord` s and forwards FixedKeyRecords only, made
from the one it got (``record.with_value(...)``, ``with_timestamp``, ``with_headers``): the key
cannot change, so a stream stays partitioned as it was and no repartition is needed downstream.
Its context is a :class:`FixedKeyProcessorContext`: the processor context whose ``forward``
refuses any other record with a TypeError.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from streams_runtime.processor.api import FixedKeyRecord, ProcessorContext

__all__ = ["ContextualFixedKeyProcessor", "FixedKeyProcessor", "FixedKeyProcessorContext", "FixedKeyRecord"]


class FixedKeyProcessorContext:
    """The context a FixedKeyProcessor sees: everything of the task's context, and a ``forward``
    that takes FixedKeyRecords only."""

    def __init__(self, delegate: ProcessorContext) -> None:
        self._delegate = delegate

    def forward(self, record: FixedKeyRecord, child_name: str | None = None) -> None:
        if not isinstance(record, FixedKeyRecord):
            raise TypeError(
                "a FixedKeyProcessor forwards FixedKeyRecords only (record.with_value(...) of the record "
                f"it was given); got {type(record).__name__}"
            )
        self._delegate.forward(record, child_name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._delegate, name)


class FixedKeyProcessor(ABC):
    """A processor for ``process_values``: override ``process``; ``init``/``close`` are optional."""

    def init(self, context: FixedKeyProcessorContext) -> None:  # noqa: B027 - optional hook
        """Called once per task before any record."""

    @abstractmethod
    def process(self, record: FixedKeyRecord) -> None:
        """Handle one record; forward ``record.with_value(...)`` through the context."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; stores are closed by the runtime."""


class ContextualFixedKeyProcessor(FixedKeyProcessor):
    """A FixedKeyProcessor keeping its context as ``self.context`` (Kafka's ContextualFixedKeyProcessor)."""

    context: FixedKeyProcessorContext | None = None

    def init(self, context: FixedKeyProcessorContext) -> None:
        self.context = context
