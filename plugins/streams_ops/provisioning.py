"""Topic provisioning: declared topics and a topology's internal topics, created and verified.

Plain Python (no Airflow), driven by :class:`streams_ops.operators.provisioning.ProvisionTopicsOperator`.

What is wanted comes from two places:

- a spec file kept in the repo (YAML or JSON)::

      defaults: {replication_factor: 1}
      topics:
        - {name: demo-payments, partitions: 3, config: {cleanup.policy: delete, retention.ms: "604800000"}}
      topologies: ["my_app.topology:build"]

- topologies named by module path ``package.module:attr``, where ``attr`` is a ``Topology`` or a
  callable returning one (or ``(topology, config)``, as the worker's ``--app`` accepts). Their
  repartition and changelog topics come from ``Topology.internal_topics()``; the partition count of
  each is the task count of its sub-topology (``Topology.task_counts()``), computed from the
  partition counts of the source topics (declared in the spec, else as they exist on the cluster).

Steps of :func:`provision`:
  1. read the cluster: partition counts and replication (one all-topics metadata request -- naming
     a missing topic would make Tansu create it) and configs (``describe_configs``);
  2. diff every wanted topic against it: partitions, replication, every declared config;
  3. on any difference, fail closed: nothing is created and the report names each difference;
  4. create the missing topics (a dry run only reports what it would create);
  5. read the created topics back and diff them again (so a broker that ignored a config is caught).

Idempotent: a second run finds every topic present and equal, and changes nothing.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Apache Kafka's topic defaults, used for a config the broker does not report (Tansu reports only
#: the configs a topic was created with).
BROKER_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "retention.ms": "604800000",
    "retention.bytes": "-1",
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
    "message.timestamp.type": "CreateTime",
    "min.insync.replicas": "1",
    "delete.retention.ms": "86400000",
    "min.compaction.lag.ms": "0",
}


class ProvisioningError(RuntimeError):
    """Provisioning refused to act (or failed); ``report`` holds every check."""

    def __init__(self, message: str, report: ProvisioningReport | None = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class WantedTopic:
    """A topic as it must exist; ``origin`` says who asked for it (spec file or topology)."""

    name: str
    partitions: int
    replication_factor: int = 1
    config: Mapping[str, str] = field(default_factory=dict)
    origin: str = "spec"


@dataclass(frozen=True)
class ExistingTopic:
    """A topic as the cluster reports it."""

    name: str
    partitions: int
    replication_factor: int
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass
class TopicCheck:
    """The verdict on one topic: ``ok``, ``missing``, ``created``, ``would create`` or ``mismatch``."""

    name: str
    origin: str
    status: str
    differences: list[str] = field(default_factory=list)


@dataclass
class ProvisioningReport:
    """Every check of one run, renderable as text (task log) and as a dict (XCom)."""

    checks: list[TopicCheck]
    dry_run: bool = False

    @property
    def mismatches(self) -> list[TopicCheck]:
        return [c for c in self.checks if c.status == "mismatch"]

    @property
    def created(self) -> list[str]:
        return [c.name for c in self.checks if c.status == "created"]

    def render(self) -> str:
        mode = "DRY RUN, nothing changed" if self.dry_run else "applied"
        counts = f"{len(self.checks)} topic(s), {len(self.mismatches)} mismatch(es)"
        lines = [f"topic provisioning ({mode}): {counts}"]
        for check in sorted(self.checks, key=lambda c: (c.status != "mismatch", c.name)):
            lines.append(f"  {check.status:<12} {check.name}  [{check.origin}]")
            lines.extend(f"      - {d}" for d in check.differences)
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "checks": [asdict(c) for c in self.checks]}


# ---- wanted topics: the spec file and the topologies -------------------------------------------------


def load_spec(path: str | Path) -> dict[str, Any]:
    """Read a spec file (``.yaml``/``.yml`` or ``.json``) into a dict with ``topics`` and ``topologies``."""
    path = Path(path)
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        import yaml

        data = yaml.safe_load(text) or {}
    else:
        data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("topics", []), list):
        raise ProvisioningError(f"{path}: expected a mapping with a 'topics' list")
    return data


def spec_topics(spec: Mapping[str, Any], origin: str = "spec") -> list[WantedTopic]:
    """The topics a spec declares; each needs ``name`` and ``partitions``."""
    default_rf = int(spec.get("defaults", {}).get("replication_factor", 1))
    wanted = []
    for i, entry in enumerate(spec.get("topics", [])):
        if "name" not in entry or "partitions" not in entry:
            raise ProvisioningError(f"{origin}: topic #{i} needs 'name' and 'partitions': {entry}")
        config = {str(k): str(v) for k, v in (entry.get("config") or {}).items()}
        rf = int(entry.get("replication_factor", default_rf))
        wanted.append(WantedTopic(entry["name"], int(entry["partitions"]), rf, config, origin))
    return wanted


def load_topology(path: str) -> Any:
    """Import ``package.module:attr`` and return the Topology it names (see the module docstring)."""
    from streams_runtime.processor.topology import Topology

    module_name, _, attr = path.partition(":")
    if not attr:
        raise ProvisioningError(f"topology {path!r}: expected 'package.module:attr'")
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not isinstance(target, Topology) and callable(target):
        target = target()
    if isinstance(target, tuple):
        target = target[0]
    if not isinstance(target, Topology):
        raise ProvisioningError(f"topology {path!r} is a {type(target).__name__}, not a Topology")
    if not target.application_id:
        raise ProvisioningError(f"topology {path!r} has no application_id (build it with a config naming it)")
    return target


def topology_topics(
    topology: Any, origin: str, partitions: Mapping[str, int], replication_factor: int = 1
) -> list[WantedTopic]:
    """The repartition and changelog topics of ``topology``, with partition counts from its tasks.

    :param partitions: partition counts of (at least) the topology's user source topics.
    :raises ProvisioningError: when a source topic's partition count is unknown.
    """
    internal = topology.internal_topics()
    infos = topology.sub_topologies()
    users = {t for info in infos for t in info.source_topics if t not in internal}
    unknown = sorted(users - set(partitions))
    if unknown:
        raise ProvisioningError(
            f"{origin}: source topic(s) {unknown} are neither declared in the spec nor present on the cluster"
        )
    tasks = topology.task_counts({t: partitions[t] for t in users})
    config = topology.config
    config_rf = int(config.get("replication_factor", -1) or -1) if config is not None else -1
    rf = config_rf if config_rf > 0 else replication_factor  # -1: the broker's default, use the spec's
    count: dict[str, int] = {}
    for info in infos:
        for topic in info.repartition_source_topics:
            count[topic] = internal[topic].number_of_partitions or tasks[info.id]
        for topic in info.changelog_topics.values():
            count[topic] = tasks[info.id]
    return [
        WantedTopic(name, count[name], rf, cfg.configs(), f"{origin} ({cfg.kind})")
        for name, cfg in sorted(internal.items())
        if name in count
    ]


def topology_user_topics(topology: Any) -> tuple[set[str], set[str]]:
    """(source topics, sink topics) of ``topology`` that are not its internal topics."""
    internal = topology.internal_topics()
    infos = topology.sub_topologies()
    sources = {t for info in infos for t in info.source_topics if t not in internal}
    sinks = {t for info in infos for t in info.sink_topics if t not in internal}
    return sources, sinks


def collect_wanted(
    admin: Any, spec: Mapping[str, Any], topologies: Iterable[str] = (), origin: str = "spec"
) -> list[WantedTopic]:
    """The spec's topics plus the internal topics of every topology (the spec's and ``topologies``).

    Partition counts of a topology's source topics come from the spec, else from the cluster.

    :raises ProvisioningError: when a topology's source or sink topic is neither declared nor present.
    """
    from streams_runtime.kafka.clients import partition_counts

    declared = spec_topics(spec, origin)
    paths = list(dict.fromkeys([*spec.get("topologies", []), *topologies]))
    if not paths:
        return declared
    default_rf = int(spec.get("defaults", {}).get("replication_factor", 1))
    known = {**partition_counts(admin, _all_topic_names(admin)), **{t.name: t.partitions for t in declared}}
    wanted = list(declared)
    for path in paths:
        topology = load_topology(path)
        _, sinks = topology_user_topics(topology)
        undeclared = sorted(sinks - set(known))
        if undeclared:
            raise ProvisioningError(
                f"topology {path}: sink topic(s) {undeclared} are neither declared in the spec nor present"
            )
        wanted.extend(topology_topics(topology, f"topology {path}", known, default_rf))
    return wanted


def _all_topic_names(admin: Any) -> list[str]:
    return list(admin.list_topics(timeout=10).topics)


# ---- the cluster side and the diff -------------------------------------------------------------------


def read_cluster(admin: Any, names: Iterable[str], timeout: float = 10.0) -> dict[str, ExistingTopic]:
    """The topics among ``names`` that exist, with partitions, replication and configs (step 1)."""
    from streams_runtime.kafka.clients import describe_topic_configs

    wanted = set(names)
    metadata = admin.list_topics(timeout=timeout)  # all topics: never name one (Tansu would create it)
    present = {n: t for n, t in metadata.topics.items() if n in wanted and t.error is None}
    configs = describe_topic_configs(admin, present, timeout)
    return {
        name: ExistingTopic(
            name,
            len(topic.partitions),
            min((len(p.replicas) for p in topic.partitions.values()), default=0),
            configs.get(name, {}),
        )
        for name, topic in present.items()
    }


def _same_config(key: str, wanted: str, found: str) -> bool:
    if key == "cleanup.policy":
        return {p.strip() for p in wanted.split(",")} == {p.strip() for p in found.split(",")}
    return wanted.strip() == found.strip()


def diff_topic(wanted: WantedTopic, existing: ExistingTopic) -> list[str]:
    """Every way ``existing`` differs from ``wanted`` (step 2); empty when they agree."""
    differences = []
    if existing.partitions != wanted.partitions:
        differences.append(f"partitions: expected {wanted.partitions}, found {existing.partitions}")
    if wanted.replication_factor > 0 and existing.replication_factor != wanted.replication_factor:
        differences.append(
            f"replication factor: expected {wanted.replication_factor}, found {existing.replication_factor}"
        )
    for key, value in sorted(wanted.config.items()):
        found = existing.config.get(key)
        source = ""
        if found is None:
            found, source = BROKER_DEFAULTS.get(key), " (broker default)"
        if found is None:
            differences.append(f"{key}: expected {value}, the broker does not report it")
        elif not _same_config(key, value, found):
            differences.append(f"{key}: expected {value}, found {found}{source}")
    return differences


def merge_wanted(topics: Iterable[WantedTopic]) -> dict[str, WantedTopic]:
    """One entry per name; the same name asked for twice in different shapes is an error."""
    merged: dict[str, WantedTopic] = {}
    for topic in topics:
        other = merged.get(topic.name)
        if other is None:
            merged[topic.name] = topic
        elif (other.partitions, other.replication_factor, dict(other.config)) != (
            topic.partitions,
            topic.replication_factor,
            dict(topic.config),
        ):
            raise ProvisioningError(
                f"{topic.name} is wanted twice, differently: by {other.origin} and by {topic.origin}"
            )
    return merged


def provision(
    admin: Any, wanted: Iterable[WantedTopic], *, dry_run: bool = False, timeout: float = 30.0
) -> ProvisioningReport:
    """Create what is missing and verify what exists (steps in the module docstring).

    :returns: the report (also for a dry run with mismatches, which never raises).
    :raises ProvisioningError: on any mismatch (not in a dry run), with the report attached.
    """
    from streams_runtime.kafka.clients import TopicSpec, create_topics

    topics = merge_wanted(wanted)
    # Step 1
    existing = read_cluster(admin, topics, timeout)
    # Step 2
    checks = {}
    for name, want in sorted(topics.items()):
        if name in existing:
            differences = diff_topic(want, existing[name])
            checks[name] = TopicCheck(name, want.origin, "mismatch" if differences else "ok", differences)
        else:
            checks[name] = TopicCheck(name, want.origin, "would create" if dry_run else "missing")
    report = ProvisioningReport(list(checks.values()), dry_run)
    # Step 3
    if report.mismatches and not dry_run:
        message = "topics differ from their specs; nothing was created\n" + report.render()
        raise ProvisioningError(message, report)
    missing = [topics[c.name] for c in report.checks if c.status == "missing"]
    if dry_run or not missing:
        return report
    # Step 4
    specs = [TopicSpec(t.name, t.partitions, t.replication_factor, dict(t.config)) for t in missing]
    create_topics(admin, specs, timeout)
    # Step 5
    created = read_cluster(admin, [t.name for t in missing], timeout)
    for want in missing:
        found = created.get(want.name)
        differences = ["not present after creation"] if found is None else diff_topic(want, found)
        checks[want.name].status = "mismatch" if differences else "created"
        checks[want.name].differences = differences
    if report.mismatches:
        raise ProvisioningError("created topics do not match their specs\n" + report.render(), report)
    return report
