"""The client boundary: the only module of streams_runtime that imports ``confluent_kafka``.

Every consumer, producer and admin client of the project is made here, from the shared profile
(:mod:`streams_runtime.kafka.profile`), so the profile is applied everywhere and one library has
one home.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from streams_runtime.kafka.profile import client_config

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "PARTITION_EOF",
    "Consumer",
    "KafkaError",
    "KafkaException",
    "Message",
    "Producer",
    "TopicPartition",
    "TopicSpec",
    "create_admin",
    "create_consumer",
    "create_producer",
    "create_restore_consumer",
    "create_topics",
    "describe_topic_configs",
    "isolation_level",
    "partition_counts",
    "wait_for_metadata",
]


@dataclass(frozen=True)
class TopicSpec:
    """A topic to create: name, partition count, replication and topic-level configs."""

    name: str
    partitions: int
    replication_factor: int = 1
    config: Mapping[str, str] = field(default_factory=dict)


def create_consumer(
    bootstrap_servers: str,
    group_id: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    low_latency: bool = False,
    read_committed: bool | None = None,
) -> Consumer:
    """A consumer with the shared profile; ``overrides`` win over it.

    :param read_committed: ``True``: ``isolation.level=read_committed`` (exactly-once: records of
        open or aborted transactions are never returned, fetches stop at the last stable offset);
        ``False``: ``read_uncommitted`` (at-least-once, as Kafka Streams); ``None``: the
        overrides or librdkafka's default decide. Applied after ``overrides``.
    """
    role = "low_latency_consumer" if low_latency else "consumer"
    config = client_config(role, bootstrap_servers, {"group.id": group_id, **(overrides or {})})
    if read_committed is not None:
        config["isolation.level"] = isolation_level(read_committed)
    return Consumer(config)


def isolation_level(read_committed: bool) -> str:
    """The ``isolation.level`` value for exactly-once (True) or at-least-once (False) readers."""
    return "read_committed" if read_committed else "read_uncommitted"


#: Error code of the event a consumer with ``enable.partition.eof`` emits at a partition's end.
PARTITION_EOF = KafkaError._PARTITION_EOF  # noqa: SLF001 (librdkafka names its local codes with "_")

#: Restore throughput: bigger fetches per partition than the processing profile.
_RESTORE_FETCH_BYTES = 8 * 1024 * 1024


def create_restore_consumer(bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> Consumer:
    """The restore consumer of a StoreChangelogReader: manual ``assign`` only, never commits.

    ``enable.partition.eof`` makes the consumer emit an event when a fetch reaches a partition's
    high watermark: that is how the reader learns a changelog's TRUE end offset
    (docs/decisions/0001-embedded-broker.md: Tansu's
    ListOffsets-latest is the last batch's base offset + 1). librdkafka insists on a
    ``group.id``; this one is never joined and nothing is committed under it.
    """
    config = client_config(
        "low_latency_consumer",
        bootstrap_servers,
        {
            "group.id": "streams-runtime-restore",
            "enable.partition.eof": True,
            "enable.auto.offset.store": False,
            "max.partition.fetch.bytes": _RESTORE_FETCH_BYTES,
            **(overrides or {}),
        },
    )
    return Consumer(config)


def create_producer(bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> Producer:
    """A producer with the shared profile; ``overrides`` win over it."""
    return Producer(client_config("producer", bootstrap_servers, overrides))


def create_admin(bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> AdminClient:
    """An admin client with the shared profile; ``overrides`` win over it."""
    return AdminClient(client_config("admin", bootstrap_servers, overrides))


def wait_for_metadata(bootstrap_servers: str, timeout: float = 30.0) -> int:
    """Block until the cluster answers a metadata request; return the number of brokers.

    A plain TCP connect is tried first, so a broker that is still starting does not make
    librdkafka log connection-refused errors.

    :raises TimeoutError: when no answer came within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    host, _, port = bootstrap_servers.split(",")[0].rpartition(":")
    last: Exception | None = None
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=0.5).close()
            break
        except OSError as exc:
            last = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing listens on {bootstrap_servers} after {timeout}s ({last})")
        time.sleep(0.02)
    admin = create_admin(bootstrap_servers)
    while True:
        try:
            metadata = admin.list_topics(timeout=min(2.0, max(0.1, deadline - time.monotonic())))
            if metadata.brokers:
                return len(metadata.brokers)
        except KafkaException as exc:
            last = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"no metadata answer from {bootstrap_servers} within {timeout}s ({last})")
        time.sleep(0.05)


def partition_counts(admin: AdminClient, topics: Iterable[str], timeout: float = 10.0) -> dict[str, int]:
    """Partition count of each existing topic among ``topics`` (missing topics are left out)."""
    metadata = admin.list_topics(timeout=timeout)
    wanted = set(topics)
    return {
        name: len(topic.partitions)
        for name, topic in metadata.topics.items()
        if name in wanted and topic.error is None
    }


def create_topics(admin: AdminClient, specs: Iterable[TopicSpec], timeout: float = 30.0) -> list[str]:
    """Create the topics of ``specs`` that do not exist yet and verify every partition count.

    Idempotent: existing topics are left alone but their partition count is checked.

    :returns: the names of the topics this call created.
    :raises ValueError: when an existing topic has a different partition count, naming both.
    """
    specs = list(specs)
    existing = partition_counts(admin, (s.name for s in specs), timeout)
    missing = [s for s in specs if s.name not in existing]
    if missing:
        futures = admin.create_topics(
            [NewTopic(s.name, s.partitions, s.replication_factor, config=dict(s.config)) for s in missing],
            operation_timeout=timeout,
        )
        for future in futures.values():
            try:
                future.result(timeout)
            except KafkaException as exc:
                if "TOPIC_ALREADY_EXISTS" not in str(exc):
                    raise
    deadline = time.monotonic() + timeout
    while True:
        existing = partition_counts(admin, (s.name for s in specs), timeout)
        if all(s.name in existing for s in specs) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    mismatches = [
        f"{s.name}: expected {s.partitions} partitions, found {existing.get(s.name)}"
        for s in specs
        if existing.get(s.name) != s.partitions
    ]
    if mismatches:
        raise ValueError("topic partition counts differ: " + "; ".join(mismatches))
    return [s.name for s in missing]


def describe_topic_configs(
    admin: AdminClient, topics: Iterable[str], timeout: float = 10.0
) -> dict[str, dict[str, str]]:
    """Topic-level configs the broker reports for each of ``topics`` (name -> {key: value}).

    Apache Kafka reports every config, defaults included; Tansu reports only the ones set when the
    topic was created, so a key missing here means "the broker's default". Pass existing topics only.

    :raises KafkaException: when the broker refuses the request for a topic.
    """
    names = list(topics)
    if not names:
        return {}
    futures = admin.describe_configs(
        [ConfigResource(ResourceType.TOPIC, name) for name in names], request_timeout=timeout
    )
    return {
        resource.name: {key: e.value for key, e in future.result(timeout).items() if e.value is not None}
        for resource, future in futures.items()
    }
