"""Which broker the runtime talks to, from what the broker says about itself.

The runtime takes Kafka Streams' standard path on every broker except the embedded Tansu, whose
measured gaps (docs/decisions/0001-embedded-broker.md) need workarounds: the transaction-end gate,
the repartition gap guard, the changelog end probe, the wait for a stable changelog end and the
transaction-marker filter of restores. Each of them asks :attr:`BrokerIdentity.is_tansu`, so the
decision has one home and is never taken from an address (an Apache Kafka on localhost takes the
standard path; a Tansu on another host takes the workarounds).

What decides: the cluster id of the metadata response (every Kafka-protocol broker sends one).
Tansu's is ``tansu_cluster`` unless its operator configured another; Apache Kafka's is a random
22-character id made by its storage format tool. A Tansu started with a custom cluster id is taken
for a standard broker: name it with the ``tansu`` prefix to keep the workarounds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from streams_runtime.kafka.clients import KafkaUnreachableError, authentication_failure

__all__ = [
    "STANDARD_BROKER",
    "TANSU_CLUSTER_ID_PREFIX",
    "BrokerIdentity",
    "identify_broker",
]

log = logging.getLogger("streams_runtime.kafka")

#: the prefix of the cluster id Tansu reports by default (``tansu_cluster``)
TANSU_CLUSTER_ID_PREFIX = "tansu"


@dataclass(frozen=True)
class BrokerIdentity:
    """What the cluster says it is: its cluster id, and what follows from it."""

    cluster_id: str

    @property
    def is_tansu(self) -> bool:
        """The embedded Tansu broker: the runtime's workarounds for it are on."""
        return self.cluster_id.lower().startswith(TANSU_CLUSTER_ID_PREFIX)

    @property
    def name(self) -> str:
        return "Tansu (embedded)" if self.is_tansu else "Kafka"

    def describe(self) -> str:
        workarounds = "embedded-broker workarounds on" if self.is_tansu else "standard Kafka path"
        return f"{self.name}, cluster id {self.cluster_id!r}: {workarounds}"


#: a broker that needs no workaround (Apache Kafka), for code paths built without a cluster
STANDARD_BROKER = BrokerIdentity("standard")


class MetadataClient(Protocol):
    """What every Kafka client (admin, producer or consumer) answers: a metadata request, and
    ``poll`` serving its callbacks."""

    def list_topics(self, topic: str | None = ..., timeout: float = ...) -> object: ...

    def poll(self, timeout: float = ...) -> object: ...


def identify_broker(
    client: MetadataClient, timeout_s: float = 10.0, bootstrap_servers: str | None = None
) -> BrokerIdentity:
    """Ask the cluster behind ``client`` (admin, producer or consumer) for its cluster id.

    :raises KafkaUnreachableError: when the cluster does not answer a metadata request in
        ``timeout_s`` (saying why when it refused the client's credentials).
    """
    try:
        metadata = client.list_topics(timeout=timeout_s)
    except Exception as exc:  # librdkafka raises KafkaException; the in-memory admin never does
        if bootstrap_servers and hasattr(client, "describe_cluster"):  # an admin: serve its error callbacks
            client.poll(0.5)
        refused = authentication_failure(bootstrap_servers) if bootstrap_servers else None
        why = f"authentication failed: {refused}" if refused else str(exc)
        raise KafkaUnreachableError(
            f"cannot reach Kafka at {bootstrap_servers or 'the bootstrap servers'} within {timeout_s}s "
            f"({why}); check bootstrap_servers and the security settings (client.security.protocol, "
            "client.sasl.*, client.ssl.*)"
        ) from exc
    identity = BrokerIdentity(str(getattr(metadata, "cluster_id", None) or ""))
    log.info("broker: %s", identity.describe())
    return identity
