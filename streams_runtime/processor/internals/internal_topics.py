"""Configs of the topics a topology creates for itself (Kafka Streams' InternalTopicConfig).

Repartition topics: ``cleanup.policy=delete``, ``segment.bytes=52428800`` (50 MB),
``retention.ms=-1`` (records are purged after commit instead), ``message.timestamp.type=CreateTime``.
Unwindowed store changelogs: ``cleanup.policy=compact``, ``message.timestamp.type=CreateTime``.
User overrides (``Materialized(logging_config=...)``) win over the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INTERNAL_TOPIC_DEFAULTS = {"message.timestamp.type": "CreateTime"}
REPARTITION_TOPIC_DEFAULTS = {
    **INTERNAL_TOPIC_DEFAULTS,
    "cleanup.policy": "delete",
    "segment.bytes": "52428800",
    "retention.ms": "-1",
}
CHANGELOG_TOPIC_DEFAULTS = {**INTERNAL_TOPIC_DEFAULTS, "cleanup.policy": "compact"}

REPARTITION_TOPIC_SUFFIX = "-repartition"
CHANGELOG_TOPIC_SUFFIX = "-changelog"


@dataclass
class InternalTopicConfig:
    """One internal topic: its (undecorated) name, kind, partition count if fixed, and configs."""

    name: str
    kind: str  # "repartition" | "changelog"
    overrides: dict[str, str] = field(default_factory=dict)
    number_of_partitions: int | None = None

    def configs(self) -> dict[str, str]:
        defaults = REPARTITION_TOPIC_DEFAULTS if self.kind == "repartition" else CHANGELOG_TOPIC_DEFAULTS
        merged = dict(defaults)
        merged.update({k: str(v) for k, v in self.overrides.items()})
        return merged


def decorate(application_id: str | None, name: str) -> str:
    """``<application_id>-<name>``, or the bare name when the application id is not known."""
    return f"{application_id}-{name}" if application_id else name


def changelog_topic_name(application_id: str | None, store_name: str) -> str:
    return decorate(application_id, store_name + CHANGELOG_TOPIC_SUFFIX)
