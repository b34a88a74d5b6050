"""DefaultKafkaClientSupplier: the real Kafka clients (Kafka Streams' class of the same name).

The :class:`~streams_runtime.kafka.client_supplier.KafkaClientSupplier` every component uses when
it is given none: confluent-kafka consumers, producers and admin clients from
:mod:`streams_runtime.kafka.clients`, the kafka-python coordination consumer of
:mod:`streams_runtime.kafka.membership`, and the embedded broker's filter of aborted records
(:class:`streams_runtime.brokers.tansu.AbortedFilter`), which the changelog readers ask for on
Tansu only. It lives above the client boundary, as Kafka Streams' lives in
``processor.internals``, because it hands out the embedded broker's workaround.
"""

from __future__ import annotations

from streams_runtime.brokers.tansu import AbortedFilter
from streams_runtime.kafka import clients
from streams_runtime.kafka.membership import create_coordination_consumer

__all__ = ["DEFAULT_CLIENT_SUPPLIER", "DefaultKafkaClientSupplier"]


class DefaultKafkaClientSupplier:
    """The real clients: confluent-kafka from :mod:`~streams_runtime.kafka.clients`, kafka-python
    from :mod:`~streams_runtime.kafka.membership`.

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
