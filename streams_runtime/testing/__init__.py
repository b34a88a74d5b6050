"""Broker-free testing of topologies: TopologyTestDriver, TestInputTopic, TestOutputTopic, TestRecord;
and ``read_committed_topic``, which reads what an exactly-once application committed on a broker."""

from streams_runtime.testing.committed import read_committed_topic
from streams_runtime.testing.driver import TopologyTestDriver
from streams_runtime.testing.topics import TestInputTopic, TestOutputTopic, TestRecord

__all__ = ["TestInputTopic", "TestOutputTopic", "TestRecord", "TopologyTestDriver", "read_committed_topic"]
