"""TaskId: (sub-topology, partition); ``str()`` gives Kafka Streams' ``"0_3"``."""

from __future__ import annotations

from typing import NamedTuple


class TaskId(NamedTuple):
    subtopology: int
    partition: int

    def __str__(self) -> str:
        return f"{self.subtopology}_{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        sub, _, part = text.partition("_")
        return cls(int(sub), int(part))


#: the global task's id (the global stream thread's, and the test driver's global task): Kafka
#: Streams' -1_-1
GLOBAL_TASK_ID = TaskId(-1, -1)
