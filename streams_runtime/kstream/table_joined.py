"""TableJoined: the options of a foreign-key table-table join (Kafka Streams' ``TableJoined``).

``name`` names the join's processors, store and internal topics (``<name>-subscription-
registration-topic``, ...); ``partitioner`` is how the left table's topic is partitioned and
``other_partitioner`` how the foreign table's is, both ``(topic, key, value) -> partition |
None``, needed only when a table's input topic is not partitioned by the default partitioner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from streams_runtime.kstream.options import Partitioner, _Named

__all__ = ["TableJoined"]


@dataclass(frozen=True)
class TableJoined(_Named):
    partitioner: Partitioner | None = None
    other_partitioner: Partitioner | None = None
    name: str | None = None

    @classmethod
    def with_(
        cls, partitioner: Partitioner | None = None, other_partitioner: Partitioner | None = None
    ) -> TableJoined:
        return cls(partitioner, other_partitioner)

    def with_partitioner(self, partitioner: Partitioner | None) -> TableJoined:
        return dataclasses.replace(self, partitioner=partitioner)

    def with_other_partitioner(self, partitioner: Partitioner | None) -> TableJoined:
        return dataclasses.replace(self, other_partitioner=partitioner)
