"""TableJoined: the options of a foreign-key table-table join (Kafka Streams' ``TableJoined``).

``name`` names the join's processors, store and internal topics (``<name>-subscription-
registration-topic``, ...); ``partitioner`` is how the left table's topic is partitioned and
``other_partitioner`` how the foreign table's is, both ``(topic, key, value) -> partition |
None``, needed only when a table's input topic is not partitioned by the default partitioner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TableJoined"]


@dataclass(frozen=True)
class TableJoined:
    partitioner: Callable[..., int | None] | None = None
    other_partitioner: Callable[..., int | None] | None = None
    name: str | None = None

    @classmethod
    def with_(cls, partitioner: Any = None, other_partitioner: Any = None) -> TableJoined:
        return cls(partitioner, other_partitioner)

    @classmethod
    def as_(cls, name: str) -> TableJoined:
        return cls(name=name)

    def with_name(self, name: str) -> TableJoined:
        return dataclasses.replace(self, name=name)

    def with_partitioner(self, partitioner: Any) -> TableJoined:
        return dataclasses.replace(self, partitioner=partitioner)

    def with_other_partitioner(self, partitioner: Any) -> TableJoined:
        return dataclasses.replace(self, other_partitioner=partitioner)
