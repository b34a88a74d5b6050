"""What a runtime needs to know about a built topology: sub-topologies, topics, stores, task counts.

Pure functions over an InternalTopologyBuilder. Names returned here are the real topic names
(internal topics decorated with ``<application_id>-``), except ``describe()`` which prints the
declared names as Kafka Streams does.

Task counts (``task_counts``): a sub-topology has as many tasks as its source topics have
partitions (the maximum, after checking co-partitioned sources agree). A repartition topic
whose partition count is not fixed (``Repartitioned(number_of_partitions=...)``) gets the
largest partition count of the source topics of the sub-topologies that write to it, resolved
in dependency order, as Kafka Streams' RepartitionTopics does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streams_runtime.errors import TopologyError
from streams_runtime.processor import description as desc
from streams_runtime.processor.internals.assignment.partition_grouper import task_count
from streams_runtime.processor.internals.internal_topics import InternalTopicConfig, changelog_topic_name
from streams_runtime.processor.internals.topology_builder import (
    InternalTopologyBuilder,
    ProcessorFactory,
    SinkFactory,
    SourceFactory,
)


@dataclass
class SubtopologyInfo:
    """One sub-topology as the runtime sees it (real topic names)."""

    id: int
    nodes: list[str]
    source_topics: list[str]
    sink_topics: list[str]
    repartition_source_topics: list[str]
    repartition_sink_topics: list[str]
    stores: list[str]
    changelog_topics: dict[str, str] = field(default_factory=dict)  # store -> changelog topic
    copartition_groups: list[list[str]] = field(default_factory=list)  # groups of source topics


def describe(builder: InternalTopologyBuilder, decorate_internal: bool = False) -> desc.TopologyDescription:
    """The TopologyDescription (decorate_internal: print internal topics with the app id)."""
    builder.validate()
    show = builder.decorate if decorate_internal else (lambda topic: topic)
    result = desc.TopologyDescription()
    for group_id, names in builder.node_groups().items():
        nodes: dict[str, desc.Node] = {}
        edges: list[tuple[str, str]] = []
        for name in names:
            factory = builder.nodes[name]
            if isinstance(factory, SourceFactory):
                pattern = factory.pattern.pattern if factory.pattern is not None else None
                nodes[name] = desc.Node(
                    "Source", name, topics=[show(t) for t in factory.topics], pattern=pattern
                )
            elif isinstance(factory, ProcessorFactory):
                nodes[name] = desc.Node("Processor", name, stores=list(factory.stores))
            else:
                topics = [show(factory.topic)] if factory.topic is not None else []
                extractor = None if factory.topic is not None else _extractor_name(factory.topic_extractor)
                nodes[name] = desc.Node("Sink", name, topics=topics, extractor=extractor)
            edges.extend((parent, name) for parent in getattr(factory, "parents", ()))
        desc.link(nodes, edges)
        if builder.is_global_group(names):
            source = next(n for n in nodes.values() if n.kind == "Source")
            processor = next(n for n in nodes.values() if n.kind == "Processor")
            result.global_stores.append(desc.GlobalStore(group_id, source, processor))
        else:
            result.subtopologies.append(desc.Subtopology(group_id, list(nodes.values())))
    return result


def _extractor_name(extractor: object) -> str:
    if type(extractor).__str__ is not object.__str__:
        return str(extractor)  # a chooser object with its own description, as Kafka prints toString()
    return getattr(extractor, "__qualname__", None) or type(extractor).__qualname__


def sub_topologies(builder: InternalTopologyBuilder) -> list[SubtopologyInfo]:
    """Every non-global sub-topology with its real source/sink topics, stores and changelogs."""
    builder.validate()
    infos = []
    app = builder.application_id
    for group_id, names in builder.node_groups().items():
        if builder.is_global_group(names):
            continue
        sources: list[str] = []
        sinks: list[str] = []
        stores: list[str] = []
        source_topics: dict[str, list[str]] = {}  # source node -> its topics
        for name in names:
            factory = builder.nodes[name]
            if isinstance(factory, SourceFactory):
                sources.extend(factory.topics)
                source_topics[name] = factory.topics
            elif isinstance(factory, SinkFactory) and factory.topic is not None:
                sinks.append(factory.topic)
            elif isinstance(factory, ProcessorFactory):
                stores.extend(s for s in factory.stores if s not in stores)
        groups = []
        for group in builder.copartition_groups:
            if source_topics.keys() >= set(group):
                groups.append([builder.decorate(t) for s in group for t in source_topics[s]])
        infos.append(
            SubtopologyInfo(
                id=group_id,
                nodes=list(names),
                source_topics=[builder.decorate(t) for t in sources],
                sink_topics=[builder.decorate(t) for t in sinks],
                repartition_source_topics=[
                    builder.decorate(t) for t in sources if t in builder.internal_topics
                ],
                repartition_sink_topics=[builder.decorate(t) for t in sinks if t in builder.internal_topics],
                stores=stores,
                changelog_topics={
                    s: changelog_topic_name(app, s) for s in stores if builder.stores[s].logging_enabled
                },
                copartition_groups=groups,
            )
        )
    return infos


def internal_topics(builder: InternalTopologyBuilder) -> dict[str, InternalTopicConfig]:
    """Real name -> config of every repartition and changelog topic the topology needs."""
    result: dict[str, InternalTopicConfig] = {}
    for name, config in builder.internal_topics.items():
        result[builder.decorate(name)] = config
    for info in sub_topologies(builder):
        for store, topic in info.changelog_topics.items():
            result[topic] = InternalTopicConfig(topic, "changelog", builder.stores[store].log_config)
    return result


def task_counts(builder: InternalTopologyBuilder, partitions: Mapping[str, int]) -> dict[int, int]:
    """Sub-topology id -> number of tasks, given partition counts of the user topics."""
    infos = sub_topologies(builder)
    counts: dict[str, int] = dict(partitions)
    for name, config in builder.internal_topics.items():
        if config.number_of_partitions is not None:
            counts[builder.decorate(name)] = config.number_of_partitions
    pending = [i for i in infos]
    writers: dict[str, list[SubtopologyInfo]] = {}  # repartition topic -> sub-topologies writing it
    for info in infos:
        for topic in info.repartition_sink_topics:
            writers.setdefault(topic, []).append(info)
    result: dict[int, int] = {}
    while pending:
        progressed = False
        for info in list(pending):
            missing = [t for t in info.source_topics if t not in counts]
            for topic in list(missing):
                # a repartition topic co-partitioned with a topic of known count takes that count
                # (Kafka's co-partition enforcer); this also breaks write cycles (foreign-key joins)
                known = [counts[t] for g in info.copartition_groups if topic in g for t in g if t in counts]
                if known:
                    counts[topic] = max(known)
                    missing.remove(topic)
                    continue
                upstream = writers.get(topic, [])
                if upstream and all(u.id in result for u in upstream):
                    counts[topic] = max(result[u.id] for u in upstream)
                    missing.remove(topic)
            if missing:
                unresolved = [t for t in missing if t not in writers]
                if unresolved:
                    raise TopologyError(
                        f"sub-topology {info.id}: no partition count given for source topic(s) {unresolved}"
                    )
                continue
            result[info.id] = task_count(info.id, info.source_topics, info.copartition_groups, counts)
            pending.remove(info)
            progressed = True
        if not progressed:
            raise TopologyError(
                f"cannot resolve partition counts of sub-topologies {[i.id for i in pending]}"
            )
    return dict(sorted(result.items()))
