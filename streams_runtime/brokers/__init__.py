"""Local brokers: Apache Kafka (the reference) and the embedded Tansu (the zero-install default).

:func:`local_broker` makes either kind; :mod:`.bootstrap` holds the one rule every command and
``KafkaStreams`` follow to find Kafka: the configured cluster if there is one, else the broker
``streams-runtime broker start`` recorded in the project's home (:func:`runtime_home`), else, for
the commands that run an application, a throwaway embedded broker after a warning (the operator
tools stop with an error instead). Which broker a
running cluster *is* is decided from what it says about itself
(:mod:`streams_runtime.kafka.broker_identity`), never from these launchers or its address
(docs/decisions/0009-two-brokers.md).
"""

from __future__ import annotations

from streams_runtime.brokers.apache_kafka import ApacheKafkaCluster
from streams_runtime.brokers.bootstrap import (
    BOOTSTRAP_SERVERS_ENV,
    Bootstrap,
    NoClusterError,
    bootstrap_or_embedded,
    bootstrap_or_throwaway,
    find_bootstrap,
    require_bootstrap,
    running_broker,
)
from streams_runtime.brokers.local import BROKER_KINDS, LocalBroker, local_broker
from streams_runtime.brokers.tansu import EmbeddedBroker
from streams_runtime.kafka.local_processes import (
    BrokerInfo,
    default_state_file,
    free_port,
    free_ports,
    pid_alive,
    rss_bytes,
    runtime_home,
    stop_pid,
)

__all__ = [
    "BOOTSTRAP_SERVERS_ENV",
    "BROKER_KINDS",
    "ApacheKafkaCluster",
    "Bootstrap",
    "BrokerInfo",
    "EmbeddedBroker",
    "LocalBroker",
    "NoClusterError",
    "bootstrap_or_embedded",
    "bootstrap_or_throwaway",
    "default_state_file",
    "find_bootstrap",
    "free_port",
    "free_ports",
    "local_broker",
    "pid_alive",
    "require_bootstrap",
    "rss_bytes",
    "running_broker",
    "runtime_home",
    "stop_pid",
]
