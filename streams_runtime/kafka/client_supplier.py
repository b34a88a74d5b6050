"""KafkaClientSupplier: where the runtime gets every Kafka client it uses (Kafka Streams' name).

A ``KafkaStreams`` client hands one supplier to everything that talks to Kafka: its
``RuntimeSetup`` (admin client, the leader's changelog-end probe), every ``StreamThread`` (main
consumer, producers, the coordination group's consumer), every ``StoreChangelogReader`` (restore
consumer), the ``GlobalStreamThread`` (global consumer) and state rebuilds (a reading consumer).
Nothing in the runtime calls the factories of :mod:`.clients` directly any more, so a test can
hand the runtime clients that keep their topics in memory and drive a stream thread without a
broker (:class:`streams_runtime.testing.InMemoryClientSupplier`), as Kafka Streams'
``StreamThreadTest`` does with its ``MockClientSupplier``.

:class:`DefaultKafkaClientSupplier` creates the clients exactly as the runtime always has:
confluent-kafka consumers, producers and admin clients from the shared profile, and the
kafka-python coordination consumer of :mod:`.membership`.

What a supplied client must offer is what the runtime calls on it; the confluent-kafka classes
are the reference (a consumer: ``assign``/``incremental_assign``/``incremental_unassign``,
``consume``, ``commit``, ``committed``, ``position``, ``pause``/``resume``, ``seek``,
``get_watermark_offsets``, ``assignment``, ``consumer_group_metadata``, ``close``; a producer:
``produce``, ``poll``, ``flush``, ``purge``, the transaction calls, ``close``; an admin client:
``list_topics``, ``create_topics``, ``describe_configs``). One more reader of the log is
supplied: the filter that drops aborted transactions' records under exactly-once
(:mod:`.transaction_markers`, a workaround for the embedded broker). Messages and errors are confluent's
shapes too: ``Message``-like records with ``error()``, ``topic()``, ``partition()``,
``offset()``, ``timestamp()``, ``key()``, ``value()``, ``headers()``, and ``KafkaException``
carrying a ``KafkaError`` (both re-exported by :mod:`.clients`, so a fake raises the real types).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias

from streams_runtime.kafka import clients
from streams_runtime.kafka.membership import GroupAssignor, create_coordination_consumer
from streams_runtime.kafka.tansu.transaction_markers import AbortedFilter

__all__ = [
    "AdminClientLike",
    "ConsumerClient",
    "CoordinationClient",
    "DefaultKafkaClientSupplier",
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

    def get_coordination_consumer(
        self,
        *,
        bootstrap_servers: str,
        group_id: str,
        client_id: str,
        assignor: GroupAssignor,
        session_timeout_ms: int,
        heartbeat_interval_ms: int,
        overrides: Mapping[str, Any] | None = None,
    ) -> CoordinationClient:
        """The group member's consumer of the coordination group, running ``assignor``."""
        ...

    def get_aborted_filter(self, bootstrap_servers: str) -> AbortedFilter | None:
        """What drops the records of aborted transactions that a read_committed restore consumer
        still delivered (the embedded broker sends no aborted-transaction list; see
        :mod:`.transaction_markers`), or None when this supplier's read_committed consumers never
        deliver them (as on Apache Kafka)."""
        ...


class DefaultKafkaClientSupplier:
    """The real clients: confluent-kafka from :mod:`.clients`, kafka-python from :mod:`.membership`.

    Each getter is the runtime's own factory (same parameters as the Protocol's)."""

    get_consumer = staticmethod(clients.create_consumer)
    get_restore_consumer = staticmethod(clients.create_restore_consumer)
    #: the global consumer reads as a restore consumer does (assign, EOF events)
    get_global_consumer = staticmethod(clients.create_restore_consumer)
    get_producer = staticmethod(clients.create_producer)
    get_admin = staticmethod(clients.create_admin)
    get_coordination_consumer = staticmethod(create_coordination_consumer)

    def get_aborted_filter(self, bootstrap_servers: str) -> AbortedFilter | None:
        return AbortedFilter(bootstrap_servers)


#: the supplier every component uses when it is given none
DEFAULT_CLIENT_SUPPLIER = DefaultKafkaClientSupplier()
