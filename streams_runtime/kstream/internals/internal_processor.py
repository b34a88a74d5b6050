"""InternalProcessor: the base of the DSL's processors, which see their task's context with its
internal members (the node being executed, the record context, the partition, the metrics).

Kafka Streams' DSL processors cast the ProcessorContext they are given to its
InternalProcessorContext; here the cast is :func:`internal_context` and the narrowed type is
the ``context`` attribute's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.errors import StreamsError
from streams_runtime.processor.api import Processor, ProcessorContext, Record
from streams_runtime.processor.internals.context import (
    InternalProcessorContext,
    RecordContext,
    internal_context,
)
from streams_runtime.processor.internals.forwarders import Forward

if TYPE_CHECKING:
    from streams_runtime.processor.internals.metrics import Sensor

__all__ = [
    "InternalProcessor",
    "InternalProcessorContext",
    "ProcessorContext",
    "RecordContext",
    "current_node_name",
    "flushed_timestamp",
    "internal_context",
    "join_null_input",
    "node_forward",
    "skip_null",
]

log = logging.getLogger("streams_runtime.kstream")


def skip_null(context: InternalProcessorContext, dropped: Sensor, what: str) -> None:
    """A record skipped for a null ``what`` (``"key"``, ``"key or value"``, ...): logged as
    Kafka Streams logs it, and counted by the ``dropped`` sensor."""
    meta = context.record_metadata()
    if meta is not None:
        log.warning("Skipping record due to null %s. topic=[%s] partition=[%s] offset=[%s]", what, *meta)
    else:
        log.warning("Skipping record due to null %s. Topic, partition, and offset not known.", what)
    dropped.record()


class NullJoinSide(Protocol):
    """What :func:`join_null_input` reads of a join processor."""

    context: InternalProcessorContext
    dropped: Sensor
    forward: Callable[..., None]
    joiner: Callable[[Any, Any, Any], Any]


def join_null_input(side: NullJoinSide, record: Record, join_key: object, keeps: bool, what: str) -> None:
    """A join's input record whose join key or value is null: a join that ``keeps`` such records
    (a left or outer join) emits one with a null key and a value joined with null, as Kafka
    Streams does; any other is skipped (:func:`skip_null`). Called only for such a record, so
    the processing path of every other pays nothing."""
    value = record.value
    if keeps and join_key is None and value is not None:
        side.forward(record.with_value(side.joiner(record.key, value, None)))
    else:
        skip_null(side.context, side.dropped, what)


def current_node_name(context: InternalProcessorContext) -> str:
    """The name of the node being executed (its processor's ``init`` runs as that node)."""
    node = context.current_node
    if node is None:
        raise StreamsError("no processor node is being executed")
    return node.name


def flushed_timestamp(record_context: RecordContext | None) -> int:
    """The timestamp of the entry a cache flush forwards (the flush sets each entry's record context)."""
    if record_context is None:
        raise StreamsError("a cache flush forwarded an entry without its record context")
    return record_context.timestamp


def node_forward(context: InternalProcessorContext) -> Forward:
    """The ``forward`` a processor binds in ``init`` (its node is current): the runtime's context
    makes it once per node (:mod:`streams_runtime.processor.internals.forwarders`: a forward bound
    to a node's only child, light when the child reads nothing of the context); any other
    context gives its own ``forward``."""
    forward_of = getattr(context, "forward_of", None)
    if forward_of is None:
        return context.forward
    forward: Forward = forward_of(context.current_node)
    return forward


class InternalProcessor(Processor):
    """A processor of the DSL: ``self.context`` is the task's internal context once initialized.

    ``context_free``: ``process`` reads nothing of the context (not the node being executed, not
    the record context) and forwards only through the forward bound in ``init``; the runtime may
    then call it from its parent without making its node and record current (one edge of a DSL
    chain costs a call, see :mod:`streams_runtime.processor.internals.forwarders`).
    """

    context_free = False

    context: InternalProcessorContext

    def init(self, context: ProcessorContext) -> None:
        self.context = internal_context(context)
