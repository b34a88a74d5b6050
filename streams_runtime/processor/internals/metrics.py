"""StreamsMetrics: a small in-process registry of sensors (count, sum, max).

Owned by the driver / StreamThread and shared with its tasks and stores through their contexts.
A sensor is identified by ``(group, name, tags)``; ``record(value)`` updates count, sum and max.
Every dropped record is recorded on ``dropped-records`` (group ``stream-task-metrics``, tag
``task-id``) so nothing is lost silently; a record the deserialization handler sent to the
dead-letter topic is also counted on ``dead-letter-records`` (same group and tag). At the
``debug`` (or ``trace``) recording level a task also records each record's lateness on
``record-lateness`` (same group and tag, as Kafka Streams' task-level ``record-lateness-avg`` and
``-max``): the task's stream time minus the record's timestamp when the record is not ahead of
it, else 0 (:meth:`Sensor.avg`, :attr:`Sensor.max`).
"""

from __future__ import annotations

import threading
from typing import Any

TASK_GROUP = "stream-task-metrics"
DROPPED_RECORDS = "dropped-records"
DEAD_LETTER_RECORDS = "dead-letter-records"
RECORD_LATENESS = "record-lateness"


class Sensor:
    __slots__ = ("name", "group", "tags", "count", "total", "max")

    def __init__(self, name: str, group: str, tags: tuple[tuple[str, Any], ...]) -> None:
        self.name = name
        self.group = group
        self.tags = tags
        self.count = 0
        self.total = 0.0
        self.max = float("-inf")

    def record(self, value: float = 1.0) -> None:
        self.count += 1
        self.total += value
        if value > self.max:
            self.max = value

    def avg(self) -> float | None:
        """The mean of the recorded values (None before the first)."""
        return self.total / self.count if self.count else None

    # Counter spelling, for callers that only count.
    def increment(self, amount: int = 1) -> None:
        self.count += amount
        self.total += amount

    def __repr__(self) -> str:
        return f"Sensor({self.group}/{self.name}{dict(self.tags)} count={self.count} total={self.total})"


class StreamsMetrics:
    """Registry of sensors; thread-safe creation, lock-free updates (one writer per sensor)."""

    def __init__(self) -> None:
        self._sensors: dict[tuple[str, str, tuple[tuple[str, Any], ...]], Sensor] = {}
        self._lock = threading.Lock()

    def sensor(self, name: str, group: str = TASK_GROUP, tags: dict[str, Any] | None = None) -> Sensor:
        key_tags = tuple(sorted((tags or {}).items()))
        key = (group, name, key_tags)
        sensor = self._sensors.get(key)
        if sensor is None:
            with self._lock:
                sensor = self._sensors.setdefault(key, Sensor(name, group, key_tags))
        return sensor

    counter = sensor

    def value(self, name: str, group: str = TASK_GROUP, tags: dict[str, Any] | None = None) -> float:
        """Total recorded on one sensor (0 if never created)."""
        sensor = self._sensors.get((group, name, tuple(sorted((tags or {}).items()))))
        return sensor.total if sensor else 0

    def total(self, name: str, group: str | None = None) -> float:
        """Sum over every sensor named ``name`` (all tags)."""
        return sum(
            s.total
            for (g, n, _), s in list(self._sensors.items())
            if n == name and (group is None or g == group)
        )

    def sensors(self) -> list[Sensor]:
        """Every sensor (a copy of the list: safe to read from another thread)."""
        return list(self._sensors.values())

    def dropped_records(self, task_id: object) -> Sensor:
        return self.sensor(DROPPED_RECORDS, TASK_GROUP, {"task-id": str(task_id)})

    def dead_letter_records(self, task_id: object) -> Sensor:
        return self.sensor(DEAD_LETTER_RECORDS, TASK_GROUP, {"task-id": str(task_id)})

    def record_lateness(self, task_id: object) -> Sensor:
        return self.sensor(RECORD_LATENESS, TASK_GROUP, {"task-id": str(task_id)})

    def snapshot(self) -> dict[str, float]:
        out = {}
        for (group, name, tags), sensor in list(self._sensors.items()):
            label = ",".join(f"{k}={v}" for k, v in tags)
            out[f"{group}/{name}" + (f"[{label}]" if label else "")] = sensor.total
        return out
