"""Source topics by regular expression (``builder.stream(re.compile("orders-.*"))``).

A pattern source reads every topic whose whole name matches its pattern (Java's
``Matcher.matches``, i.e. ``re.fullmatch``), internal topics excepted. Which topics those are is
only known against a cluster (or the test driver). The runtime binds each pattern to the
matching topics that exist when an instance starts (``bind_pattern_topics``): it then creates
tasks, subscribes and assigns exactly as for named topics. While running, every stream thread
lists the topics again every ``metadata_max_age_ms`` (``add_new_pattern_topics``); a new matching
topic joins its source, and the thread recreates the affected tasks (same task ids, so their
stores stay) and rejoins the group so the leader assigns the new partitions (as Kafka Streams does
at the rebalance its consumer's metadata refresh triggers). A topic deleted while running stays
bound until the next start. In the TopologyTestDriver a record piped to any matching topic flows in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from streams_runtime.errors import MissingSourceTopicError, TopologyError
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder, SourceFactory


def check_pattern(pattern: object, source: str, others: list[Any]) -> re.Pattern[str]:
    """``pattern`` compiled; a TopologyError for anything else or a pattern already used."""
    if isinstance(pattern, str):
        pattern = re.compile(pattern)
    if not isinstance(pattern, re.Pattern):
        raise TopologyError(
            f"source {source}: a topic pattern must be a compiled regular expression, got {pattern!r}"
        )
    if any(other is not None and other.pattern == pattern.pattern for other in others):
        raise TopologyError(
            f"source {source}: pattern {pattern.pattern} has already been registered by another source"
        )
    return pattern


def _pattern_factories(builder: InternalTopologyBuilder) -> list[tuple[SourceFactory, re.Pattern[str]]]:
    return [
        (f, f.pattern)
        for f in builder.nodes.values()
        if isinstance(f, SourceFactory) and f.pattern is not None
    ]


def pattern_sources(builder: InternalTopologyBuilder) -> list[tuple[str, re.Pattern[str]]]:
    """``(source name, pattern)`` of every pattern source of an InternalTopologyBuilder."""
    return [(f.name, pattern) for f, pattern in _pattern_factories(builder)]


def source_for_topic(builder: InternalTopologyBuilder, topic: str) -> str | None:
    """The pattern source that reads ``topic`` (None if none does, or the topic has its own source)."""
    if topic in builder.topic_to_source or topic in builder.internal_topics:
        return None
    for name, pattern in pattern_sources(builder):
        if pattern.fullmatch(topic):
            return name
    return None


def matching_topics(builder: InternalTopologyBuilder, topics: Iterable[str]) -> dict[str, list[str]]:
    """Source name -> the topics among ``topics`` it reads (sorted), for every pattern source."""
    found: dict[str, list[str]] = {name: [] for name, _ in pattern_sources(builder)}
    for topic in sorted(set(topics)):
        source = source_for_topic(builder, topic)
        if source is not None and not topic.startswith(f"{builder.application_id}-"):
            found[source].append(topic)
    return found


def bind_pattern_topics(builder: InternalTopologyBuilder, topics: Iterable[str]) -> dict[str, list[str]]:
    """Make each pattern source read the existing topics it matches (the runtime, at start).

    Returns source name -> its topics. A pattern no topic matches is a MissingSourceTopicError
    naming it. Binding again (a restart of the same topology) re-reads the topic list.
    """
    prefix = f"{builder.application_id}-"
    existing = sorted(set(topics))
    bound: dict[str, list[str]] = {}
    for factory, pattern in _pattern_factories(builder):
        name = factory.name
        matched = [
            t
            for t in existing
            if pattern.fullmatch(t)
            and not t.startswith(prefix)
            and builder.topic_to_source.get(t, name) == name
        ]
        if not matched:
            raise MissingSourceTopicError(
                f"no topic matches the pattern {pattern.pattern} of source {name}; create a matching "
                f"topic before starting (matching topics created later join while running)"
            )
        factory.topics = matched
        for topic in matched:
            builder.topic_to_source[topic] = name
        bound[name] = matched
    return bound


def add_new_pattern_topics(builder: InternalTopologyBuilder, topics: Iterable[str]) -> list[str]:
    """Bind matching topics among ``topics`` that no source reads yet (the runtime, while running).

    Returns the topics added (empty: nothing changed). Topics already bound stay bound.
    """
    added: list[str] = []
    for name, new in matching_topics(builder, topics).items():
        factory = builder.nodes[name]
        if new and isinstance(factory, SourceFactory):  # every name matching_topics gives is a source
            factory.topics = sorted({*factory.topics, *new})
            for topic in new:
                builder.topic_to_source[topic] = name
            added.extend(new)
    return sorted(added)
