"""The shared client profile: librdkafka settings every client of the project starts from.

Owned by this module; applied by :mod:`streams_runtime.kafka.clients` to every consumer,
producer and admin client the project creates. User overrides always win.

Why each setting (see docs/decisions/0001-embedded-broker.md):

- ``allow.auto.create.topics=false``: Tansu auto-creates unknown topics with 4 partitions when a
  client asks for them; every topic we use is created explicitly with a verified partition count.
- ``fetch.queue.backoff.ms=10``: librdkafka's 1000 ms default throttles a consumer to ~170k msg/s.
- ``fetch.wait.max.ms=20``: Tansu does not wake parked fetches, so a long wait is pure latency
  (20 ms is what the peer harness's broker-only latency floor uses).
- ``enable.idempotence=true`` (producers): Apache Kafka's Java producer default since 3.0, and so
  what every Kafka Streams producer runs with, while librdkafka's default is off. Off, a batch
  retried after a leader fails over can land after a later batch of the same partition (up to
  a million requests in flight): a changelog or a count topic then ends with an older value
  than the last one written (seen on a 3-node cluster: a key's count stuck 25 below the truth).
  On, the broker keeps each partition's records in the order they were produced, once each.
- ``partitioner=murmur2_random`` (producers): Kafka's default partitioner (murmur2 of the key
  bytes, :mod:`streams_runtime.kafka.partitioner`), which the Java clients and so every Kafka
  Streams application assume; librdkafka's default (``consistent_random``, CRC32) puts keyed
  records elsewhere, where a join's other side and the interactive queries' key lookup do not
  look for them.
- ``linger.ms=5``: batches small bursts without adding noticeable latency. The stream threads'
  producers linger longer (``record_collector.DEFAULT_LINGER_MS``): they write many partitions
  at once, and each partition's batch is one produce request.

All of these are also correct against Apache Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMMON: dict[str, Any] = {
    "allow.auto.create.topics": False,
}

CONSUMER: dict[str, Any] = {
    **COMMON,
    "fetch.queue.backoff.ms": 10,
    "fetch.wait.max.ms": 20,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}

#: Lower fetch wait for latency-sensitive clients (interactive tools, tests).
LOW_LATENCY_CONSUMER: dict[str, Any] = {**CONSUMER, "fetch.wait.max.ms": 10}

PRODUCER: dict[str, Any] = {
    **COMMON,
    "enable.idempotence": True,
    "partitioner": "murmur2_random",
    "linger.ms": 5,
}

ADMIN: dict[str, Any] = {}

_ROLES: dict[str, dict[str, Any]] = {
    "consumer": CONSUMER,
    "low_latency_consumer": LOW_LATENCY_CONSUMER,
    "producer": PRODUCER,
    "admin": ADMIN,
}


def client_config(
    role: str, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return the librdkafka config for a client of ``role``, user overrides applied last.

    :param role: one of ``consumer``, ``low_latency_consumer``, ``producer``, ``admin``.
    :param bootstrap_servers: the ``host:port[,host:port]`` list of the cluster.
    :param overrides: librdkafka properties that replace the profile's values.
    :raises ValueError: for an unknown role, naming the allowed ones.
    """
    try:
        base = _ROLES[role]
    except KeyError:
        raise ValueError(f"unknown client role {role!r}; allowed: {sorted(_ROLES)}") from None
    config = {"bootstrap.servers": bootstrap_servers, **base}
    if overrides:
        config.update(overrides)
    return config
