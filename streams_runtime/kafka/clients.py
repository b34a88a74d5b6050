"""The client boundary: the only module of streams_runtime that imports ``confluent_kafka``.

Every consumer, producer and admin client of the project is made here, from the shared profile
(:mod:`streams_runtime.kafka.profile`), so the profile is applied everywhere and one library has
one home.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
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
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic, ResourceType

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.outage import broker_outage, quiet_connection_errors
from streams_runtime.kafka.profile import client_config as _profile_config

#: librdkafka's own log lines go through this Python logger (every client made here); the CLI
#: shows them from WARNING up, from DEBUG with -v.
LIBRDKAFKA_LOGGER = logging.getLogger("streams_runtime.librdkafka")


def client_config(
    role: str, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The shared profile of ``role`` with librdkafka's logs routed to :data:`LIBRDKAFKA_LOGGER`
    (its per-retry connection errors folded into the outage log, :mod:`.outage`) and its error
    events to :func:`on_client_error`."""
    quiet_connection_errors()
    return {
        "logger": LIBRDKAFKA_LOGGER,
        "error_cb": on_client_error,
        **_profile_config(role, bootstrap_servers, overrides),
    }


#: errors of a cluster that does not answer (in time), whatever was asked of it
UNREACHABLE_ERRORS = frozenset(
    {
        KafkaError._TRANSPORT,  # noqa: SLF001
        KafkaError._ALL_BROKERS_DOWN,  # noqa: SLF001
        KafkaError._TIMED_OUT,  # noqa: SLF001
        KafkaError.REQUEST_TIMED_OUT,
    }
)
#: a group or transaction coordinator moving, or loading its state
COORDINATOR_ERRORS = frozenset(
    {
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    }
)
#: librdkafka error events an outage causes (the client retries them by itself)
TRANSIENT_CLIENT_ERRORS = UNREACHABLE_ERRORS | {
    KafkaError._RESOLVE,  # noqa: SLF001
    KafkaError.NETWORK_EXCEPTION,
}


def on_client_error(error: KafkaError) -> None:
    """librdkafka's ``error_cb``: a transient error is an outage signal (:func:`.outage.broker_outage`:
    one WARNING per outage); a fatal one is logged as an ERROR, any other as a WARNING."""
    if error.fatal():
        LIBRDKAFKA_LOGGER.error("Kafka client error (fatal): %s", error)
    elif error.code() in TRANSIENT_CLIENT_ERRORS:
        broker_outage().unreachable(error.str())
    else:
        LIBRDKAFKA_LOGGER.warning("Kafka client error: %s", error)


class KafkaUnreachableError(StreamsError):
    """No broker of ``bootstrap.servers`` answered in time."""


