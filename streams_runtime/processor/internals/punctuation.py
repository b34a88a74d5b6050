"""PunctuationQueue: the schedules of one task for one time type (stream time or wall clock).

A schedule fires when the driving time reaches its due time; the punctuator gets that time.
The next due time is ``due + interval``, or, when the time jumped past several intervals, the
first multiple of the interval after the current time (missed punctuations are not replayed),
as Kafka Streams' PunctuationSchedule does. Stream-time schedules are aligned to 0 (they fire at
the first record); wall-clock schedules first fire ``interval`` after they were created.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from streams_runtime.processor.api import Cancellable
from streams_runtime.processor.internals.nodes import ProcessorNode


@dataclass(eq=False, slots=True)
class PunctuationSchedule(Cancellable):
    node: ProcessorNode
    due: int
    interval: int
    punctuator: Callable[[int], None]
    cancelled: bool = field(default=False, init=False)

    def cancel(self) -> None:
        self.cancelled = True

    def advance(self, now: int) -> None:
        nxt = self.due + self.interval
        if now >= nxt:
            missed = (now - self.due) // self.interval
            nxt = self.due + (missed + 1) * self.interval
        self.due = nxt


class PunctuationQueue:
    """A priority queue of schedules by due time (ties: scheduling order)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, PunctuationSchedule]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def schedule(self, schedule: PunctuationSchedule) -> PunctuationSchedule:
        heapq.heappush(self._heap, (schedule.due, next(self._seq), schedule))
        return schedule

    def may_punctuate(self, now: int, run: Callable[[PunctuationSchedule, int], None]) -> bool:
        """Fire every schedule due at ``now``; returns whether any fired."""
        fired = False
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, sched = heapq.heappop(heap)
            if sched.cancelled:
                continue
            run(sched, now)
            fired = True
            if not sched.cancelled:
                sched.advance(now)
                heapq.heappush(heap, (sched.due, next(self._seq), sched))
        return fired

    def close(self) -> None:
        self._heap.clear()
