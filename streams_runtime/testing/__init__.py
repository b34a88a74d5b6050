"""Broker-free testing of topologies: TopologyTestDriver, TestInputTopic, TestOutputTopic, TestRecord."""

from streams_runtime.testing.driver import TopologyTestDriver
from streams_runtime.testing.topics import TestInputTopic, TestOutputTopic, TestRecord

__all__ = ["TestInputTopic", "TestOutputTopic", "TestRecord", "TopologyTestDriver"]
