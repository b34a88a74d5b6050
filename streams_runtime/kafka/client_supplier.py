"""KafkaClientSupplier: where the runtime gets every Kafka client it uses (Kafka Streams' name).

A ``KafkaStreams`` client hands one supplier to everything that talks to Kafka: its
``RuntimeSetup`` (admin client, the leader's changelog-end probe), every ``StreamThread`` (main
consumer, producers, the coordination group's consumer), every ``StoreChangelogReader`` (restore
consumer), the ``GlobalStreamThread`` (global consumer) and state rebuilds (a reading consumer).
Nothing in the runtime calls the factories of :mod:`.clients` directly any more, so a test can
hand the runtime clients that keep their topics in memory and drive a stream thread without a
broker (:class:`streams_runtime.testing.InMemoryClientSupplier`), as Kafka Streams'
``StreamThreadTest`` does with its ``MockClientSupplier``.

:class:`~streams_runtime.processor.internals.default_client_supplier.DefaultKafkaClientSupplier`
creates the clients exactly as the runtime always has: confluent-kafka consumers, producers and
admin clients from the shared profile, and the kafka-python coordination consumer of
:mod:`.membership`.

What a supplied client must offer is what the runtime calls on it; the confluent-kafka classes
are the reference (a consumer: ``assign``/``incremental_assign``/``incremental_unassign``,
``consume``, ``commit``, ``committed``, ``position``, ``pause``/``resume``, ``seek``,
``get_watermark_offsets``, ``assignment``, ``consumer_group_metadata``, ``close``; a producer:
``produce``, ``poll``, ``flush``, ``purge``, the transaction calls, ``close``; an admin client:
``list_topics``, ``create_topics``, ``describe_configs``). One more reader of the log is
supplied: the filter that drops aborted transactions' records under exactly-once
(:class:`AbortedRecordsFilter`, a workaround for the embedded broker). Messages and errors are confluent's
shapes too: ``Message``-like records with ``error()``, ``topic()``, ``partition()``,
``offset()``, ``timestamp()``, ``key()``, ``value()``, ``headers()``, and ``KafkaException``
carrying a ``KafkaError`` (both re-exported by :mod:`.clients`, so a fake raises the real types).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias, Unpack

from streams_runtime.kafka.membership import CoordinationSettings

__all__ = [
    "AbortedRecordsFilter",
    "AdminClientLike",
    "ConsumerClient",
    "CoordinationClient",
    "KafkaClientSupplier",
    "ProducerClient",
]

#: a consumer with confluent-kafka's ``Consumer`` interface (see the module docstring)
ConsumerClient: TypeAlias = Any
#: a producer with confluent-kafka's ``Producer`` interface
ProducerClient: TypeAlias = Any
#: an admin client with confluent-kafka's ``AdminClient`` interface
AdminClientLike: TypeAlias = Any
#: a coordination-group consumer with :class:`~.membership.CoordinationConsumer`'s interface:
#: ``topics``, ``subscribe``, ``poll``, ``request_rejoin``, ``rebalancing``, ``is_leader``,
#: ``group_metadata``, ``close``, ``close_without_leaving``; it runs the group protocol with
#: the :class:`~.membership.GroupAssignor` it was created with
CoordinationClient: TypeAlias = Any


class AbortedRecordsFilter(Protocol):
    """Drops the records of aborted transactions that a read_committed consumer still delivered
    (the embedded broker's :class:`~streams_runtime.brokers.tansu.AbortedFilter`)."""

    #: records dropped so far because their transaction was aborted
    dropped: int

    def committed(self, tp: tuple[str, int], messages: list[Any], *, drop_open: bool = False) -> list[Any]:
        """``messages`` (one partition's, in offset order) without those of aborted transactions."""
        ...

    def reset(self, tp: tuple[str, int]) -> None:
        """Forget ``tp`` (its reader seeks elsewhere, or it was unassigned)."""
        ...

    def close(self) -> None: ...


class KafkaClientSupplier(Protocol):
    """Makes the Kafka clients of one ``KafkaStreams`` client (see the module docstring).

    Each method takes what the runtime's own factories take: the bootstrap servers the client
    resolved and the librdkafka (or, for the coordination consumer, kafka-python) overrides of
    the role; the supplier may ignore the servers (an in-memory supplier does).
    """

    def get_consumer(
        self,
        bootstrap_servers: str,
        group_id: str,
        overrides: Mapping[str, Any] | None = None,
        *,
        low_latency: bool = False,
        read_committed: bool | None = None,
    ) -> ConsumerClient:
        """A stream thread's main consumer (manual assignment, offsets committed under
        ``group_id``), or a reading consumer of a tool (state rebuild)."""
        ...

    def get_restore_consumer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> ConsumerClient:
        """A changelog reader's consumer: manual assignment, partition-EOF events, no commits."""
        ...

    def get_global_consumer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> ConsumerClient:
        """The global stream thread's consumer (as a restore consumer: assign, EOF events)."""
        ...

    def get_producer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> ProducerClient:
        """A producer (``transactional.id`` in ``overrides`` makes it transactional)."""
        ...

    def get_admin(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> AdminClientLike:
        """An admin client (topic listing and creation at start)."""
        ...

    def get_coordination_consumer(self, **settings: Unpack[CoordinationSettings]) -> CoordinationClient:
        """The group member's consumer of the coordination group, running ``assignor``."""
        ...

    def get_aborted_filter(self, bootstrap_servers: str) -> AbortedRecordsFilter | None:
        """What drops the records of aborted transactions that a read_committed restore consumer
        still delivered (the embedded broker sends no aborted-transaction list; see
        :mod:`streams_runtime.brokers.tansu`), or None when this supplier's read_committed consumers never
        deliver them (as on Apache Kafka)."""
        ...
