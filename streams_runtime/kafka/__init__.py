"""Kafka boundary: the embedded broker and the client factories with the shared profile."""

from streams_runtime.kafka.broker import BrokerInfo, EmbeddedBroker, bootstrap_or_embedded
from streams_runtime.kafka.profile import client_config

__all__ = ["BrokerInfo", "EmbeddedBroker", "bootstrap_or_embedded", "client_config"]
