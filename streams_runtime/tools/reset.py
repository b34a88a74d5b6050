"""``streams-runtime reset``: the application reset tool (Kafka's ``kafka-streams-application-reset``).

    streams-runtime reset --app-id X [--bootstrap-servers H:P] --input-topics a,b
        [--to-earliest | --to-datetime 2026-01-31T12:00:00 | --by-duration PT1H]
        [--wipe-local-state DIR] [--dry-run] [--force]

Kafka is found as by every command (:mod:`streams_runtime.brokers.bootstrap`); with none
configured nor recorded, ``reset`` stops with an error saying how to name one.

After a reset, the next run of the application reprocesses its input from the chosen position as
a first run would. Steps (all planned and printed first; ``--dry-run`` stops there):

1. refuse while the application's coordination group lists members: a running instance would
   commit over the reset offsets and keep its state. ``--force`` goes on with a warning, for
   members that are gone but still listed (a session not yet expired; Tansu keeps listing an
   instance that closed without LeaveGroup, as a group leader does, until another member joins);
2. reset the committed offsets of the input topics under ``application_id``: to each partition's
   log start (``--to-earliest``, the default), or to the first record at or after a time
   (``--to-datetime``, ISO 8601, UTC unless an offset is given; ``--by-duration``: that long
   before now, ISO 8601 duration such as ``PT15M`` or ``P1DT2H``). The time lookup reads the
   records' timestamps, so it is the same on brokers without ListOffsets-by-timestamp;
3. delete the internal topics: every ``<application_id>-...-repartition`` and
   ``<application_id>-...-changelog`` topic (the application re-creates them on start; the
   deletion also drops the group's offsets on them);
4. ``--wipe-local-state DIR``: delete the application's state directories under DIR
   (``DIR/<application_id>`` and, for the worker's layout, ``DIR/instance-*/<application_id>``),
   as ``KafkaStreams.clean_up()`` does on each instance.

Exit codes: 0 done (or planned, with ``--dry-run``), 1 refused or failed with a clear message.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streams_runtime.errors import StreamsError
from streams_runtime.kafka import clients
from streams_runtime.processor.internals.group_member import describe_application_members
from streams_runtime.tools.cluster import add_bootstrap_option, cluster_of

INTERNAL_SUFFIXES = ("-repartition", "-changelog")
_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


class ResetError(StreamsError):
    """The reset was refused (active members, unknown topics) or a step failed."""


@dataclass
class ResetPlan:
    application_id: str
    target: str  # human description of the position
    offsets: dict[tuple[str, int], tuple[int | None, int]] = field(default_factory=dict)  # (old, new)
    internal_topics: list[str] = field(default_factory=list)
    state_dirs: list[Path] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"Reset of application {self.application_id}: input offsets to {self.target}"]
        for (topic, partition), (old, new) in sorted(self.offsets.items()):
            shown = "none" if old is None else str(old)
            out.append(f"  Topic: {topic} Partition: {partition} Offset: {shown} -> {new}")
        if self.internal_topics:
            out.append("Internal topics to delete: " + ", ".join(self.internal_topics))
        else:
            out.append("Internal topics to delete: none found")
        for path in self.state_dirs:
            out.append(f"Local state to delete: {path}")
        return out


def parse_duration(text: str) -> timedelta:
    """An ISO 8601 duration (``PT15M``, ``P1DT2H``, ``PT30S``)."""
    match = _DURATION.match(text.strip().upper())
    if not match or not any(match.groups()) or text.strip().upper().endswith("T"):
        raise ResetError(f"--by-duration must be an ISO 8601 duration such as PT15M or P1DT2H, got {text!r}")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def parse_datetime(text: str) -> datetime:
    """ISO 8601 date-time; UTC when no offset is given."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ResetError(
            f"--to-datetime must be an ISO 8601 date-time such as 2026-01-31T12:00:00 or "
            f"2026-01-31T12:00:00+01:00, got {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_no_active_members(bootstrap_servers: str, application_id: str, force: bool = False) -> str | None:
    """Raise while the coordination group lists members; with ``force``, return a warning naming
    them instead (for members that are gone but still listed: Tansu keeps listing an instance
    that closed without LeaveGroup, as a group leader does)."""
    state, members = describe_application_members(bootstrap_servers, application_id)
    if not members:
        return None
    who = ", ".join(sorted({m.endpoint or m.member_id for m in members}))
    if force:
        return (
            f"warning: --force: resetting {application_id} although its group lists "
            f"{len(members)} member(s) (group state {state}: {who})"
        )
    raise ResetError(
        f"cannot reset application {application_id}: it has {len(members)} active member(s) "
        f"(group state {state}: {who}); stop every instance first. If every instance is stopped "
        "and the broker still lists members (their session has not expired, or the broker keeps "
        "members that closed without leaving, as Tansu does), rerun with --force"
    )


