"""The local brokers the project starts: Apache Kafka (the reference) or the embedded Tansu."""

from __future__ import annotations

from typing import Any

from streams_runtime.brokers.apache_kafka import ApacheKafkaCluster
from streams_runtime.brokers.tansu import EmbeddedBroker
from streams_runtime.errors import BrokerError

#: the ``--kind`` values of ``streams-runtime broker start`` and of the test suite's ``--broker``
BROKER_KINDS = ("tansu", "kafka")

LocalBroker = EmbeddedBroker | ApacheKafkaCluster


def local_broker(kind: str = "tansu", *, nodes: int = 1, **kwargs: Any) -> LocalBroker:
    """An unstarted local broker of ``kind`` ("tansu" or "kafka"); Tansu has one node only."""
    if kind == "kafka":
        return ApacheKafkaCluster(nodes=nodes, **kwargs)
    if kind == "tansu":
        if nodes != 1:
            raise BrokerError(
                f"the embedded Tansu broker runs one node (got nodes={nodes}); use kind 'kafka'"
            )
        kwargs.pop("data_dir", None)
        return EmbeddedBroker(**kwargs)
    raise BrokerError(f"unknown broker kind {kind!r}; allowed: {', '.join(BROKER_KINDS)}")
