"""Runtime nodes of one task's topology: ProcessorNode, SourceNode, SinkNode, and ProcessorTopology.

Created per task by ``build_processor_topology`` from the InternalTopologyBuilder's factories
(one fresh Processor instance per node per task). Children lists are computed once, in the
order Kafka Streams uses (node insertion order), so forwarding on the hot path is a list walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.errors import StreamsError, TopologyError
from streams_runtime.processor.internals.topology_builder import (
    InternalTopologyBuilder,
    ProcessorFactory,
    SinkFactory,
    SourceFactory,
)
from streams_runtime.serdes import bytes_encoder

if TYPE_CHECKING:  # the context module imports this one
    from streams_runtime.processor.api import Record
    from streams_runtime.processor.internals.context import InternalProcessorContext, RecordSender


class NodeProcessor(Protocol):
    """What a node needs of its processor: ``process`` (``init`` and ``close`` are optional)."""

    def process(self, record: object) -> None: ...


class ProcessorNode:
    """A processor with its children; ``process`` is the processor's bound ``process``."""

    __slots__ = (
        "name",
        "processor",
        "children",
        "child_by_name",
        "only_child",
        "stores",
        "process",
        "fixed_key",
    )

    def __init__(
        self, name: str, processor: NodeProcessor | None, stores: Iterable[str] = (), fixed_key: bool = False
    ) -> None:
        self.name = name
        self.processor = processor
        self.children: list[ProcessorNode] = []
        self.child_by_name: dict[str, ProcessorNode] = {}
        self.only_child: ProcessorNode | None = None  # the child when there is exactly one
        self.stores = frozenset(stores)
        self.fixed_key = fixed_key
        self.process: Callable[[Any], None] = processor.process if processor is not None else _no_op

    def add_child(self, child: ProcessorNode) -> None:
        self.children.append(child)
        self.child_by_name[child.name] = child
        self.only_child = child if len(self.children) == 1 else None

    def init(self, context: InternalProcessorContext) -> None:
        if self.processor is not None:
            init = getattr(self.processor, "init", None)
            if init is not None:
                try:
                    init(context)
                except Exception as exc:
                    raise StreamsError(f"failed to initialize processor {self.name}: {exc}") from exc

    def close(self) -> None:
        if self.processor is not None:
            close = getattr(self.processor, "close", None)
            if close is not None:
                close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


def _no_op(record: object) -> None:
    return None


class SourceNode(ProcessorNode):
    """Reads one or more topics; deserialization happens in the task's RecordQueue."""

    __slots__ = ("topics", "key_serde", "value_serde", "timestamp_extractor")

    def __init__(self, factory: SourceFactory) -> None:
        super().__init__(factory.name, None)
        self.topics = list(factory.topics)
        self.key_serde = factory.key_serde
        self.value_serde = factory.value_serde
        self.timestamp_extractor = factory.timestamp_extractor

    def init(self, context: InternalProcessorContext) -> None:
        # A source forwards what it receives: process == context.forward while it is current.
        self.process = context.forward


class SinkNode(ProcessorNode):
    """Serializes and hands records to the task's RecordCollector (the producer side)."""

    __slots__ = (
        "topic",
        "topic_extractor",
        "key_serde",
        "value_serde",
        "partitioner",
        "_context",
        "_collector",
        "_decorate",
        "_serialize",
        "_key_to_bytes",
        "_value_to_bytes",
        "_key_encode",
        "_value_encode",
    )

    def __init__(self, factory: SinkFactory, decorate: Callable[[str], str]) -> None:
        super().__init__(factory.name, None)
        self.topic = decorate(factory.topic) if factory.topic is not None else None
        self.topic_extractor = factory.topic_extractor
        self.key_serde = factory.key_serde
        self.value_serde = factory.value_serde
        self.partitioner = factory.partitioner
        self._decorate = decorate
        self.process = self._send

    def bind(
        self,
        context: InternalProcessorContext,
        collector: RecordSender,
        serialize: Callable[..., bytes | None],
    ) -> None:
        self._context = context
        self._collector = collector
        self._serialize = serialize
        # the serdes are resolved by now (the task sets them just before binding)
        self._key_to_bytes = self.key_serde.serialize
        self._value_to_bytes = self.value_serde.serialize
        # C functions for the serdes that have them (Json, String, Bytes): no Python call per field
        self._key_encode = bytes_encoder(self.key_serde)
        self._value_encode = bytes_encoder(self.value_serde)

    def _send(self, record: Record) -> None:
        topic = self.topic
        if topic is None:
            extractor = self.topic_extractor
            if extractor is not None:
                topic = extractor(record.key, record.value, self._context.record_context())
            if not isinstance(topic, str) or not topic:
                raise StreamsError(f"sink {self.name}: topic chooser returned {topic!r}, not a topic name")
            topic = self._decorate(topic)
        if record.timestamp < 0:
            raise StreamsError(
                f"sink {self.name}: invalid (negative) timestamp {record.timestamp} for topic {topic}"
            )
        # the serdes' C encoders when both sides have one and neither is null (the hot path of
        # every output record), else the serdes; after a failure the bound ``serialize`` runs
        # again to raise its error (it names topic, side and serde)
        key, value = record.key, record.value
        key_encode, value_encode = self._key_encode, self._value_encode
        try:
            if key_encode is None or value_encode is None or key is None or value is None:
                key, value = self._key_to_bytes(topic, key), self._value_to_bytes(topic, value)
            else:
                key, value = key_encode(key), value_encode(value)
        except Exception:
            serialize = self._serialize
            key = serialize(self.key_serde, topic, "key", record.key)
            value = serialize(self.value_serde, topic, "value", record.value)
        partitioner = self.partitioner
        partition = None if partitioner is None else partitioner(topic, record.key, record.value)
        self._collector.send(topic, key, value, record.headers, record.timestamp, partition)


