"""Broker-free testing: TopologyTestDriver, TestInputTopic, TestOutputTopic, TestRecord for a
topology's logic; InMemoryClientSupplier (with its InMemoryCluster) to run the runtime itself (stream
threads, rebalances, commits) without a broker; and ``read_committed_topic``, which reads what an
exactly-once application committed on a broker. The in-memory supplier is imported lazily (it
uses the client libraries' error and offset types; the test driver needs no client library)."""

from typing import Any

from streams_runtime.testing.committed import read_committed_topic
from streams_runtime.testing.driver import TopologyTestDriver
from streams_runtime.testing.topics import TestInputTopic, TestOutputTopic, TestRecord

__all__ = [
    "InMemoryClientSupplier",
    "InMemoryCluster",
    "TestInputTopic",
    "TestOutputTopic",
    "TestRecord",
    "TopologyTestDriver",
    "read_committed_topic",
]


def __getattr__(name: str) -> Any:
    """Lazy import of the in-memory supplier and cluster."""
    if name == "InMemoryClientSupplier":
        from streams_runtime.testing.client_supplier import InMemoryClientSupplier

        return InMemoryClientSupplier
    if name == "InMemoryCluster":
        from streams_runtime.testing.in_memory_cluster import InMemoryCluster

        return InMemoryCluster
    raise AttributeError(f"module 'streams_runtime.testing' has no attribute {name!r}")
