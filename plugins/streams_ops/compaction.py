"""Changelog compaction check: how much of each changelog topic of an application is superseded.

Plain Python (no Airflow), driven by
:class:`streams_ops.operators.compaction.ChangelogCompactionCheckOperator`.

A changelog holds every update of a store; compaction keeps the latest record of each key. The
superseded part of a log is what compaction would remove: ``records - distinct keys``. A
healthy compacted changelog keeps that ratio low; a high ratio means compaction is off, lagging
or misconfigured, and a restore replays far more than the store holds.

Steps of :func:`check_changelogs`:
  1. find the application's changelog topics (``<application_id>-<store>-changelog``) in an
     all-topics metadata request;
  2. read each topic's ``cleanup.policy`` (``describe_configs``; not reported = Kafka's default
     ``delete``);
  3. read every partition from its start to its true end, counting records, distinct keys, keys
     whose latest record is a tombstone, and live keys;
  4. ratio = superseded / records; compare live keys with the store's key count when one is given;
  5. verdict: a policy without ``compact`` fails; a ratio above the threshold fails on a broker
     that compacts. The embedded broker (Tansu) never compacts: the report says so plainly, and
     the ratio fails the check there only with ``fail_on_embedded``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from streams_ops.offsets import EOF_OVERRIDES, scan_to_eof

CHANGELOG_SUFFIX = "-changelog"
EMBEDDED_NOTE = (
    "The broker is the embedded Tansu broker, which NEVER compacts (nor expires) any log: every "
    "update ever written is still there, so the superseded ratios below measure the full history, "
    "not a compaction failure. Run this check against Apache Kafka for a real verdict."
)


class CompactionCheckError(RuntimeError):
    """The check failed; ``report`` holds every measurement."""

    def __init__(self, message: str, report: CompactionReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class ChangelogStats:
    """Measurements of one changelog topic, and what is wrong with it."""

    topic: str
    cleanup_policy: str
    partitions: int
    records: int = 0
    distinct_keys: int = 0
    live_keys: int = 0
    tombstones: int = 0
    store_key_count: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def superseded(self) -> int:
        return self.records - self.distinct_keys

    @property
    def superseded_ratio(self) -> float:
        return self.superseded / self.records if self.records else 0.0


@dataclass
class CompactionReport:
    """The check of one application: per-topic stats, the threshold, the broker kind."""

    application_id: str
    threshold: float
    embedded_broker: bool
    topics: list[ChangelogStats] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(t.problems for t in self.topics)

    def render(self) -> str:
        verdict = "FAILED" if self.failed else "passed"
        lines = [
            f"changelog compaction check for application {self.application_id!r}: {verdict} "
            f"({len(self.topics)} changelog topic(s), threshold {self.threshold:.0%} superseded)"
        ]
        lines += [f"NOTE: {note}" for note in self.notes]
        for t in self.topics:
            store = "" if t.store_key_count is None else f", store keys {t.store_key_count}"
            lines.append(
                f"  {t.topic}: cleanup.policy={t.cleanup_policy}, {t.partitions} partition(s), "
                f"{t.records} records, {t.distinct_keys} distinct keys ({t.live_keys} live, "
                f"{t.tombstones} deleted{store}), superseded {t.superseded} = {t.superseded_ratio:.1%}"
            )
            lines += [f"      - {p}" for p in t.problems]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        topics = [
            {**asdict(t), "superseded": t.superseded, "superseded_ratio": round(t.superseded_ratio, 4)}
            for t in self.topics
        ]
        return {
            "application_id": self.application_id,
            "threshold": self.threshold,
            "embedded_broker": self.embedded_broker,
            "failed": self.failed,
            "notes": self.notes,
            "topics": topics,
        }


def changelog_topics(admin: Any, application_id: str) -> dict[str, int]:
    """Changelog topics of ``application_id`` -> partition count (step 1)."""
    metadata = admin.list_topics(timeout=10)
    prefix = f"{application_id}-"
    return {
        name: len(topic.partitions)
        for name, topic in sorted(metadata.topics.items())
        if name.startswith(prefix) and name.endswith(CHANGELOG_SUFFIX) and topic.error is None
    }


def measure_changelog(
    consumer: Any, topic: str, partitions: int, cleanup_policy: str, timeout: float = 120.0
) -> ChangelogStats:
    """Read ``topic`` from its start to its true end and count what compaction would keep (step 3)."""
    stats = ChangelogStats(topic, cleanup_policy, partitions)
    latest_is_tombstone: dict[tuple[int, bytes | None], bool] = {}

    def on_record(message: Any) -> None:
        stats.records += 1
        latest_is_tombstone[(message.partition(), message.key())] = message.value() is None

    scan_to_eof(consumer, topic, dict.fromkeys(range(partitions), 0), on_record, timeout)
    stats.distinct_keys = len(latest_is_tombstone)
    stats.tombstones = sum(latest_is_tombstone.values())
    stats.live_keys = stats.distinct_keys - stats.tombstones
    return stats


def judge(stats: ChangelogStats, threshold: float, embedded: bool, fail_on_embedded: bool) -> None:
    """Fill ``stats.problems`` (steps 4-5)."""
    if "compact" not in {p.strip() for p in stats.cleanup_policy.split(",")}:
        stats.problems.append(
            f"cleanup.policy is {stats.cleanup_policy!r}: a changelog must be compacted ('compact' or "
            f"'compact,delete' for windowed stores), or restores replay an ever-growing log"
        )
    if stats.superseded_ratio > threshold:
        message = f"superseded ratio {stats.superseded_ratio:.1%} is above the threshold {threshold:.0%}"
        if not embedded:
            stats.problems.append(message + ": compaction is not keeping up (or is off)")
        elif fail_on_embedded:
            stats.problems.append(message + " (embedded broker, which never compacts; failing as asked)")
    if stats.store_key_count is not None and stats.store_key_count != stats.live_keys:
        stats.problems.append(
            f"the store holds {stats.store_key_count} keys but the changelog has {stats.live_keys} live keys"
        )


def check_changelogs(
    admin: Any,
    consumer: Any,
    application_id: str,
    *,
    threshold: float = 0.5,
    embedded: bool = False,
    fail_on_embedded: bool = False,
    store_key_counts: Mapping[str, int] | None = None,
    timeout: float = 120.0,
) -> CompactionReport:
    """Check every changelog topic of ``application_id`` (steps in the module docstring).

    :param consumer: created with :data:`streams_ops.offsets.EOF_OVERRIDES`; assigned, never subscribed.
    :param embedded: the broker is Tansu (see ``KafkaAdminHook.is_embedded_broker``).
    :param store_key_counts: store name or changelog topic -> the key count the store reports.
    :returns: the report; the caller decides to raise on ``report.failed``.
    """
    from streams_runtime.kafka.clients import describe_topic_configs

    report = CompactionReport(application_id, threshold, embedded)
    if embedded:
        report.notes.append(EMBEDDED_NOTE)
    # Step 1
    topics = changelog_topics(admin, application_id)
    if not topics:
        report.notes.append(f"no changelog topics named {application_id}-<store>-changelog exist")
        return report
    # Step 2
    configs = describe_topic_configs(admin, topics, timeout=min(timeout, 30.0))
    counts = dict(store_key_counts or {})
    for topic, partitions in topics.items():
        policy = configs.get(topic, {}).get("cleanup.policy", "delete")
        # Step 3
        stats = measure_changelog(consumer, topic, partitions, policy, timeout)
        store = topic[len(application_id) + 1 : -len(CHANGELOG_SUFFIX)]
        stats.store_key_count = counts.get(topic, counts.get(store))
        # Steps 4-5
        judge(stats, threshold, embedded, fail_on_embedded)
        report.topics.append(stats)
    return report


__all__ = ["EOF_OVERRIDES", "CompactionCheckError", "CompactionReport", "ChangelogStats", "check_changelogs"]