def plan(
    bootstrap_servers: str,
    application_id: str,
    input_topics: list[str],
    timestamp_ms: int | None,
    wipe_local_state: Path | None,
) -> ResetPlan:
    admin = clients.create_admin(bootstrap_servers)
    existing = clients.topic_names(admin)
    missing = [t for t in input_topics if t not in existing]
    if missing:
        raise ResetError(f"input topic(s) not found on {bootstrap_servers}: {', '.join(missing)}")
    counts = clients.partition_counts(admin, input_topics)
    partitions = [(t, p) for t in input_topics for p in range(counts[t])]
    old = clients.committed_offsets(bootstrap_servers, application_id, partitions)
    if timestamp_ms is None:
        new = clients.log_start_offsets(bootstrap_servers, partitions)
        target = "the earliest offsets"
    else:
        new = clients.offsets_at_time(bootstrap_servers, partitions, timestamp_ms)
        when = datetime.fromtimestamp(timestamp_ms / 1000, UTC).isoformat()
        target = f"the first records at or after {when}"
    prefix = f"{application_id}-"
    internal = [t for t in existing if t.startswith(prefix) and t.endswith(INTERNAL_SUFFIXES)]
    result = ResetPlan(application_id, target, {tp: (old.get(tp), new[tp]) for tp in partitions}, internal)
    if wipe_local_state is not None:
        root = Path(wipe_local_state)
        candidates = [root / application_id, *sorted(root.glob(f"instance-*/{application_id}"))]
        result.state_dirs = [p for p in candidates if p.is_dir()]
    return result


def apply(bootstrap_servers: str, reset: ResetPlan) -> None:
    clients.commit_offsets(
        bootstrap_servers, reset.application_id, {tp: new for tp, (_, new) in reset.offsets.items()}
    )
    clients.delete_topics(clients.create_admin(bootstrap_servers), reset.internal_topics)
    for path in reset.state_dirs:
        shutil.rmtree(path)


def _checked(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse ``type`` from a parser raising ResetError (bad values end as usage errors)."""

    def check(text: str) -> object:
        try:
            return parse(text)
        except ResetError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return check


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "reset", help="reset an application to reprocess its input (Kafka's application reset tool)"
    )
    parser.add_argument("--app-id", required=True, help="the application_id to reset")
    add_bootstrap_option(parser)
    parser.add_argument(
        "--input-topics", required=True, help="comma-separated input topics whose offsets are reset"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--to-earliest", action="store_true", help="to each partition's log start (default)")
    where.add_argument(
        "--to-datetime", type=_checked(parse_datetime), help="to the first record at or after this ISO time"
    )
    where.add_argument(
        "--by-duration", type=_checked(parse_duration), help="to this ISO 8601 duration before now (PT1H)"
    )
    parser.add_argument("--wipe-local-state", default=None, help="state directory to clean up")
    parser.add_argument("--dry-run", action="store_true", help="print what would be done, change nothing")
    parser.add_argument(
        "--force",
        action="store_true",
        help="reset although the group still lists members (only when every instance is stopped)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    topics = [t.strip() for t in args.input_topics.split(",") if t.strip()]
    if not topics:
        raise ResetError("--input-topics names no topic")
    timestamp_ms = None
    if args.to_datetime is not None:
        timestamp_ms = int(args.to_datetime.timestamp() * 1000)
    elif args.by_duration is not None:
        timestamp_ms = int((time.time() - args.by_duration.total_seconds()) * 1000)
    kafka = cluster_of(args)
    servers = kafka.servers
    warning = check_no_active_members(servers, args.app_id, args.force)
    if warning:
        print(warning, file=sys.stderr)
    wipe = Path(args.wipe_local_state) if args.wipe_local_state else None
    reset = plan(servers, args.app_id, topics, timestamp_ms, wipe)
    print(f"Kafka at {servers} ({kafka.source})")
    for line in reset.lines():
        print(line)
    if args.dry_run:
        print("Dry run: nothing was changed.")
        return 0
    apply(servers, reset)
    print(f"Done: application {args.app_id} is reset; its next run reprocesses the input.")
    return 0
