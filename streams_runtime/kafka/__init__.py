"""Kafka boundary: the client factories with the shared profile, and what the broker says it is."""

from streams_runtime.kafka.profile import client_config

__all__ = ["client_config"]
