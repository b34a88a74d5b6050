"""Broker-free testing: TopologyTestDriver, TestInputTopic, TestOutputTopic, TestRecord for a
topology's logic; InMemoryClientSupplier (with its InMemoryCluster) to run the runtime itself (stream
threads, rebalances, commits) without a broker; and ``read_committed_topic``, which reads what an
exactly-once application committed on a broker."""

from streams_runtime.testing.client_supplier import InMemoryClientSupplier
from streams_runtime.testing.committed import read_committed_topic
from streams_runtime.testing.driver import TopologyTestDriver
from streams_runtime.testing.in_memory_cluster import InMemoryCluster
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
