"""``streams-runtime status``: an application's members, each instance's tasks, lag per partition.

    streams-runtime status --app-id X [--bootstrap-servers H:P] [--http HOST:PORT ...] [--topics a,b]

Kafka is found as by every command (:mod:`streams_runtime.brokers.bootstrap`); with none
configured nor recorded, ``status`` stops with an error saying how to name one.

* **Members** come from the application's coordination group (DescribeGroups): member id, the
  instance's process id and its ``application_server`` endpoint, from the subscription's user
  data. Brokers that return no subscriptions (Tansu) leave the process id in the member id and the
  endpoint to the workers' HTTP API: the instance of the same process id there names it, once any
  worker answers (``--http``). A member without an endpoint says why: "no endpoint configured", or
  "unknown" while nothing could tell (``--json``: ``endpoint`` null and ``endpoint_note``).
* **Instances and tasks** come from the workers' HTTP API (``/ui/api/instances`` of the first
  endpoint that answers, which gathers every instance's threads, active and standby tasks and
  store lags); the bearer token is read from ``$STREAMS_RUNTIME_HTTP_TOKEN``.
* **Lag per partition** of every input partition the tasks read (or of ``--topics``): the true
  end offset (read to the partition's end, not trusted from ListOffsets) minus the offset
  committed under ``application_id``.
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.request
from typing import Any

from rich.console import Console
from rich.table import Table

from streams_runtime.kafka import clients
from streams_runtime.processor.internals.changelog_ends import ChangelogEndOffsets
from streams_runtime.processor.internals.group_member import (
    GroupMemberDescription,
    describe_application_members,
)
from streams_runtime.tools.cluster import add_bootstrap_option, cluster_of

TOKEN_ENV = "STREAMS_RUNTIME_HTTP_TOKEN"
#: a member whose subscription names no endpoint (its ``application_server`` is not set)
NO_ENDPOINT = "no endpoint configured"
#: a member of a broker that returns no subscriptions (Tansu) that the workers do not list
NOT_LISTED = f"{NO_ENDPOINT}, or the instance is gone: the workers' HTTP API does not list it"
#: the same, when the worker that answered could not read every other instance
UNREAD_ENDPOINT = (
    "unknown: the workers' HTTP API could not read every instance (they read each other with "
    "application_server_forwarding_secret)"
)
#: a member of a broker that returns no subscriptions (Tansu), with no worker answering
UNKNOWN_ENDPOINT = (
    "unknown: the broker returns no member subscriptions; --http HOST:PORT of a worker shows it"
)


def fetch_instances(endpoints: list[str], token: str | None, timeout: float = 5.0) -> dict[str, Any] | None:
    """``/ui/api/instances`` of the first endpoint that answers (None when none does)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    for endpoint in endpoints:
        request = urllib.request.Request(f"http://{endpoint}/ui/api/instances", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 (http only)
                instances: dict[str, Any] = json.loads(answer.read())
                return instances
        except (urllib.error.URLError, OSError, ValueError):
            continue
    return None


def member_endpoint(member: GroupMemberDescription, instances: list[dict[str, Any]] | None) -> dict[str, Any]:
    """``{"endpoint": host:port or None, "endpoint_note": where it came from, or why there is none}``.

    The member's subscription names its ``application_server`` when the broker returns it (Apache
    Kafka does); else (Tansu) the instance of the same process id among ``instances`` (what the
    workers' HTTP API listed, None when no worker answered) names it.
    """
    if member.endpoint:
        return {"endpoint": member.endpoint, "endpoint_note": "from the member's subscription"}
    if member.subscription_known:
        return {"endpoint": None, "endpoint_note": NO_ENDPOINT}
    listed = {i.get("process_id"): i.get("endpoint") for i in instances or []}
    if member.process_id and listed.get(member.process_id):
        return {"endpoint": listed[member.process_id], "endpoint_note": "from the workers' HTTP API"}
    if instances is None:
        return {"endpoint": None, "endpoint_note": UNKNOWN_ENDPOINT}
    if None in listed:  # an instance the answering worker could not read
        return {"endpoint": None, "endpoint_note": UNREAD_ENDPOINT}
    return {"endpoint": None, "endpoint_note": NOT_LISTED}


def collect(
    bootstrap_servers: str, application_id: str, endpoints: list[str], topics: list[str], token: str | None
) -> dict[str, Any]:
    """Everything ``status`` prints, as a dict (also what ``--json`` prints)."""
    state, members = describe_application_members(bootstrap_servers, application_id)
    known = [m.endpoint for m in members if m.endpoint]
    instances = fetch_instances(list(dict.fromkeys(endpoints + known)), token)
    member_rows = [
        {
            "member_id": m.member_id,
            "process_id": m.process_id,
            "client_host": m.client_host,
            **member_endpoint(m, instances["instances"] if instances else None),
        }
        for m in members
    ]
    partitions: set[tuple[str, int]] = set()
    if instances:
        for inst in instances["instances"]:
            for thread in inst.get("threads", []):
                for task in thread["tasks"]:
                    if task["kind"] == "active":
                        for tp in task["partitions"]:
                            topic, _, p = tp.rpartition(":")
                            partitions.add((topic, int(p)))
    if topics:
        counts = clients.partition_counts(clients.create_admin(bootstrap_servers), topics)
        partitions |= {(t, p) for t, n in counts.items() for p in range(n)}
    lags = []
    if partitions:
        wanted = sorted(partitions)
        committed = clients.committed_offsets(bootstrap_servers, application_id, wanted)
        ends_reader = ChangelogEndOffsets(bootstrap_servers, {}, timeout_s=10.0)
        try:
            ends = ends_reader.end_offsets(wanted)
        finally:
            ends_reader.close()
        for tp in wanted:
            position = committed.get(tp)
            lag = ends[tp] - (position or 0)
            lags.append(
                {"topic": tp[0], "partition": tp[1], "committed": position, "end": ends[tp], "lag": lag}
            )
    return {
        "application_id": application_id,
        "group_state": state,
        "members": member_rows,
        "instances": instances["instances"] if instances else None,
        "lags": lags,
    }


def show(status: dict[str, Any], console: Console) -> None:
    console.print(
        f"[bold]{status['application_id']}[/bold]: group {status['group_state'] or 'unknown'}, "
        f"{len(status['members'])} member(s)"
    )
    members = Table("member", "process", "endpoint", title="Members")
    for m in status["members"]:
        members.add_row(m["member_id"][-12:], m["process_id"] or "?", m["endpoint"] or m["endpoint_note"])
    console.print(members)
    if status["instances"] is None:
        console.print("instances: no worker HTTP endpoint answered (give one with --http HOST:PORT)")
    else:
        tasks = Table("instance", "state", "thread", "active tasks", "standby tasks", title="Instances")
        for inst in status["instances"]:
            if inst.get("error"):
                tasks.add_row(inst["endpoint"], "?", "-", inst["error"], "")
            for thread in inst.get("threads", []):
                active = [t["task_id"] for t in thread["tasks"] if t["kind"] == "active"]
                standby = [
                    t["task_id"] + (" (warm-up)" if t["kind"] == "warm-up" else "")
                    for t in thread["tasks"]
                    if t["kind"] != "active"
                ]
                tasks.add_row(
                    inst["endpoint"],
                    inst.get("state", "?"),
                    thread["name"],
                    " ".join(active) or "-",
                    " ".join(standby) or "-",
                )
        console.print(tasks)
    lags = Table("topic", "partition", "committed", "end", "lag", title="Lag per input partition")
    for row in status["lags"]:
        committed = "none" if row["committed"] is None else str(row["committed"])
        lags.add_row(row["topic"], str(row["partition"]), committed, str(row["end"]), str(row["lag"]))
    console.print(lags)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("status", help="an application's members, tasks per instance and lag")
    parser.add_argument("--app-id", required=True, help="the application_id")
    add_bootstrap_option(parser)
    parser.add_argument("--http", action="append", default=[], help="a worker's HTTP endpoint host:port")
    parser.add_argument("--topics", default="", help="comma-separated input topics to report lag for")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    topics = [t.strip() for t in args.topics.split(",") if t.strip()]
    kafka = cluster_of(args)
    status = collect(kafka.servers, args.app_id, args.http, topics, os.environ.get(TOKEN_ENV))
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        console = Console()
        kafka_line = f"Kafka at {kafka.servers} ({kafka.source})"
        console.print(kafka_line, markup=False, highlight=False, soft_wrap=True)
        show(status, console)
    return 0