@dataclass
class ProcessorTopology:
    """The runtime nodes of one task (or of the global state), wired and ready to init."""

    nodes: dict[str, ProcessorNode]
    sources_by_topic: dict[str, SourceNode]  # real (decorated) topic -> source
    store_names: list[str] = field(default_factory=list)  # in registration (topological) order
    global_store_names: list[str] = field(default_factory=list)
    source_patterns: list[tuple[re.Pattern[str], SourceNode]] = field(default_factory=list)  # (regex, source)

    def source_for_pattern_topic(self, topic: str) -> SourceNode | None:
        """The pattern source reading ``topic`` (a topic not read by name), or None."""
        if topic in self.sources_by_topic:
            return None
        for pattern, source in self.source_patterns:
            if pattern.fullmatch(topic):
                return source
        return None

    @property
    def sinks(self) -> list[SinkNode]:
        return [n for n in self.nodes.values() if isinstance(n, SinkNode)]

    def sink_topics(self) -> set[str]:
        return {s.topic for s in self.sinks if s.topic is not None}


def _instantiate(factory: ProcessorFactory) -> NodeProcessor:
    supplier = factory.supplier
    get = getattr(supplier, "get", None)
    processor: NodeProcessor = get() if callable(get) and not isinstance(supplier, type) else supplier()
    if not callable(getattr(processor, "process", None)):
        raise TopologyError(
            f"processor {factory.name}: supplier returned {processor!r}, which has no process()"
        )
    return processor


def build_processor_topology(
    builder: InternalTopologyBuilder, node_names: Iterable[str], decorate: Callable[[str], str] | None = None
) -> ProcessorTopology:
    """Instantiate the nodes named (e.g. one sub-topology, or all non-global nodes).

    ``decorate`` maps declared topic names to real ones (default: the builder's application id).
    """
    decorate = decorate or builder.decorate
    wanted = set(node_names)
    nodes: dict[str, ProcessorNode] = {}
    sources: dict[str, SourceNode] = {}
    patterns: list[tuple[re.Pattern[str], SourceNode]] = []
    stores: list[str] = []
    for name, factory in builder.nodes.items():  # insertion order == Kafka's child order
        if name not in wanted:
            continue
        if isinstance(factory, SourceFactory):
            source = SourceNode(factory)
            for topic in factory.topics:
                sources[decorate(topic)] = source
            if factory.pattern is not None:
                patterns.append((factory.pattern, source))
            node: ProcessorNode = source
        elif isinstance(factory, SinkFactory):
            node = SinkNode(factory, decorate)
        else:
            node = ProcessorNode(name, _instantiate(factory), factory.stores, factory.fixed_key)
            stores.extend(s for s in factory.stores if s not in stores)
        for parent in getattr(factory, "parents", ()):
            if parent in nodes:
                nodes[parent].add_child(node)
        nodes[name] = node
    globals_ = [s for s, e in builder.stores.items() if e.is_global]
    topology = ProcessorTopology(nodes, sources, stores, globals_)
    topology.source_patterns = patterns
    return topology
