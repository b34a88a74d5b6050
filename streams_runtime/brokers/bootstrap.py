"""Which Kafka a command talks to: one rule for every subcommand, the worker and ``KafkaStreams``.

The first of:

1. what the caller was given: ``--bootstrap-servers`` (for the worker, then its app config's
   ``bootstrap_servers``; for ``KafkaStreams``, its ``bootstrap_servers`` config);
2. ``$BOOTSTRAP_SERVERS``;
3. the broker ``streams-runtime broker start`` recorded in the project's home
   (``<home>/broker.json``, :func:`~streams_runtime.kafka.local_processes.runtime_home`: from
   ``$STREAMS_RUNTIME_HOME``, the nearest ``.streams-runtime/`` above the current directory, or the
   checkout the package runs from), while its process is alive;
4. none: ``worker``, ``demo`` and a ``KafkaStreams`` without ``bootstrap_servers`` warn, saying
   how to point at a real cluster, then start a throwaway local broker that lives as long as
   they do (:func:`bootstrap_or_throwaway`); the operator tools (``topics``, ``produce``,
   ``status``, ``reset``) stop with an error saying the same (:func:`require_bootstrap`): what
   they write would go with a throwaway broker, and it holds no application to look at.

A found address is checked to answer when the caller gives a ``connect_timeout`` (the CLI does),
so a dead one ends a command with one line whichever step found it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streams_runtime.brokers.local import local_broker
from streams_runtime.errors import BrokerError
from streams_runtime.kafka.local_processes import HOME_ENV, BrokerInfo, default_state_file, pid_alive

#: the environment variable naming the cluster (step 2)
BOOTSTRAP_SERVERS_ENV = "BOOTSTRAP_SERVERS"
#: how the CLI's commands are given a cluster (step 1)
FLAG = "--bootstrap-servers"
#: steps 2 and 3, for the commands' ``--help``
FLAG_DEFAULT = (
    f"${BOOTSTRAP_SERVERS_ENV}, else the broker recorded by 'streams-runtime broker start' in the "
    "project's home"
)

log = logging.getLogger(__name__)

_KIND_NAMES = {"tansu": "embedded Tansu broker", "kafka": "local Apache Kafka broker"}


@dataclass(frozen=True)
class Bootstrap:
    """The bootstrap servers found, and where: ``--bootstrap-servers``, ``$BOOTSTRAP_SERVERS``,
    ``the broker recorded in <home>/broker.json`` or ``a throwaway ... broker``."""

    servers: str
    source: str
    throwaway: bool = False


def running_broker(state_file: Path | None = None) -> BrokerInfo | None:
    """The broker recorded by ``streams-runtime broker start``, if its first process is alive."""
    info = BrokerInfo.read(state_file or default_state_file())
    return info if info and pid_alive(info.pid) else None


def find_bootstrap(given: str | None = None, *, given_by: str = FLAG) -> Bootstrap | None:
    """Steps 1-3 of the module: the cluster to use, or None when nothing names one.

    :param given: what the caller was given (``--bootstrap-servers``, a config's value), if anything.
    :param given_by: how to name ``given`` in messages.
    """
    if given:
        return Bootstrap(given, given_by)
    configured = os.environ.get(BOOTSTRAP_SERVERS_ENV)
    if configured:
        return Bootstrap(configured, f"${BOOTSTRAP_SERVERS_ENV}")
    state_file = default_state_file()
    recorded = running_broker(state_file)
    if recorded is not None:
        return Bootstrap(recorded.bootstrap_servers, f"the {recorded.kind} broker recorded in {state_file}")
    return None


def recorded_broker_note() -> str:
    """Why step 3 found nothing, naming the file it read and how to choose another home."""
    state_file = default_state_file()
    info = BrokerInfo.read(state_file)
    if info is None:
        found = f"no broker is recorded in {state_file}"
    else:
        found = f"the broker recorded in {state_file} (pid {info.pid}) is not running"
    return f"{found}; ${HOME_ENV} chooses another home"


class NoClusterError(BrokerError):
    """Nothing names a cluster and no local broker is recorded (step 4 of a command that needs one)."""


def require_bootstrap(given: str | None, *, connect_timeout: float | None = None) -> Bootstrap:
    """Steps 1-3 for a command that must not start a throwaway broker (the operator tools:
    what they write would go with it, and it holds no application to look at).

    :raises NoClusterError: when nothing names a cluster, saying the three ways to name one.
    :raises KafkaUnreachableError: with ``connect_timeout``, when the cluster found does not answer.
    """
    found = find_bootstrap(given)
    if found is None:
        raise NoClusterError(
            f"no Kafka cluster to talk to: pass {FLAG} HOST:PORT, set {BOOTSTRAP_SERVERS_ENV}=HOST:PORT, "
            f"or start a local broker with 'streams-runtime broker start' ({recorded_broker_note()})"
        )
    _check_answers(found, connect_timeout)
    return found


def throwaway_warning(kind: str = "tansu", *, configure: str = f"{FLAG} HOST:PORT") -> str:
    """What is said before a throwaway broker starts (step 4), and how to point at a real one."""
    return (
        f"no Kafka configured: starting a throwaway {_KIND_NAMES.get(kind, kind + ' broker')} that "
        "lives only as long as this process (its topics, records and committed offsets go with "
        f"it). To use a real cluster give {configure} or set {BOOTSTRAP_SERVERS_ENV}=HOST:PORT; to "
        "share one local broker between commands, start it with 'streams-runtime broker start' "
        f"({recorded_broker_note()})"
    )


@contextmanager
def bootstrap_or_throwaway(
    given: str | None = None,
    *,
    given_by: str = FLAG,
    kind: str = "tansu",
    warn: Callable[[str], None] | None = None,
    configure: str = f"{FLAG} HOST:PORT",
    connect_timeout: float | None = None,
    **broker_kwargs: Any,
) -> Iterator[Bootstrap]:
    """The module's rule for a command that runs an application: yield the cluster found, else
    warn (``warn``, default: a WARNING log record) and start a local broker of ``kind`` that stops
    when the block exits.

    :param configure: how the warning tells this caller's user to name a cluster.
    :raises KafkaUnreachableError: with ``connect_timeout``, when the cluster found does not answer.
    """
    found = find_bootstrap(given, given_by=given_by)
    if found is not None:
        _check_answers(found, connect_timeout)
        yield found
        return
    (warn or log.warning)(throwaway_warning(kind, configure=configure))
    with local_broker(kind, **broker_kwargs) as broker:
        yield Bootstrap(
            broker.bootstrap_servers, f"a throwaway {_KIND_NAMES.get(kind, kind)}", throwaway=True
        )


@contextmanager
def bootstrap_or_embedded(
    given: str | None = None, *, kind: str = "tansu", **broker_kwargs: Any
) -> Iterator[str]:
    """:func:`bootstrap_or_throwaway` yielding the bootstrap servers only (benchmarks, tests,
    ``KafkaStreams``); the warning goes to the log, naming the ``bootstrap_servers`` config."""
    configure = "bootstrap_servers in the config"
    with bootstrap_or_throwaway(
        given, given_by="bootstrap_servers", kind=kind, configure=configure, **broker_kwargs
    ) as found:
        yield found.servers


def _check_answers(found: Bootstrap, connect_timeout: float | None) -> None:
    """Raise when ``found`` does not answer in ``connect_timeout`` s, saying where the address came
    from when it was not given on the command line."""
    if connect_timeout is None:
        return
    from streams_runtime.kafka.clients import KafkaUnreachableError, ensure_reachable

    try:
        ensure_reachable(found.servers, connect_timeout)
    except KafkaUnreachableError as exc:
        if found.source == FLAG:
            raise
        raise KafkaUnreachableError(f"{exc} (the address came from {found.source})") from None
