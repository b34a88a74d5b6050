"""Local brokers: Apache Kafka (the reference) and the embedded Tansu (the zero-install default).

:func:`local_broker` makes either kind; :func:`configured_bootstrap_servers` is the one rule the
commands that look for Kafka follow: the configured cluster if there is one, else the broker
``streams-runtime broker start`` recorded. :func:`bootstrap_or_embedded` (the worker and the
demo) adds an embedded Tansu for the duration of a block when there is none. Which broker a
running cluster *is* is decided from what it says about itself
(:mod:`streams_runtime.kafka.broker_identity`), never from these launchers or its address
(docs/decisions/0009-two-brokers.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from streams_runtime.brokers.apache_kafka import ApacheKafkaCluster
from streams_runtime.errors import BrokerError
from streams_runtime.kafka.local_processes import (
    BrokerInfo,
    default_state_file,
    free_port,
    pid_alive,
    rss_bytes,
    runtime_home,
    stop_pid,
)
from streams_runtime.kafka.tansu.launcher import EmbeddedBroker

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


def running_broker(state_file: Path | None = None) -> BrokerInfo | None:
    """The broker recorded by ``streams-runtime broker start``, if its first process is alive."""
    info = BrokerInfo.read(state_file or default_state_file())
    return info if info and pid_alive(info.pid) else None


def configured_bootstrap_servers(bootstrap_servers: str | None = None) -> str | None:
    """The cluster the user has pointed us at, or None: the one rule the commands that look for
    Kafka follow (``status`` and ``reset`` take ``--bootstrap-servers`` only).

    Resolution order: the ``bootstrap_servers`` argument, ``$BOOTSTRAP_SERVERS``, the broker
    recorded by ``streams-runtime broker start`` (while its first process is alive).
    """
    configured = bootstrap_servers or os.environ.get("BOOTSTRAP_SERVERS")
    if not configured and (recorded := running_broker()):
        configured = recorded.bootstrap_servers
    return configured or None


@contextmanager
def bootstrap_or_embedded(
    bootstrap_servers: str | None = None, *, kind: str = "tansu", **broker_kwargs: Any
) -> Iterator[str]:
    """Yield the bootstrap servers to use; start a local broker only when none is known.

    The cluster of :func:`configured_bootstrap_servers`; only when there is none does a local
    broker of ``kind`` start here (and stop when the block exits).
    """
    configured = configured_bootstrap_servers(bootstrap_servers)
    if configured:
        yield configured
        return
    with local_broker(kind, **broker_kwargs) as broker:
        yield broker.bootstrap_servers


__all__ = [
    "BROKER_KINDS",
    "ApacheKafkaCluster",
    "BrokerInfo",
    "EmbeddedBroker",
    "LocalBroker",
    "bootstrap_or_embedded",
    "configured_bootstrap_servers",
    "default_state_file",
    "free_port",
    "local_broker",
    "pid_alive",
    "rss_bytes",
    "running_broker",
    "runtime_home",
    "stop_pid",
]
