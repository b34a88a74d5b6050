"""Window specifications of the DSL: TimeWindows, SlidingWindows, SessionWindows, JoinWindows.

Owner: the DSL. Immutable value objects; every duration is an int of milliseconds.
Kafka Streams' rules:

* TimeWindows: windows ``[start, start + size)`` starting at multiples of ``advance`` (tumbling
  when ``advance == size``, hopping when smaller); ``0 < advance <= size``.
* SlidingWindows: one window of ``time_difference`` per record, both ends inclusive;
  aggregation creates the windows a record opens or closes.
* SessionWindows: records closer than ``inactivity_gap`` (inclusive) fall into one session.
* JoinWindows: a record at ``t`` joins the other side's records in ``[t - before, t + after]``.

Grace: a window accepts records until stream time passes its end + grace; later records are
dropped (and counted on ``dropped-records``). The ``*_with_no_grace`` constructors set 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from streams_runtime.windowed import MAX_TIMESTAMP, TimeWindow

__all__ = ["JoinWindows", "SessionWindows", "SlidingWindows", "TimeWindows"]


def _ms(value: int, what: str, *, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int of milliseconds, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{what} must be {'> 0' if positive else '>= 0'}, got {value}")
    return value


def _difference(value: int) -> int:
    """A join window's bound: an int of milliseconds (may be negative)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"time difference must be an int, got {value!r}")
    return value


class _Graced:
    """The grace period of a window specification (a frozen dataclass with a ``grace_ms`` field)."""

    grace_ms: int

    def grace_period_ms(self) -> int:
        return self.grace_ms


@dataclass(frozen=True)
class TimeWindows(_Graced):
    """Tumbling (``advance == size``) or hopping windows ``[start, start + size)``."""

    size_ms: int
    advance_ms: int
    grace_ms: int

    @classmethod
    def of_size_with_no_grace(cls, size_ms: int) -> TimeWindows:
        return cls.of_size_and_grace(size_ms, 0)

    @classmethod
    def of_size_and_grace(cls, size_ms: int, grace_ms: int) -> TimeWindows:
        size = _ms(size_ms, "window size", positive=True)
        return cls(size, size, _ms(grace_ms, "grace period"))

    def advance_by(self, advance_ms: int) -> TimeWindows:
        """Hopping windows: a new window every ``advance_ms`` (``0 < advance <= size``)."""
        advance = _ms(advance_ms, "advance interval", positive=True)
        if advance > self.size_ms:
            raise ValueError(f"advance interval ({advance}) must lie within the window size ({self.size_ms})")
        return replace(self, advance_ms=advance)

    def size(self) -> int:
        return self.size_ms

    def windows_for(self, timestamp: int) -> dict[int, TimeWindow]:
        """Every window containing ``timestamp``, by start (ascending)."""
        size, advance = self.size_ms, self.advance_ms
        start = max(0, timestamp - size + advance)
        start -= start % advance
        windows: dict[int, TimeWindow] = {}
        while start <= timestamp:
            windows[start] = TimeWindow(start, min(start + size, MAX_TIMESTAMP))
            start += advance
        return windows


@dataclass(frozen=True)
class SlidingWindows(_Graced):
    """Windows of ``time_difference_ms`` that slide with the records (both ends inclusive)."""

    time_difference_ms: int
    grace_ms: int

    @classmethod
    def of_time_difference_with_no_grace(cls, time_difference_ms: int) -> SlidingWindows:
        return cls.of_time_difference_and_grace(time_difference_ms, 0)

    @classmethod
    def of_time_difference_and_grace(cls, time_difference_ms: int, grace_ms: int) -> SlidingWindows:
        return cls(_ms(time_difference_ms, "time difference"), _ms(grace_ms, "grace period"))


@dataclass(frozen=True)
class SessionWindows(_Graced):
    """Sessions: records at most ``inactivity_gap_ms`` apart belong to one session."""

    inactivity_gap_ms: int
    grace_ms: int

    @classmethod
    def of_inactivity_gap_with_no_grace(cls, inactivity_gap_ms: int) -> SessionWindows:
        return cls.of_inactivity_gap_and_grace(inactivity_gap_ms, 0)

    @classmethod
    def of_inactivity_gap_and_grace(cls, inactivity_gap_ms: int, grace_ms: int) -> SessionWindows:
        return cls(_ms(inactivity_gap_ms, "inactivity gap", positive=True), _ms(grace_ms, "grace period"))


@dataclass(frozen=True)
class JoinWindows(_Graced):
    """A stream-stream join window ``[t - before_ms, t + after_ms]`` around each record."""

    before_ms: int
    after_ms: int
    grace_ms: int

    @classmethod
    def of_time_difference_with_no_grace(cls, time_difference_ms: int) -> JoinWindows:
        return cls.of_time_difference_and_grace(time_difference_ms, 0)

    @classmethod
    def of_time_difference_and_grace(cls, time_difference_ms: int, grace_ms: int) -> JoinWindows:
        diff = _ms(time_difference_ms, "time difference")
        return cls(diff, diff, _ms(grace_ms, "grace period"))

    def before(self, time_difference_ms: int) -> JoinWindows:
        """Change the lower bound: join records up to ``time_difference_ms`` earlier (may be negative)."""
        return self._checked(replace(self, before_ms=_difference(time_difference_ms)))

    def after(self, time_difference_ms: int) -> JoinWindows:
        """Change the upper bound: join records up to ``time_difference_ms`` later (may be negative)."""
        return self._checked(replace(self, after_ms=_difference(time_difference_ms)))

    @staticmethod
    def _checked(windows: JoinWindows) -> JoinWindows:
        if windows.before_ms + windows.after_ms < 0:
            raise ValueError("window interval (ie, before_ms + after_ms) must not be negative")
        return windows

    def size(self) -> int:
        return self.before_ms + self.after_ms
