"""InternalProcessor: the base of the DSL's processors, which see their task's context with its
internal members (the node being executed, the record context, the partition, the metrics).

Kafka Streams' DSL processors cast the ProcessorContext they are given to its
InternalProcessorContext; here the cast is :func:`internal_context` and the narrowed type is
the ``context`` attribute's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.processor.api import Processor, ProcessorContext, Record
from streams_runtime.processor.internals.context import (
    InternalProcessorContext,
    RecordContext,
    internal_context,
)

__all__ = [
    "InternalProcessor",
    "InternalProcessorContext",
    "ProcessorContext",
    "current_node_name",
    "flushed_timestamp",
    "internal_context",
    "node_child",
    "node_forward",
]


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


def node_forward(context: InternalProcessorContext) -> Callable[..., None]:
    """The ``forward`` a processor binds in ``init`` (its node is current): the runtime's
    context gives one bound to the node's children; any other context its own ``forward``."""
    forward_of = getattr(context, "forward_of", None)
    if forward_of is None:
        return context.forward
    forward: Callable[..., Any] = forward_of(context.current_node)
    return forward


def node_child(
    context: InternalProcessorContext,
) -> tuple[Callable[[Record], None], Callable[[Exception, Record], None]]:
    """``(child, failed)`` for a processor with one forward per record (its node is current):
    it calls ``child(record)`` inside ``try`` and ``failed(exc, record)`` in ``except Exception``.
    On the runtime's context with a light edge to the only child that is the child's own
    ``process`` and the edge's error handling (``ProcessorContextImpl.direct_child_of``);
    otherwise the bound ``forward`` (which handles its children's errors) and a re-raise."""
    direct_child_of = getattr(context, "direct_child_of", None)
    if direct_child_of is not None:
        direct = direct_child_of(context.current_node)
        if direct is not None:
            child: tuple[Callable[[Record], None], Callable[[Exception, Record], None]] = direct
            return child
    return node_forward(context), _raise_again


def _raise_again(exc: Exception, record: Record) -> None:
    raise exc


class InternalProcessor(Processor):
    """A processor of the DSL: ``self.context`` is the task's internal context once initialized.

    ``context_free``: ``process`` reads nothing of the context (not the node being executed, not
    the record context) and forwards only through the forward bound in ``init``; the runtime may
    then call it from its parent without making its node and record current (one edge of a DSL
    chain costs a call, see ``ProcessorContextImpl.forward_of``).
    """

    context_free = False

    context: InternalProcessorContext

    def init(self, context: ProcessorContext) -> None:
        self.context = internal_context(context)
