"""Progress on the terminal: state restores and rebuilds, and the demo's long phases.

* :class:`RestoreProgressDisplay` is a :class:`~streams_runtime.StateRestoreListener` (so it sees
  restores after a failover or a restart, and the restore of a rebuild) that draws one ``rich``
  progress bar per changelog partition when it owns the terminal, and otherwise prints a line
  when a long restore starts, every few seconds while it runs, and when it ends::

      streams.set_global_state_restore_listener(RestoreProgressDisplay())

  The worker uses the bars when it runs a single instance on a terminal (``PROGRESS_ENV`` set by
  the launcher), lines otherwise (several instances share one terminal).
* :func:`phase` is a progress bar for a phase of known size (``update(done)``), or nothing when
  the output is not a terminal (the caller keeps its plain lines for logs and tests).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from streams_runtime.processor.restore_listener import StateRestoreListener

#: set to "1" by the worker launcher for an instance that may draw progress bars
PROGRESS_ENV = "STREAMS_RUNTIME_PROGRESS_BARS"
#: restores shorter than this (records) are not worth a line
LINE_THRESHOLD = 10_000
LINE_INTERVAL_S = 5.0


def _bars(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
    )


class RestoreProgressDisplay(StateRestoreListener):
    """See the module docstring. ``bars``: draw rich bars (default: when stdout is a terminal)."""

    def __init__(
        self,
        bars: bool | None = None,
        say: Callable[[str], None] | None = None,
        console: Console | None = None,
    ) -> None:
        self._console = console or Console()
        self._use_bars = self._console.is_terminal if bars is None else bars
        self._say = say or (lambda line: print(line, flush=True))
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        self._tasks: dict[tuple[str, int], tuple[TaskID, int, int, float]] = {}  # id, start, end, started
        self._last_line: dict[tuple[str, int], float] = {}

    @staticmethod
    def _label(tp: tuple[str, int], store: str) -> str:
        return f"restore {store} ({tp[0]}-{tp[1]})"

    def on_restore_start(
        self, tp: tuple[str, int], store_name: str, start_offset: int, end_offset: int
    ) -> None:
        total = max(0, end_offset - start_offset)
        with self._lock:
            task_id = TaskID(-1)
            if self._use_bars:
                if self._progress is None:
                    self._progress = _bars(self._console)
                    self._progress.start()
                task_id = self._progress.add_task(self._label(tp, store_name), total=total)
            elif total >= LINE_THRESHOLD:
                self._say(f"{self._label(tp, store_name)}: {total} records to replay")
                self._last_line[(tp[0], tp[1])] = time.monotonic()
            self._tasks[(tp[0], tp[1])] = (task_id, start_offset, end_offset, time.monotonic())

    def on_batch_restored(
        self, tp: tuple[str, int], store_name: str, batch_end_offset: int, num_restored: int
    ) -> None:
        with self._lock:
            entry = self._tasks.get((tp[0], tp[1]))
            if entry is None:
                return
            task_id, start, end, _ = entry
            done = min(end, batch_end_offset + 1) - start
            if self._progress is not None and task_id >= 0:
                self._progress.update(task_id, completed=done)
            elif (tp[0], tp[1]) in self._last_line and time.monotonic() - self._last_line[
                (tp[0], tp[1])
            ] >= LINE_INTERVAL_S:
                self._say(f"{self._label(tp, store_name)}: {done}/{end - start} records")
                self._last_line[(tp[0], tp[1])] = time.monotonic()

    def on_restore_end(self, tp: tuple[str, int], store_name: str, total_restored: int) -> None:
        with self._lock:
            entry = self._tasks.pop((tp[0], tp[1]), None)
            if entry is None:
                return
            task_id, start, end, started = entry
            if self._progress is not None and task_id >= 0:
                self._progress.update(task_id, completed=end - start)
                if not self._tasks:
                    self._progress.stop()
                    self._progress = None
            elif self._last_line.pop((tp[0], tp[1]), None) is not None:
                elapsed = time.monotonic() - started
                self._say(f"{self._label(tp, store_name)}: {total_restored} records in {elapsed:.1f}s")


@contextmanager
def phase(
    description: str, total: int | None, console: Console | None = None
) -> Iterator[Callable[[int], None]]:
    """A progress bar for one phase, updated with ``update(done)``; a no-op off a terminal.

    Yields ``None`` when no bar is drawn, so callers can fall back to their plain lines.
    """
    console = console or Console(file=sys.stdout)
    if not console.is_terminal:
        yield None  # type: ignore[misc]
        return
    with _bars(console) as progress:
        task = progress.add_task(description, total=total)
        yield lambda done: progress.update(task, completed=done)
