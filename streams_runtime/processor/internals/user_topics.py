"""User topics: the topics a topology reads and writes that the application does not create.

The one home of the rule "every user topic exists before anything is read or written". Kafka
Streams creates only its internal topics (repartition, changelog) and stops on a missing source
topic (``MissingSourceTopicException``); a missing sink topic it finds only on the first send,
after records were read (and, at-least-once, read again after a restart). Here both are checked
at start, before any thread runs: ``KafkaStreams.start()`` (through
:func:`~.internal_topic_manager.prepare_topics`) and the worker launcher, before it starts an
instance, ask :func:`check_user_topics` (docs/decisions/0010-input-and-output-checks.md).

The user topics of a topology (:func:`user_topics`), by role:
  - ``source``: every topic a source node names, internal (repartition) topics left out; topics
    bound to a source by pattern are not named by the topology (a pattern reads what exists);
  - ``global source``: the topics of global stores and global tables;
  - ``sink``: every topic a sink node names, internal ones left out; a sink whose topic a
    TopicNameExtractor chooses per record cannot be checked and is skipped;
  - ``dead-letter``: ``dead_letter_topic`` when the deserialization handler is ``dead_letter``.

A missing one raises :class:`~streams_runtime.errors.MissingSourceTopicError` when a source (or
global source) is among the missing, else :class:`~streams_runtime.errors.MissingSinkTopicError`;
either way the message names every missing topic and gives the command that creates it, with a
partition count where the topology implies one (a sink: the task count of the sub-topologies
writing it; a co-partitioned source: the partition count of the topics it joins).

Under exactly-once on a cluster of more than one broker, a user topic with a single-replica
partition is logged once at WARNING (:func:`warn_single_replica_topics`) and the start goes on:
while that partition's broker is down it has no leader, and Apache Kafka's transaction
coordinator, aborting a transaction, skips its abort marker, so the aborted records later read as
committed (docs/decisions/0009-two-brokers.md). Two replicas already need two failures for that;
the advice is three, as for the internal topics. A one-broker cluster (the embedded broker) is
exempt: the coordinator goes down with the partition and writes the marker when both are back.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from streams_runtime.config import StreamsConfig
from streams_runtime.errors import MissingSinkTopicError, MissingSourceTopicError, TopologyError
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.topology_builder import (
    InternalTopologyBuilder,
    SinkFactory,
    SourceFactory,
)

__all__ = [
    "DEAD_LETTER",
    "GLOBAL_SOURCE",
    "SINK",
    "SOURCE",
    "check_user_topics",
    "dead_letter_topic",
    "missing_topics_message",
    "user_topics",
    "warn_single_replica_topics",
]

SOURCE, GLOBAL_SOURCE, SINK, DEAD_LETTER = "source", "global source", "sink", "dead-letter"
_SOURCE_ROLES = (SOURCE, GLOBAL_SOURCE)

log = logging.getLogger("streams_runtime.processor")


def dead_letter_topic(config: StreamsConfig) -> str | None:
    """The topic the deserialization handler of ``config`` writes records it cannot read to, if it
    writes any."""
    if config.default_deserialization_exception_handler != "dead_letter":
        return None
    return str(config.dead_letter_topic)


def user_topics(builder: InternalTopologyBuilder, dead_letter_topic: str | None = None) -> dict[str, str]:
    """Every user topic of the topology -> its role (module docstring), sources first; a topic
    both read and written is a source. ``dead_letter_topic``: the configured one, when the
    handler writes it."""
    internal = builder.internal_topics
    roles: dict[str, str] = {}
    if dead_letter_topic:
        roles[dead_letter_topic] = DEAD_LETTER
    for factory in builder.nodes.values():
        if isinstance(factory, SinkFactory) and factory.topic is not None and factory.topic not in internal:
            roles[factory.topic] = SINK
    for factory in builder.nodes.values():
        if isinstance(factory, SourceFactory) and factory.pattern is None:
            for topic in factory.topics:
                if topic not in internal:
                    roles[topic] = GLOBAL_SOURCE if factory.is_global else SOURCE
    order = {SOURCE: 0, GLOBAL_SOURCE: 1, SINK: 2, DEAD_LETTER: 3}
    return dict(sorted(roles.items(), key=lambda item: (order[item[1]], item[0])))


def check_user_topics(
    builder: InternalTopologyBuilder,
    partition_counts: Mapping[str, int],
    *,
    dead_letter_topic: str | None = None,
    bootstrap_servers: str | None = None,
    application_id: str | None = None,
) -> None:
    """Raise if a user topic of the topology is missing from ``partition_counts`` (the cluster's
    topics, read with one all-topics metadata request: a request naming a missing topic would
    create it on the embedded broker).

    :param bootstrap_servers: put in the suggested command (None: left out).
    :param application_id: named in the message (None: the builder's).
    :raises MissingSourceTopicError: a source or global source topic is missing (the message
        names the missing sinks too).
    :raises MissingSinkTopicError: only sink or dead-letter topics are missing.
    """
    roles = user_topics(builder, dead_letter_topic)
    missing = {topic: role for topic, role in roles.items() if partition_counts.get(topic, 0) <= 0}
    if not missing:
        return
    message = missing_topics_message(builder, missing, partition_counts, bootstrap_servers, application_id)
    if any(role in _SOURCE_ROLES for role in missing.values()):
        raise MissingSourceTopicError(message)
    raise MissingSinkTopicError(message)


def warn_single_replica_topics(
    builder: InternalTopologyBuilder,
    replication_factors: Mapping[str, int],
    brokers: int,
    *,
    dead_letter_topic: str | None = None,
) -> None:
    """Log one WARNING naming every user topic with fewer than 2 replicas on some partition, when
    the cluster has more than one broker; the caller asks only under exactly-once (module
    docstring).

    :param replication_factors: topic -> the fewest replicas of its partitions (from the same
        metadata request as :func:`check_user_topics`'s partition counts).
    :param brokers: the brokers of the cluster.
    """
    if brokers <= 1:
        return
    roles = user_topics(builder, dead_letter_topic)
    single = {t: role for t, role in roles.items() if t in replication_factors and replication_factors[t] < 2}
    if not single:
        return
    named = ", ".join(
        f"{role} topic {topic!r} (replication factor {replication_factors[topic]})"
        for topic, role in single.items()
    )
    log.warning(
        "application %r runs exactly_once_v2 on %d brokers, but %s %s a single replica: a "
        "transaction aborted while such a partition's only broker is down gets no abort marker there "
        "(Apache Kafka's transaction coordinator skips a partition without a leader) and its records "
        "later read as committed; recreate %s with replication factor 3 (internal topics follow "
        "replication_factor)",
        builder.application_id,
        brokers,
        named,
        "has" if len(single) == 1 else "have",
        "it" if len(single) == 1 else "them",
    )


def missing_topics_message(
    builder: InternalTopologyBuilder,
    missing: Mapping[str, str],
    partition_counts: Mapping[str, int],
    bootstrap_servers: str | None = None,
    application_id: str | None = None,
) -> str:
    """One message naming every missing topic (``topic -> role``) and the command creating it."""
    hints = _partition_hints(builder, missing, partition_counts)
    app = application_id or builder.application_id
    named = ", ".join(f"{role} topic {topic!r}" for topic, role in missing.items())
    verb = "does not exist" if len(missing) == 1 else "do not exist"
    it = "it" if len(missing) == 1 else "them"
    server = f" --bootstrap-servers {bootstrap_servers}" if bootstrap_servers else ""
    commands = "; ".join(
        f"streams-runtime topics create {topic} --partitions {hints.get(topic, 'N')}{server}"
        for topic in missing
    )
    return (
        f"cannot start application {app!r}: {named} {verb}; create {it} first ({commands}), or with "
        f"your cluster's tools (kafka-topics.sh --create); nothing was read or written"
    )


def _partition_hints(
    builder: InternalTopologyBuilder, missing: Mapping[str, str], partition_counts: Mapping[str, int]
) -> dict[str, int]:
    """The partition count the topology implies for a missing topic, where it implies one."""
    infos = topology_info.sub_topologies(builder)
    hints: dict[str, int] = {}
    for info in infos:  # a source co-partitioned with existing topics takes their count
        for group in info.copartition_groups:
            known = [partition_counts[t] for t in group if partition_counts.get(t, 0) > 0]
            for topic in group:
                if topic in missing and known:
                    hints[topic] = max(known)
    existing = {t: n for t, n in partition_counts.items() if n > 0}
    try:
        tasks = topology_info.task_counts(builder, existing)
    except TopologyError:  # a missing source leaves some task counts unknown
        tasks = _known_task_counts(infos, existing)
    for info in infos:  # a sink keeps the layout of the tasks writing it
        for topic in info.sink_topics:
            if missing.get(topic) == SINK and info.id in tasks:
                hints[topic] = max(hints.get(topic, 0), tasks[info.id])
    return hints


def _known_task_counts(infos: list[Any], counts: Mapping[str, int]) -> dict[int, int]:
    """Task counts of the sub-topologies whose sources all have a known partition count."""
    return {
        info.id: max(counts[t] for t in info.source_topics)
        for info in infos
        if info.source_topics and all(t in counts for t in info.source_topics)
    }
