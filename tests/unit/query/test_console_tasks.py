"""The console's view of a thread's tasks: warm-ups told apart from standbys, restoring actives."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from streams_runtime.processor.task_id import TaskId
from streams_runtime.server.console import _warmups_and_restoring


@dataclass
class _Assignment:
    warmup_tasks: frozenset = frozenset()


@dataclass
class _Manager:
    tasks: dict
    restoring: set = field(default_factory=set)

    def is_restoring(self, task_id) -> bool:
        return task_id in self.restoring


@dataclass
class _Thread:
    assignment: _Assignment | None
    task_manager: _Manager | None
    query_lock: threading.Lock = field(default_factory=threading.Lock)


def test_should_name_warmups_and_restoring_active_tasks():
    thread = _Thread(
        _Assignment(frozenset({TaskId(0, 3)})),
        _Manager({TaskId(0, 0): object(), TaskId(0, 1): object()}, {TaskId(0, 1)}),
    )
    assert _warmups_and_restoring(thread) == ({"0_3"}, {"0_1"})


def test_should_not_wait_for_a_busy_thread_nor_fail_without_an_assignment():
    thread = _Thread(None, _Manager({TaskId(0, 0): object()}, {TaskId(0, 0)}))
    thread.query_lock.acquire()  # the stream thread holds it (a long restore step)
    assert _warmups_and_restoring(thread) == (set(), set())
    assert _warmups_and_restoring(None) == (set(), set())
