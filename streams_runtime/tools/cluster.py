"""The cluster the operator tools (``topics``, ``produce``, ``status``, ``reset``) talk to.

Found by the one rule of :mod:`streams_runtime.brokers.bootstrap`: ``--bootstrap-servers``,
``$BOOTSTRAP_SERVERS``, the broker ``streams-runtime broker start`` recorded in the project's
home. Unlike the worker and the demo, these commands never start a throwaway broker when none is
found: it would stop when the command ends, and the topics and records with it (and it holds no
application to look at); they stop with an error saying how to give one.
"""

from __future__ import annotations

import argparse

from streams_runtime.brokers import Bootstrap, require_bootstrap
from streams_runtime.brokers.bootstrap import FLAG_DEFAULT
from streams_runtime.kafka.clients import KafkaError, KafkaException


def add_bootstrap_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-servers", default=None, help=f"host:port of the cluster (default: {FLAG_DEFAULT})"
    )


def cluster_of(args: argparse.Namespace) -> Bootstrap:
    """The cluster of ``args`` and where its address came from, checked to answer.

    :raises NoClusterError: when none is configured, saying how to give one.
    :raises KafkaUnreachableError: when it does not answer in ``--connect-timeout`` seconds.
    """
    return require_bootstrap(args.bootstrap_servers, connect_timeout=args.connect_timeout)


def bootstrap_servers(args: argparse.Namespace) -> str:
    """The bootstrap servers of :func:`cluster_of`."""
    return cluster_of(args).servers


def broker_reason(exc: KafkaException) -> str:
    """What the client or the broker said, from the error a client call raised: ``NAME: text``."""
    error = exc.args[0] if exc.args else exc
    if isinstance(error, KafkaError):
        return f"{error.name()}: {error.str()}"
    return str(error)
