"""Source topics by regular expression (``builder.stream(re.compile("orders-.*"))``).

A pattern source reads every topic whose whole name matches its pattern (Java's
``Matcher.matches``, i.e. ``re.fullmatch``), internal topics excepted. Which topics those are is
only known against a cluster (or the test driver): ``matching_topics`` resolves the patterns of a
topology against a list of topic names, and the runtime does so before it subscribes and again at
every rebalance, so topics created later join at the next rebalance. In the TopologyTestDriver a
record piped to any matching topic flows in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from streams_runtime.errors import TopologyError


def check_pattern(pattern: Any, source: str, others: list[Any]) -> re.Pattern[str]:
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


def pattern_sources(builder: Any) -> list[tuple[str, re.Pattern[str]]]:
    """``(source name, pattern)`` of every pattern source of an InternalTopologyBuilder."""
    return [(name, f.pattern) for name, f in builder.nodes.items() if getattr(f, "pattern", None) is not None]


def source_for_topic(builder: Any, topic: str) -> str | None:
    """The pattern source that reads ``topic`` (None if none does, or the topic has its own source)."""
    if topic in builder.topic_to_source or topic in builder.internal_topics:
        return None
    for name, pattern in pattern_sources(builder):
        if pattern.fullmatch(topic):
            return name
    return None


def matching_topics(builder: Any, topics: Iterable[str]) -> dict[str, list[str]]:
    """Source name -> the topics among ``topics`` it reads (sorted), for every pattern source."""
    found: dict[str, list[str]] = {name: [] for name, _ in pattern_sources(builder)}
    for topic in sorted(set(topics)):
        source = source_for_topic(builder, topic)
        if source is not None and not topic.startswith(f"{builder.application_id}-"):
            found[source].append(topic)
    return found
