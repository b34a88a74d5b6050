"""InternalTopologyBuilder: the mutable graph behind Topology (sources, processors, sinks, stores).

Owned by one Topology (and the StreamsBuilder that produced it). Nodes are kept in insertion
order; that order decides sub-topology ids and the order children receive forwarded records,
exactly as in Kafka Streams. Sub-topologies are the connected components of the graph where
processors sharing a state store are also connected (a union-find over node names).

Validation happens where Kafka Streams does it: names and parents when a node is added (a
TopologyError naming the node), stores when connected, and at ``validate()`` (called by build,
describe and the runtime) for stores connected to no processor and co-partition groups naming
unknown sources. Partition-count checks of co-partition groups need the counts, so they run in
``topology_info.task_counts``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from streams_runtime.errors import TopologyError
from streams_runtime.processor.internals.internal_topics import InternalTopicConfig, decorate


@dataclass
class SourceFactory:
    name: str
    topics: list[str]
    key_serde: Any = None
    value_serde: Any = None
    timestamp_extractor: Any = None
    offset_reset: str | None = None
    is_global: bool = False
    parents: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = (
        None  # a compiled regular expression: reads every topic it fully matches
    )


@dataclass
class ProcessorFactory:
    name: str
    supplier: Callable[[], Any]
    parents: list[str]
    stores: list[str] = field(default_factory=list)
    fixed_key: bool = False


@dataclass
class SinkFactory:
    name: str
    topic: str | None
    topic_extractor: Callable[..., str] | None
    parents: list[str]
    key_serde: Any = None
    value_serde: Any = None
    partitioner: Callable[..., int | None] | None = None


@dataclass
class StoreEntry:
    builder: Any
    users: list[str] = field(default_factory=list)
    is_global: bool = False

    @property
    def name(self) -> str:
        return str(self.builder.name)

    @property
    def logging_enabled(self) -> bool:
        if self.is_global:
            return False
        flag = getattr(self.builder, "logging_enabled", True)
        return bool(flag() if callable(flag) else flag)

    @property
    def log_config(self) -> dict[str, str]:
        conf = getattr(self.builder, "log_config", None)
        conf = conf() if callable(conf) else conf
        return dict(conf or {})


class _UnionFind:
    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def add(self, item: str) -> None:
        self._parent.setdefault(item, item)

    def root(self, item: str) -> str:
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def unite(self, first: str, *others: str) -> None:
        root = self.root(first)
        for other in others:
            other_root = self.root(other)
            if other_root != root:
                self._parent[other_root] = root


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise TopologyError(f"{what} name must be a non-empty string, got {name!r}")
    return name


class InternalTopologyBuilder:
    """The graph under a Topology; see the module docstring for its rules."""

    def __init__(self, application_id: str | None = None) -> None:
        self.application_id = application_id
        self.nodes: dict[str, SourceFactory | ProcessorFactory | SinkFactory] = {}
        self.stores: dict[str, StoreEntry] = {}
        self.topic_to_source: dict[str, str] = {}
        self.internal_topics: dict[str, InternalTopicConfig] = {}
        self.copartition_groups: list[list[str]] = []
        self.global_topics: set[str] = set()
        self._grouper = _UnionFind()

    # ------------------------------------------------------------------ adding nodes
    def _check_new(self, name: str, what: str) -> None:
        _check_name(name, what)
        if name in self.nodes:
            raise TopologyError(f"{what} {name} is already added (duplicate node name)")

    def _check_parents(self, name: str, parents: Iterable[str]) -> list[str]:
        parents = list(parents)
        if not parents:
            raise TopologyError(f"node {name} must have at least one parent")
        for parent in parents:
            if parent == name:
                raise TopologyError(f"node {name} cannot be its own parent")
            factory = self.nodes.get(parent)
            if factory is None:
                raise TopologyError(f"parent node {parent} is not added yet for {name} (unknown parent)")
            if isinstance(factory, SinkFactory):
                raise TopologyError(f"sink {parent} cannot be used as a parent of {name}")
            if (
                isinstance(factory, SourceFactory)
                and factory.is_global
                or (isinstance(factory, ProcessorFactory) and self._is_global_node(parent))
            ):
                raise TopologyError(f"global node {parent} cannot be used as a parent of {name}")
        return parents

    def _is_global_node(self, name: str) -> bool:
        factory = self.nodes.get(name)
        if isinstance(factory, SourceFactory):
            return factory.is_global
        return any(self._is_global_node(p) for p in getattr(factory, "parents", ()))

    def add_source(
        self,
        name: str,
        topics: Iterable[str],
        *,
        key_serde: object = None,
        value_serde: object = None,
        timestamp_extractor: object = None,
        offset_reset: str | None = None,
        is_global: bool = False,
        pattern: object = None,
    ) -> None:
        self._check_new(name, "source")
        topics = list(topics)
        if pattern is not None:
            self._add_pattern_source(name, pattern, key_serde, value_serde, timestamp_extractor, offset_reset)
            return
        if not topics:
            raise TopologyError(f"source {name} must subscribe to at least one topic")
        for topic in topics:
            _check_name(topic, f"topic of source {name}: topic")
            for other in self.nodes.values():
                if (
                    isinstance(other, SourceFactory)
                    and other.pattern is not None
                    and other.pattern.fullmatch(topic)
                ):
                    raise TopologyError(
                        f"topic {topic} matches pattern {other.pattern.pattern} already registered by "
                        f"source {other.name} (source {name})"
                    )
            if topic in self.topic_to_source:
                raise TopologyError(
                    f"topic {topic} has already been registered by source {self.topic_to_source[topic]} "
                    f"(source {name})"
                )
        for topic in topics:
            self.topic_to_source[topic] = name
            if is_global:
                self.global_topics.add(topic)
        self.nodes[name] = SourceFactory(
            name, topics, key_serde, value_serde, timestamp_extractor, offset_reset, is_global
        )
        self._grouper.add(name)

    def _add_pattern_source(
        self,
        name: str,
        pattern: object,
        key_serde: object,
        value_serde: object,
        extractor: object,
        reset: str | None,
    ) -> None:
        from streams_runtime.processor.internals.pattern_sources import check_pattern

        pattern = check_pattern(
            pattern, name, [f.pattern for f in self.nodes.values() if isinstance(f, SourceFactory)]
        )
        for topic, source in self.topic_to_source.items():
            if pattern.fullmatch(topic):
                raise TopologyError(
                    f"pattern {pattern.pattern} of source {name} will match topic {topic}, already "
                    f"registered by source {source}"
                )
        self.nodes[name] = SourceFactory(name, [], key_serde, value_serde, extractor, reset, pattern=pattern)
        self._grouper.add(name)

    def add_processor(
        self, name: str, supplier: Callable[[], Any], parents: Iterable[str], *, fixed_key: bool = False
    ) -> None:
        self._check_new(name, "processor")
        if not callable(supplier) and not callable(getattr(supplier, "get", None)):
            raise TopologyError(f"processor {name}: supplier must be callable (a Processor class or factory)")
        parents = self._check_parents(name, parents)
        self.nodes[name] = ProcessorFactory(name, supplier, parents, fixed_key=fixed_key)
        self._grouper.add(name)
        self._grouper.unite(name, *parents)

    def add_sink(
        self,
        name: str,
        topic: str | Callable[..., str],
        parents: Iterable[str],
        *,
        key_serde: object = None,
        value_serde: object = None,
        partitioner: Callable[..., int | None] | None = None,
    ) -> None:
        self._check_new(name, "sink")
        if isinstance(topic, str):
            _check_name(topic, f"topic of sink {name}: topic")
            fixed, extractor = topic, None
        elif callable(topic):
            fixed, extractor = None, topic
        else:
            raise TopologyError(f"sink {name}: topic must be a topic name or a topic chooser callable")
        parents = self._check_parents(name, parents)
        self.nodes[name] = SinkFactory(name, fixed, extractor, parents, key_serde, value_serde, partitioner)
        self._grouper.add(name)
        self._grouper.unite(name, *parents)

    # ------------------------------------------------------------------ stores
    def add_state_store(
        self, store_builder: object, processor_names: Iterable[str] = (), *, allow_override: bool = False
    ) -> None:
        name = _check_name(getattr(store_builder, "name", None), "state store")
        if name in self.stores and not allow_override:
            if self.stores[name].builder is not store_builder:
                raise TopologyError(f"state store {name} is already added (duplicate store name)")
        else:
            self.stores[name] = StoreEntry(store_builder)
        for processor in processor_names:
            self.connect_processor_and_state_stores(processor, [name])

    def connect_processor_and_state_stores(self, processor_name: str, store_names: Iterable[str]) -> None:
        factory = self.nodes.get(processor_name)
        if not isinstance(factory, ProcessorFactory):
            what = "is not added yet" if factory is None else "is not a processor"
            raise TopologyError(
                f"processor {processor_name} {what}; cannot connect state stores {list(store_names)}"
            )
        for store in store_names:
            entry = self.stores.get(store)
            if entry is None:
                raise TopologyError(
                    f"state store {store} is not added yet (connecting it to processor {processor_name})"
                )
            if entry.is_global:
                raise TopologyError(
                    f"global state store {store} cannot be connected to processor {processor_name}"
                )
            if store not in factory.stores:
                factory.stores.append(store)
            if processor_name not in entry.users:
                entry.users.append(processor_name)
            self._grouper.unite(entry.users[0], processor_name)

    def add_global_store(
        self,
        store_builder: object,
        source_name: str,
        topic: str,
        processor_name: str,
        supplier: Callable[[], Any],
        *,
        key_serde: object = None,
        value_serde: object = None,
        timestamp_extractor: object = None,
    ) -> None:
        name = _check_name(getattr(store_builder, "name", None), "global state store")
        if name in self.stores:
            raise TopologyError(f"state store {name} is already added (duplicate store name)")
        self.add_source(
            source_name,
            [topic],
            key_serde=key_serde,
            value_serde=value_serde,
            timestamp_extractor=timestamp_extractor,
            is_global=True,
        )
        self._check_new(processor_name, "processor")
        self.nodes[processor_name] = ProcessorFactory(processor_name, supplier, [source_name], [name])
        self._grouper.add(processor_name)
        self._grouper.unite(processor_name, source_name)
        self.stores[name] = StoreEntry(store_builder, [processor_name], is_global=True)

    # ------------------------------------------------------------------ internal topics, co-partitioning
    def add_internal_topic(self, config: InternalTopicConfig) -> None:
        self.internal_topics[config.name] = config

    def copartition_sources(self, source_names: Iterable[str]) -> None:
        self.copartition_groups.append(list(source_names))

    def decorate(self, topic: str) -> str:
        """The real topic name: internal topics get the ``<application_id>-`` prefix."""
        if topic in self.internal_topics:
            return decorate(self.application_id, topic)
        return topic

    # ------------------------------------------------------------------ validation and grouping
    def validate(self) -> None:
        """Build-time checks that need the whole graph (see module docstring)."""
        for name, entry in self.stores.items():
            if not entry.users:
                raise TopologyError(
                    f"state store {name} is not connected to any processor; pass the processor "
                    f"names to add_state_store() or call connect_processor_and_state_stores()"
                )
        for group in self.copartition_groups:
            for source in group:
                factory = self.nodes.get(source)
                if not isinstance(factory, SourceFactory):
                    raise TopologyError(f"co-partition group {group} names unknown source {source}")
                if factory.is_global:
                    raise TopologyError(
                        f"co-partition group {group}: global source {source} cannot be "
                        f"co-partitioned (it reads every partition on every instance)"
                    )

    def node_groups(self) -> dict[int, list[str]]:
        """Sub-topology id -> node names (insertion order); global-store groups included."""
        by_root: dict[str, list[str]] = {}
        for name in self.nodes:
            by_root.setdefault(self._grouper.root(name), []).append(name)
        return dict(enumerate(by_root.values()))

    def is_global_group(self, names: list[str]) -> bool:
        return any(isinstance(f := self.nodes[n], SourceFactory) and f.is_global for n in names)

    def children_of(self, name: str) -> list[str]:
        return [n for n, f in self.nodes.items() if name in getattr(f, "parents", ())]
