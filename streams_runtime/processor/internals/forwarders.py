"""How a record crosses an edge of a task's topology, and what happens when the child raises.

One rule for every edge (Kafka Streams' ``ProcessorNode.process``): an exception raised in a
child goes to the task's processing exception handler with the child's name, the record it was
given and the source record's metadata, unless it is not the record's fault
(:data:`NOT_THE_RECORDS_FAULT`: it passes untouched) or the task runs no processor (a standby
task: no handler, it passes too). :meth:`RecordForwarding.edge_failed` is that rule; every way a
record is forwarded below ends its ``except`` in it.

The ways, each made once per node when its processor is initialized (nothing is made per
record), by :meth:`RecordForwarding.forward_of`:

- the general ``forward`` (:meth:`RecordForwarding.forward`): makes each child and the record
  current, calls the child, restores the parent;
- a node with one child gets a ``forward`` bound to it (no lookup, no loop);
- a node whose only child reads nothing of the context (:func:`runs_without_context`: a sink with
  a fixed topic, a ``context_free`` DSL processor with one child) gets a light edge: the child's
  ``process`` is called without making it current;
- a source gets :meth:`RecordForwarding.source_forwarder`: the task's processing loop hands it
  each input record with its topic, partition and offset.

:class:`RecordForwarding` holds what the forwarding changes (the node being executed, the record
and its source position); :class:`~.context.ProcessorContextImpl` is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from streams_runtime.errors import (
    ProductionError,
    StreamsError,
    StreamsProcessingError,
    TaskMigratedError,
    TransactionError,
)
from streams_runtime.processor.api import Processor, Record, RecordMetadata
from streams_runtime.processor.internals.handlers import ProcessingHandler
from streams_runtime.processor.internals.nodes import ProcessorNode, SinkNode

__all__ = ["NOT_THE_RECORDS_FAULT", "Forward", "RecordForwarding", "runs_without_context"]

#: errors that pass a processor's forward untouched: not the record's fault
NOT_THE_RECORDS_FAULT = (StreamsProcessingError, TaskMigratedError, TransactionError, ProductionError)


def runs_without_context(node: ProcessorNode) -> bool:
    """The node reads nothing of the context when it processes a record: a sink with a fixed
    topic, or a processor that says it is ``context_free`` and has exactly one child (its
    forward is then bound to that child, never the generic one that reads the current node)."""
    processor = node.processor
    if processor is None:
        return isinstance(node, SinkNode) and node.topic_extractor is None  # a sink with a fixed topic
    # a processor that does not extend Processor (any object with ``process``) is never context-free
    return isinstance(processor, Processor) and processor.context_free and len(node.children) == 1


#: a node's forward: ``forward(record, child_name=None)``
Forward = Callable[..., None]


class RecordForwarding:
    """The record being processed, the node executing it, and the edges between nodes (see the
    module docstring). The owner sets the attributes below when it is created."""

    _handler: ProcessingHandler | None
    _node: ProcessorNode | None
    _record: Record | None
    _topic: str | None
    _partition: int
    _offset: int
    _record_context_memo: Any
    _forwarders: dict[str, Forward]

    def set_source(self, topic: str | None, partition: int, offset: int, record: Record | None) -> None:
        self._record_context_memo = None
        self._topic = topic
        self._partition = partition
        self._offset = offset
        self._record = record

    def record_metadata(self) -> RecordMetadata | None:
        if self._topic is None:
            return None
        return RecordMetadata(self._topic, self._partition, self._offset)

    # ------------------------------------------------------------------ the rule of every edge
    def edge_failed(self, exc: Exception, child_name: str, record: Record) -> None:
        """``exc`` was raised by the child ``child_name`` given ``record``: the processing handler
        decides, or ``exc`` passes (not the record's fault, or a standby task)."""
        handler = self._handler
        if handler is None or isinstance(exc, NOT_THE_RECORDS_FAULT):
            raise exc
        handler.handle(exc, child_name, record, self.record_metadata())

    def _failure_of(self, child: ProcessorNode) -> Callable[[Exception, Record], None]:
        name, edge_failed = child.name, self.edge_failed

        def child_failed(exc: Exception, record: Record) -> None:
            edge_failed(exc, name, record)

        return child_failed

    # ------------------------------------------------------------------ the general edge
    def forward(self, record: Record, child_name: str | None = None) -> None:
        node = self._node
        if node is None:
            raise StreamsError("forward() was called outside of a processor (no node is being executed)")
        children: Sequence[ProcessorNode]
        if child_name is None:
            children = node.children
        else:
            child = node.child_by_name.get(child_name)
            if child is None:
                raise StreamsError(
                    f"unknown downstream node {child_name!r}: it does not exist or is "
                    f"not a child of processor {node.name}"
                )
            children = (child,)
        previous_record = self._record
        self._record = record
        for child in children:
            self._node = child
            try:
                child.process(record)
            except Exception as exc:
                self.edge_failed(exc, child.name, record)
        self._node = node
        self._record = previous_record

    # ------------------------------------------------------------------ a node's edges, made once
    def forward_of(self, node: ProcessorNode | None) -> Forward:
        """The forward of ``node``'s processor (``node`` is being initialized), made once per
        node: the general :meth:`forward` for a node with several or no children (or no node);
        for one child a ``forward`` bound to it, light when the child runs without the context
        (see the module docstring)."""
        if node is None:
            return self.forward
        made = self._forwarders.get(node.name)
        if made is None:
            made = self._forwarders[node.name] = self._make_forward(node)
        return made

    def _make_forward(self, node: ProcessorNode) -> Forward:
        generic = self.forward
        if len(node.children) != 1:
            return generic
        child = node.children[0]
        process, failed = child.process, self._failure_of(child)
        if runs_without_context(child):
            # the child is called without making it and its record current (the parent's stay
            # current, which nothing below reads before the next full edge sets its own)
            def light_forward(record: Record, child_name: str | None = None) -> None:
                if child_name is not None:
                    generic(record, child_name)
                    return
                try:
                    process(record)
                except Exception as exc:
                    failed(exc, record)

            return light_forward

        def forward(record: Record, child_name: str | None = None) -> None:
            if child_name is not None:
                generic(record, child_name)
                return
            previous_node = self._node
            if previous_node is None:
                generic(record)  # raises: no node is being executed
            previous_record = self._record
            self._record = record
            self._node = child
            try:
                child.process(record)
            except Exception as exc:
                failed(exc, record)
            self._node = previous_node
            self._record = previous_record

        return forward

    def source_forwarder(self, source: ProcessorNode) -> Callable[[str, int, int, Record], None]:
        """``forward(topic, partition, offset, record)``: one source record into the topology
        from ``source``, the same steps as :meth:`set_source`, making ``source`` current and
        :meth:`forward` (its only child called directly when it has one), in one frame: the
        processing loop of a task calls it per input record."""
        child = source.only_child
        if child is None:
            set_source, forward = self.set_source, self.forward

            def forward_from_source(topic: str, partition: int, offset: int, record: Record) -> None:
                set_source(topic, partition, offset, record)
                self._node = source
                try:
                    forward(record)
                finally:
                    self._node = None

            return forward_from_source
        process, failed = child.process, self._failure_of(child)

        def forward_to_child(topic: str, partition: int, offset: int, record: Record) -> None:
            self._record_context_memo = None
            self._topic = topic
            self._partition = partition
            self._offset = offset
            self._record = record
            self._node = child
            try:
                process(record)
            except Exception as exc:
                failed(exc, record)
            finally:
                self._node = None

        return forward_to_child
