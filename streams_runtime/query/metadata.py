"""Where a store's partitions live: KeyQueryMetadata, StreamsMetadata and LagInfo.

Kafka Streams' query metadata, computed from the host maps of the last assignment this client's
threads applied (``AssignmentInfo.partitions_by_host`` / ``standby_partitions_by_host``: every
instance's ``application_server`` endpoint -> the source partitions of its active / standby
tasks, for the whole group). A partition of a task withheld during a hand-off is under no host:
its ``active_host`` is None (migrating) until the next assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo, HostPartitions


class HostInfo(NamedTuple):
    """An instance's ``application_server`` endpoint."""

    host: str
    port: int

    @classmethod
    def parse(cls, endpoint: str) -> HostInfo:
        host, _, port = endpoint.rpartition(":")
        return cls(host, int(port))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


UNAVAILABLE = HostInfo("unavailable", -1)


@dataclass(frozen=True)
class KeyQueryMetadata:
    """Which instance answers for a key: ``active_host`` (None while the partition migrates),
    the ``standby_hosts`` (stale reads), and the key's ``partition``."""

    active_host: HostInfo | None
    standby_hosts: frozenset[HostInfo]
    partition: int


@dataclass(frozen=True)
class StreamsMetadata:
    """One instance of the application: its endpoint, the stores it hosts, its partitions."""

    host_info: HostInfo
    state_store_names: frozenset[str]
    topic_partitions: frozenset[tuple[str, int]]
    standby_state_store_names: frozenset[str]
    standby_topic_partitions: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class LagInfo:
    """How far a local store partition is behind its changelog's end (offsets; ``lag`` records)."""

    current_offset_position: int
    end_offset_position: int
    offset_lag: int


def latest_assignment(threads: list[Any]) -> AssignmentInfo | None:
    """The host maps the live threads applied last (every member of a generation gets the same
    maps); a thread with hosts wins over one without (a thread not assigned yet). None before any."""
    infos: list[AssignmentInfo] = [info for info in (t.assignment for t in threads) if info is not None]
    with_hosts = [info for info in infos if info.partitions_by_host]
    found = with_hosts or infos
    return found[0] if found else None


def hosts_of(host_map: HostPartitions | None, topics: list[str], partition: int) -> set[HostInfo]:
    """Endpoints whose partitions include ``partition`` of one of ``topics``."""
    wanted = {(t, partition) for t in topics}
    return {
        HostInfo.parse(host)
        for host, parts in (host_map or {}).items()
        if any((p.topic, p.partition) in wanted for p in parts)
    }


def streams_metadata(
    assignment: AssignmentInfo | None, store_topics: dict[str, list[str]]
) -> list[StreamsMetadata]:
    """One StreamsMetadata per endpoint of ``assignment``; ``store_topics``: store -> the source
    topics of its sub-topology."""
    if assignment is None:
        return []
    hosts = set(assignment.partitions_by_host) | set(assignment.standby_partitions_by_host)
    out = []
    for host in sorted(hosts):
        active = {(p.topic, p.partition) for p in assignment.partitions_by_host.get(host, ())}
        standby = {(p.topic, p.partition) for p in assignment.standby_partitions_by_host.get(host, ())}
        out.append(
            StreamsMetadata(
                HostInfo.parse(host),
                frozenset(s for s, topics in store_topics.items() if any(tp[0] in topics for tp in active)),
                frozenset(active),
                frozenset(s for s, topics in store_topics.items() if any(tp[0] in topics for tp in standby)),
                frozenset(standby),
            )
        )
    return out
