"""History: the console's figures of the last minutes, kept by the worker (a bounded ring buffer).

A :class:`Sampler` thread, started and stopped with the HTTP server, asks a
:class:`~.figures.Figures` for one sample every ``interval_s`` (5 s) and appends it to the
:class:`History` with its wall-clock time (``t``, ms since the epoch). The history holds at most
``span_s / interval_s`` samples (15 minutes: 180); the oldest falls out when a new one comes in,
so memory stays bounded however long the worker runs. Nothing is recorded on the stream threads:
a sample only reads what they keep anyway (see :mod:`.figures`).

``GET /ui/api/history?since=<ms>`` answers the samples newer than ``since`` (all of them without
it), oldest first: the console draws the last 15 minutes as soon as it opens, then asks only for
what is new.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger("streams_runtime.server")

INTERVAL_S = 5.0
SPAN_S = 900.0


class History:
    """At most ``span_s / interval_s`` samples, oldest first, at least ``interval_s`` apart."""

    def __init__(self, interval_s: float = INTERVAL_S, span_s: float = SPAN_S) -> None:
        if interval_s <= 0 or span_s < interval_s:
            raise ValueError(f"need 0 < interval_s <= span_s, got {interval_s} and {span_s}")
        self.interval_s = interval_s
        self.span_s = span_s
        self.capacity = int(span_s // interval_s)
        self._samples: deque[dict[str, Any]] = deque(maxlen=self.capacity)
        self._lock = threading.Lock()
        self._last: float | None = None

    def offer(self, now: float, read: Callable[[], dict[str, Any]]) -> bool:
        """Append ``read()`` stamped ``now`` (seconds since the epoch) unless the last sample is
        less than ``interval_s`` old; True when a sample was taken."""
        with self._lock:
            if self._last is not None and now - self._last < self.interval_s:
                return False
            self._last = now
        sample = {"t": int(now * 1000), **read()}
        with self._lock:
            self._samples.append(sample)
        return True

    def since(self, t_ms: int | None = None) -> list[dict[str, Any]]:
        """The samples newer than ``t_ms`` (every sample when None), oldest first."""
        with self._lock:
            samples = list(self._samples)
        return samples if t_ms is None else [s for s in samples if s["t"] > t_ms]

    def __len__(self) -> int:
        return len(self._samples)


class Sampler:
    """A daemon thread offering one sample to ``history`` every ``history.interval_s``."""

    def __init__(
        self, history: History, read: Callable[[], dict[str, Any]], clock: Callable[[], float] = time.time
    ) -> None:
        self._history = history
        self._read = read
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="console-history", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(self._history.interval_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._history.offer(self._clock(), self._read)
            except Exception:  # a sample failing (a thread closing): the next one may not
                log.exception("console history: a sample failed")
            self._stop.wait(self._history.interval_s)