__all__ = [
    "COORDINATOR_ERRORS",
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "PARTITION_EOF",
    "UNREACHABLE_ERRORS",
    "Consumer",
    "KafkaError",
    "KafkaException",
    "Message",
    "PartitionInfo",
    "Producer",
    "TopicPartition",
    "TopicSpec",
    "TopicsMetadata",
    "create_admin",
    "create_consumer",
    "create_producer",
    "create_restore_consumer",
    "commit_offsets",
    "committed_offsets",
    "create_topics",
    "delete_topics",
    "ensure_reachable",
    "describe_topic_configs",
    "isolation_level",
    "log_start_offsets",
    "offsets_at_time",
    "partition_counts",
    "topic_names",
    "topic_partitions",
    "topics_metadata",
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


#: the last authentication failure librdkafka reported per bootstrap servers (its message names
#: the mechanism and the reason, never the password); a failed first contact is explained with it
_AUTHENTICATION_FAILURES: dict[str, str] = {}


def authentication_failure(bootstrap_servers: str) -> str | None:
    """What the cluster answered the last failed authentication of an admin client, if any."""
    return _AUTHENTICATION_FAILURES.get(bootstrap_servers)


def create_admin(bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> AdminClient:
    """An admin client with the shared profile; ``overrides`` win over it. Authentication failures
    are kept for :func:`authentication_failure` (and go on to the profile's error callback)."""
    config = client_config("admin", bootstrap_servers, overrides)
    then = config.get("error_cb")

    def on_error(error: KafkaError) -> None:
        if error.code() == KafkaError._AUTHENTICATION:  # noqa: SLF001 (librdkafka's code name)
            _AUTHENTICATION_FAILURES[bootstrap_servers] = error.str()
        if then is not None:
            then(error)

    config["error_cb"] = on_error
    return AdminClient(config)


def wait_for_metadata(
    bootstrap_servers: str, timeout: float = 30.0, overrides: Mapping[str, Any] | None = None
) -> int:
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
    admin = create_admin(bootstrap_servers, overrides)
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
    return topics_metadata(admin, topics, timeout).partition_counts()


def existing_topics(admin: AdminClient, timeout: float = 10.0) -> list[str]:
    """The names of every topic of the cluster (source topics by pattern match against them)."""
    metadata = admin.list_topics(timeout=timeout)
    return sorted(name for name, topic in metadata.topics.items() if topic.error is None)


def _await_topic_futures(futures: Mapping[str, Future[None]], timeout: float, tolerated: str) -> None:
    """Wait for each of an admin request's per-topic futures; an error naming ``tolerated`` (the
    outcome asked for holds already: the topic exists, or is gone) is not one."""
    for future in futures.values():
        try:
            future.result(timeout)
        except KafkaException as exc:
            if tolerated not in str(exc):
                raise


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
        _await_topic_futures(futures, timeout, "TOPIC_ALREADY_EXISTS")
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
    admin: AdminClient, topics: Iterable[str], timeout: float = 10.0, *, overrides_only: bool = False
) -> dict[str, dict[str, str]]:
    """Topic-level configs the broker reports for each of ``topics`` (name -> {key: value}).

    Apache Kafka reports every config, defaults included; Tansu reports only the ones set when the
    topic was created, so a key missing here means "the broker's default". Pass existing topics only.

    :param overrides_only: keep only the configs set on the topic itself (source
        ``DYNAMIC_TOPIC_CONFIG``), not the defaults of the broker or of Kafka. Tansu marks every
        config it reports as a default, so on Tansu ask without it.
    :raises KafkaException: when the broker refuses the request for a topic.
    """
    names = list(topics)
    if not names:
        return {}
    futures = admin.describe_configs(
        [ConfigResource(ResourceType.TOPIC, name) for name in names], request_timeout=timeout
    )
    own = ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    return {
        resource.name: {
            key: e.value
            for key, e in future.result(timeout).items()
            if e.value is not None and (not overrides_only or e.source == own)
        }
        for resource, future in futures.items()
    }


@dataclass(frozen=True)
class PartitionInfo:
    """One partition of a topic as the cluster's metadata describes it (broker ids)."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicsMetadata:
    """Some topics as one metadata request described them, and how many brokers it named.

    :ivar brokers: the brokers of the cluster the answer named (the live ones).
    :ivar partitions: each existing topic asked for -> its partitions, in partition order.
    """

    brokers: int
    partitions: Mapping[str, tuple[PartitionInfo, ...]]

    def partition_counts(self) -> dict[str, int]:
        return {name: len(partitions) for name, partitions in self.partitions.items()}

    def replication_factors(self) -> dict[str, int]:
        """Each topic -> the fewest replicas any of its partitions has."""
        return {name: min(len(p.replicas) for p in parts) for name, parts in self.partitions.items() if parts}


def topics_metadata(admin: AdminClient, topics: Iterable[str], timeout: float = 10.0) -> TopicsMetadata:
    """The partitions (leader, replicas, in-sync replicas) of each existing topic among ``topics``
    and the cluster's broker count, read with one all-topics request: a request naming a missing
    topic would create it on the embedded broker. Missing topics are left out."""
    metadata = admin.list_topics(timeout=timeout)
    wanted = set(topics)
    return TopicsMetadata(
        len(metadata.brokers),
        {
            name: tuple(
                PartitionInfo(p.id, p.leader, tuple(p.replicas), tuple(p.isrs))
                for p in sorted(topic.partitions.values(), key=lambda p: p.id)
            )
            for name, topic in metadata.topics.items()
            if name in wanted and topic.error is None
        },
    )


def topic_partitions(admin: AdminClient, topic: str, timeout: float = 10.0) -> list[PartitionInfo] | None:
    """The partitions of ``topic`` in partition order (:func:`topics_metadata`); None when the
    topic does not exist."""
    found = topics_metadata(admin, [topic], timeout).partitions.get(topic)
    return None if found is None else list(found)


# -- offsets and topics for the operator tools (status, reset) -------------------------------


def committed_offsets(
    bootstrap_servers: str, group_id: str, partitions: Iterable[tuple[str, int]], timeout: float = 10.0
) -> dict[tuple[str, int], int | None]:
    """The offsets ``group_id`` committed for ``partitions`` (None where it committed none)."""
    consumer = create_consumer(bootstrap_servers, group_id, {"enable.auto.commit": False})
    try:
        wanted = [TopicPartition(t, p) for t, p in partitions]
        if not wanted:
            return {}
        found = consumer.committed(wanted, timeout=timeout)
        return {(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None) for tp in found}
    finally:
        consumer.close()


def commit_offsets(
    bootstrap_servers: str, group_id: str, offsets: Mapping[tuple[str, int], int], timeout: float = 10.0
) -> None:
    """Commit ``offsets`` for ``group_id`` from outside the group (the group must have no members).

    :raises KafkaException: when the broker refuses a partition's commit.
    """
    consumer = create_consumer(bootstrap_servers, group_id, {"enable.auto.commit": False})
    try:
        result = consumer.commit(
            offsets=[TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())], asynchronous=False
        )
        failed = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in result or [] if tp.error is not None]
        if failed:
            raise KafkaException(f"offset commit refused for {', '.join(failed)}")
    finally:
        consumer.close()


def log_start_offsets(
    bootstrap_servers: str, partitions: Iterable[tuple[str, int]], timeout: float = 10.0
) -> dict[tuple[str, int], int]:
    """Each partition's earliest offset (ListOffsets "earliest", right on Tansu as on Kafka)."""
    consumer = create_restore_consumer(bootstrap_servers)
    try:
        return {
            (t, p): max(0, consumer.get_watermark_offsets(TopicPartition(t, p), timeout=timeout)[0])
            for t, p in partitions
        }
    finally:
        consumer.close()


def offsets_at_time(
    bootstrap_servers: str, partitions: Iterable[tuple[str, int]], timestamp_ms: int, timeout: float = 30.0
) -> dict[tuple[str, int], int]:
    """Per partition, the offset of the first record with a timestamp >= ``timestamp_ms`` (the
    partition's end when there is none).

    Read from the records themselves (from the log start to the first match or the partition's
    end): brokers without ListOffsets-by-timestamp (Tansu) answer the same as Kafka.
    """
    partitions = sorted(set(partitions))
    starts = log_start_offsets(bootstrap_servers, partitions, timeout)
    consumer = create_restore_consumer(bootstrap_servers)
    found: dict[tuple[str, int], int] = {}
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(t, p, starts[(t, p)]) for t, p in partitions])
        pending = set(partitions)
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no end reached within {timeout}s for {sorted(pending)}")
            for message in consumer.consume(1000, 0.2):
                tp = (message.topic(), message.partition())
                if tp not in pending:
                    continue
                error, offset = message.error(), message.offset()
                if offset is None:
                    continue
                if error is None and message.timestamp()[1] >= timestamp_ms:
                    found[tp] = offset
                elif error is not None and error.code() == PARTITION_EOF:
                    found[tp] = offset
                else:
                    continue
                pending.discard(tp)
                consumer.pause([TopicPartition(*tp)])
    finally:
        consumer.close()
    return found


