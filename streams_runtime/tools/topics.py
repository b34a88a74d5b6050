"""``streams-runtime topics``: create, list and describe topics, without another tool.

    streams-runtime topics create NAME [NAME ...] --partitions N [--replication-factor R]
        [--config KEY=VALUE ...] [--if-not-exists]
    streams-runtime topics list [--exclude-internal]
    streams-runtime topics describe NAME [NAME ...]

Each finds the cluster as :mod:`streams_runtime.tools.cluster` says (``--bootstrap-servers``,
``$BOOTSTRAP_SERVERS``, the recorded local broker).

* ``create`` looks first: when a named topic exists it creates none of them and names the ones
  that exist (exit 1); with ``--if-not-exists`` it creates the missing ones and leaves the others
  as they are. The replication factor defaults to the broker's ``default.replication.factor``;
  ``--config`` sets topic-level configs (``cleanup.policy=compact``, ``retention.ms=...``). Each
  new topic's partition count is verified before the command returns; a topic the broker refuses
  is named with the broker's reason, and the others are still created.
* ``list`` prints every topic's name, one per line, sorted (``--exclude-internal`` leaves out the
  broker's own ``__`` topics).
* ``describe`` prints what Kafka's ``kafka-topics --describe`` prints: partition count,
  replication factor and the topic's own configs (those set on it; the broker's and Kafka's
  defaults are left out), then each partition's leader, replicas and in-sync replicas (broker
  ids). A missing topic is named: "topic X does not exist" (exit 1).

Exit codes: 0 done, 1 a clear error was printed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import re

from streams_runtime.errors import StreamsError
from streams_runtime.kafka import clients
from streams_runtime.kafka.broker_identity import identify_broker
from streams_runtime.tools.cluster import add_bootstrap_option, bootstrap_servers, broker_reason

#: Kafka's rule for topic names (its ``Topic.validate``): these characters, at most 249 of them
_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


class TopicsError(StreamsError):
    """A topic exists (create), does not exist (describe), or the broker refused a request."""


def topic_name(text: str) -> str:
    """An argparse ``type``: a name Kafka accepts for a topic."""
    if not _LEGAL_NAME.match(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a legal topic name: use up to 249 of the characters a-z A-Z 0-9 . _ -"
        )
    return text


def config_pair(text: str) -> tuple[str, str]:
    """An argparse ``type``: ``KEY=VALUE``."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"--config takes KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def _partitions_text(count: int) -> str:
    return f"{count} partition{'s' if count != 1 else ''}"


def create(args: argparse.Namespace) -> int:
    servers = bootstrap_servers(args)
    admin = clients.create_admin(servers)
    names = list(dict.fromkeys(args.names))
    existing = clients.partition_counts(admin, names)
    if existing and not args.if_not_exists:
        found = ", ".join(
            f"{name} ({_partitions_text(existing[name])})" for name in names if name in existing
        )
        which = "topic" if len(existing) == 1 else "topics"
        raise TopicsError(
            f"{which} {found} already exist{'s' if len(existing) == 1 else ''} on {servers}; "
            "nothing was created (--if-not-exists leaves existing topics as they are)"
        )
    for name in names:
        if name in existing:
            print(f"topic {name} exists ({_partitions_text(existing[name])}); left as it is")
    replication = (
        "the broker's default replication factor"
        if args.replication_factor == -1
        else f"replication factor {args.replication_factor}"
    )
    refused = []
    for name in (n for n in names if n not in existing):
        spec = clients.TopicSpec(name, args.partitions, args.replication_factor, dict(args.config))
        try:
            clients.create_topics(admin, [spec])
        except clients.KafkaException as exc:
            refused.append(f"{name} ({broker_reason(exc)})")
            continue
        except ValueError as exc:  # created by someone else meanwhile, with another partition count
            refused.append(f"{name} ({exc})")
            continue
        print(f"created topic {name} ({_partitions_text(args.partitions)}, {replication})")
    if refused:
        raise TopicsError("could not create " + "; ".join(refused))
    return 0


def list_topics(args: argparse.Namespace) -> int:
    admin = clients.create_admin(bootstrap_servers(args))
    for name in clients.existing_topics(admin):
        if not (args.exclude_internal and name.startswith("__")):
            print(name)
    return 0


def describe(args: argparse.Namespace) -> int:
    servers = bootstrap_servers(args)
    admin = clients.create_admin(servers)
    # Tansu reports only the configs set when the topic was created, each marked as a default
    own_only = not identify_broker(admin, bootstrap_servers=servers).is_tansu
    missing = []
    for name in dict.fromkeys(args.names):
        partitions = clients.topic_partitions(admin, name)
        if partitions is None:
            missing.append(name)
            continue
        configs = clients.describe_topic_configs(admin, [name], overrides_only=own_only)[name]
        shown = ",".join(f"{key}={value}" for key, value in sorted(configs.items()))
        replication = len(partitions[0].replicas) if partitions else 0
        print(
            f"Topic: {name}\tPartitionCount: {len(partitions)}\tReplicationFactor: {replication}\t"
            f"Configs: {shown}"
        )
        for p in partitions:
            replicas, isr = ",".join(map(str, p.replicas)), ",".join(map(str, p.isr))
            where = f"Leader: {p.leader}\tReplicas: {replicas}\tIsr: {isr}"
            print(f"\tTopic: {name}\tPartition: {p.partition}\t{where}")
    if missing:
        which = "topic" if len(missing) == 1 else "topics"
        raise TopicsError(
            f"{which} {', '.join(missing)} do{'es' if len(missing) == 1 else ''} not exist on {servers}"
        )
    return 0


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return number


def _replication_factor(text: str) -> int:
    if text.strip() == "-1":
        return -1
    return _positive(text)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("topics", help="create, list and describe topics")
    actions = parser.add_subparsers(dest="action", required=True)

    make = actions.add_parser("create", help="create topics (none when one of them exists)")
    make.add_argument("names", nargs="+", metavar="NAME", type=topic_name, help="topics to create")
    make.add_argument("--partitions", type=_positive, required=True, help="partitions of each topic")
    make.add_argument(
        "--replication-factor",
        type=_replication_factor,
        default=-1,
        help="replicas of each partition (default -1: the broker's default.replication.factor)",
    )
    make.add_argument(
        "--config",
        type=config_pair,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a topic-level config, e.g. cleanup.policy=compact (repeat for more)",
    )
    make.add_argument(
        "--if-not-exists", action="store_true", help="leave existing topics as they are instead of failing"
    )
    add_bootstrap_option(make)
    make.set_defaults(func=create)

    listing = actions.add_parser("list", help="every topic's name, one per line")
    listing.add_argument("--exclude-internal", action="store_true", help="leave out the broker's __ topics")
    add_bootstrap_option(listing)
    listing.set_defaults(func=list_topics)

    show = actions.add_parser("describe", help="partitions, leaders, replicas and configs of topics")
    show.add_argument("names", nargs="+", metavar="NAME", help="topics to describe")
    add_bootstrap_option(show)
    show.set_defaults(func=describe)
