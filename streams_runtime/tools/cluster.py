"""The cluster the ``topics`` and ``produce`` commands talk to.

Found by the worker's and the demo's rule (:func:`streams_runtime.brokers.configured_bootstrap_servers`:
``--bootstrap-servers``, ``$BOOTSTRAP_SERVERS``, the broker ``streams-runtime broker start``
recorded). Unlike the worker and the demo, these commands never start an embedded broker when
none is found: it would stop when the command ends, and the topics and records with it.
"""

from __future__ import annotations

import argparse

from streams_runtime.brokers import configured_bootstrap_servers
from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import KafkaError, KafkaException, ensure_reachable


class NoClusterError(StreamsError):
    """No cluster is configured and no local broker is running."""


def add_bootstrap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-servers",
        default=None,
        help="host:port of the cluster (default: $BOOTSTRAP_SERVERS, else the broker "
        "'streams-runtime broker start' recorded)",
    )


def bootstrap_servers(args: argparse.Namespace) -> str:
    """The cluster of ``args``, answering; the command line has checked an explicit one already.

    :raises NoClusterError: when none is configured, saying how to give one.
    :raises KafkaUnreachableError: when the configured one does not answer in ``--connect-timeout``.
    """
    servers = configured_bootstrap_servers(args.bootstrap_servers)
    if servers is None:
        raise NoClusterError(
            "no Kafka cluster to talk to: pass --bootstrap-servers HOST:PORT, set BOOTSTRAP_SERVERS, "
            "or start a local broker with 'streams-runtime broker start'"
        )
    if not args.bootstrap_servers:
        ensure_reachable(servers, args.connect_timeout)
    return servers


def broker_reason(exc: KafkaException) -> str:
    """What the client or the broker said, from the error a client call raised: ``NAME: text``."""
    error = exc.args[0] if exc.args else exc
    if isinstance(error, KafkaError):
        return f"{error.name()}: {error.str()}"
    return str(error)