def delete_topics(admin: AdminClient, topics: Iterable[str], timeout: float = 30.0) -> list[str]:
    """Delete ``topics`` and wait until the metadata no longer lists them; returns their names.

    :raises KafkaException: when the broker refuses a deletion.
    """
    names = sorted(set(topics))
    if not names:
        return []
    _await_topic_futures(admin.delete_topics(names, operation_timeout=timeout), timeout, "UNKNOWN_TOPIC")
    deadline = time.monotonic() + timeout
    while partition_counts(admin, names, timeout) and time.monotonic() < deadline:
        time.sleep(0.1)
    return names


def topic_names(admin: AdminClient, timeout: float = 10.0) -> list[str]:
    """Every topic of the cluster (an all-topics metadata request, which creates nothing)."""
    return sorted(admin.list_topics(timeout=timeout).topics)


#: how long every bootstrap address may refuse connections before :func:`ensure_reachable` gives
#: up (nothing listens there; a broker that is merely slow to answer gets the whole timeout)
REFUSED_GIVE_UP_S = 1.0


def ensure_reachable(bootstrap_servers: str, timeout: float = 10.0) -> None:
    """Return once a broker of ``bootstrap_servers`` answers a metadata request.

    A TCP connect is tried first (no librdkafka client, so no log lines while nothing listens);
    when every address refuses it for :data:`REFUSED_GIVE_UP_S`, the answer comes then.

    :raises KafkaUnreachableError: "cannot reach Kafka at <servers> after <timeout> s: <reason>".
    """
    started = time.monotonic()
    deadline = started + timeout
    addresses = []
    for server in bootstrap_servers.split(","):
        host, sep, port = server.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise KafkaUnreachableError(
                f"bootstrap servers must be host:port[,host:port], got {bootstrap_servers!r}"
            )
        addresses.append((host.strip("[]"), int(port)))

    def fail(reason: object, after: float = timeout) -> KafkaUnreachableError:
        return KafkaUnreachableError(f"cannot reach Kafka at {bootstrap_servers} after {after:g} s: {reason}")

    reason: object = "no answer"
    refused_since: float | None = None  # every address refused the connection since then
    while True:
        refused = True
        for address in addresses:
            try:
                socket.create_connection(
                    address, timeout=max(0.1, min(1.0, deadline - time.monotonic()))
                ).close()
                break
            except OSError as exc:
                reason = exc.strerror or exc
                refused &= isinstance(exc, ConnectionRefusedError)
        else:
            now = time.monotonic()
            refused_since = (refused_since or now) if refused else None
            if refused_since is not None and now - refused_since >= REFUSED_GIVE_UP_S:
                raise fail(f"{reason} (nothing listens there)", round(now - started, 1))
            if now >= deadline:
                raise fail(reason)
            time.sleep(0.2)
            continue
        break
    admin = create_admin(bootstrap_servers)
    try:
        metadata = admin.list_topics(timeout=max(0.5, deadline - time.monotonic()))
    except KafkaException as exc:
        error = exc.args[0] if exc.args else exc
        raise fail(error.str() if hasattr(error, "str") else error) from None
    if not metadata.brokers:
        raise fail("the metadata answer lists no broker")
