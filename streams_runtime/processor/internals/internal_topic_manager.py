"""InternalTopicManager: check the user topics and create/verify the internal topics at start.

Called once by KafkaStreams.start(), before any thread starts. Steps of :func:`prepare_topics`:
  1. read every topic's partitions and the broker count with one all-topics metadata request (a
     request naming a missing topic would create it on Tansu, docs/decisions/0001-embedded-broker.md);
  2. every user topic (sources, global sources, sinks with a fixed topic, the dead-letter topic)
     must exist, else one error names every missing topic and how to create it
     (:func:`~.user_topics.check_user_topics`); nothing has been read or written then; under
     exactly-once, one warning names the user topics with a single replica
     (:func:`~.user_topics.warn_single_replica_topics`);
  3. task counts per sub-topology from the source partition counts; co-partitioned sources with
     different counts stop the start with a TopologyError naming the topics and their counts;
  4. partition counts of the internal topics: a repartition topic has its fixed count or the
     largest task count of the sub-topologies writing it; a changelog has its sub-topology's task
     count;
  5. create the missing internal topics with their configs and verify the partition count of
     every existing one; a mismatch stops the start naming topic, expected and found counts.
Returns the partition count of every topic the threads read (sources and repartition topics).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError, TopologyError
from streams_runtime.kafka.clients import TopicSpec, create_topics, topics_metadata
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.user_topics import (
    check_user_topics,
    user_topics,
    warn_single_replica_topics,
)

if TYPE_CHECKING:
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder

log = logging.getLogger("streams_runtime.processor")


class InternalTopicMismatchError(StreamsError):
    """An existing internal topic has a different partition count than the topology needs."""


def prepare_topics(
    admin: Any,
    builder: InternalTopologyBuilder,
    replication_factor: int,
    *,
    dead_letter_topic: str | None = None,
    bootstrap_servers: str | None = None,
    exactly_once: bool = False,
) -> dict[str, int]:
    """The steps of the module docstring; ``builder`` is the topology's InternalTopologyBuilder,
    ``dead_letter_topic`` the topic the deserialization handler writes (if it writes one),
    ``bootstrap_servers`` what the error's suggested command names (None: nothing),
    ``exactly_once`` whether the application runs exactly_once_v2."""
    infos = topology_info.sub_topologies(builder)
    internal = topology_info.internal_topics(builder)
    user_sources = sorted({t for i in infos for t in i.source_topics if t not in internal})
    # Step 1
    asked = {*user_sources, *user_topics(builder, dead_letter_topic), *internal}
    metadata = topics_metadata(admin, sorted(asked))
    existing = metadata.partition_counts()
    # Step 2
    check_user_topics(
        builder, existing, dead_letter_topic=dead_letter_topic, bootstrap_servers=bootstrap_servers
    )
    if exactly_once:
        warn_single_replica_topics(
            builder, metadata.replication_factors(), metadata.brokers, dead_letter_topic=dead_letter_topic
        )
    # Step 3
    sources = {t: existing[t] for t in user_sources}
    try:
        tasks = topology_info.task_counts(builder, sources)
    except TopologyError as exc:
        raise TopologyError(f"cannot start application {builder.application_id}: {exc}") from exc
    # Step 4
    wanted: dict[str, int] = {}
    for name, config in builder.internal_topics.items():
        real = builder.decorate(name)
        if config.number_of_partitions is not None:
            wanted[real] = config.number_of_partitions
        else:
            # a topic co-partitioned with its reader's other sources has the reader's task count
            # (foreign-key join topics); any other repartition topic its writers' largest one
            copartitioned = [i.id for i in infos if any(real in g for g in i.copartition_groups)]
            writers = [i.id for i in infos if real in i.repartition_sink_topics]
            if copartitioned:
                wanted[real] = tasks[copartitioned[0]]
            else:
                wanted[real] = max(tasks[w] for w in writers) if writers else max(tasks.values())
    for info in infos:
        for topic in info.changelog_topics.values():
            wanted[topic] = tasks[info.id]
    # Step 5
    specs = [
        TopicSpec(topic, count, replication_factor, internal[topic].configs())
        for topic, count in sorted(wanted.items())
    ]
    try:
        created = create_topics(admin, specs)
    except ValueError as exc:
        raise InternalTopicMismatchError(
            f"cannot start application {builder.application_id}: internal {exc}"
        ) from exc
    if created:
        log.info("created internal topics %s", created)
    counts = dict(sources)
    counts.update({t: n for t, n in wanted.items() if t in _read_topics(infos)})
    return counts


def _read_topics(infos: Iterable[topology_info.SubtopologyInfo]) -> set[str]:
    return {t for i in infos for t in i.source_topics}
