"""Suppressed and BufferConfig: how ``KTable.suppress`` holds updates back.

Owner: the DSL. Kafka Streams' meaning:

* ``Suppressed.until_window_closes(BufferConfig.unbounded())``: final results only -- one
  record per window, emitted once stream time reaches window end + grace (the grace of the
  upstream windowed aggregation). Only strict buffers (unbounded, or bounded with
  ``shut_down_when_full()``) are allowed: emitting early would break "final".
* ``Suppressed.until_time_limit(time_ms, buffer_config)``: rate limiting -- the latest update of
  a key is emitted once stream time passes its record time + ``time_ms``, or earlier when a
  bounded buffer with ``emit_early_when_full()`` (the default for bounded buffers) is full.
* ``BufferConfig.max_records(n)`` / ``max_bytes(b)`` / ``unbounded()``; ``with_max_records``,
  ``with_max_bytes``, ``with_no_bound``; ``emit_early_when_full()`` / ``shut_down_when_full()``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["BufferConfig", "Suppressed"]

EMIT, SHUT_DOWN = "emit", "shut_down"
UNBOUNDED = 2**63 - 1


@dataclass(frozen=True)
class BufferConfig:
    """Bounds of the suppression buffer and what happens when they are exceeded."""

    max_records_: int = UNBOUNDED
    max_bytes_: int = UNBOUNDED
    full_strategy: str = EMIT

    @classmethod
    def max_records(cls, records: int) -> BufferConfig:
        return cls(max_records_=_positive(records, "max_records"))

    @classmethod
    def max_bytes(cls, byte_limit: int) -> BufferConfig:
        return cls(max_bytes_=_positive(byte_limit, "max_bytes"))

    @classmethod
    def unbounded(cls) -> BufferConfig:
        return cls(full_strategy=SHUT_DOWN)

    def with_max_records(self, records: int) -> BufferConfig:
        return dataclasses.replace(self, max_records_=_positive(records, "max_records"))

    def with_max_bytes(self, byte_limit: int) -> BufferConfig:
        return dataclasses.replace(self, max_bytes_=_positive(byte_limit, "max_bytes"))

    def with_no_bound(self) -> BufferConfig:
        return dataclasses.replace(
            self, max_records_=UNBOUNDED, max_bytes_=UNBOUNDED, full_strategy=SHUT_DOWN
        )

    def emit_early_when_full(self) -> BufferConfig:
        return dataclasses.replace(self, full_strategy=EMIT)

    def shut_down_when_full(self) -> BufferConfig:
        return dataclasses.replace(self, full_strategy=SHUT_DOWN)

    @property
    def is_strict(self) -> bool:
        return self.full_strategy == SHUT_DOWN


@dataclass(frozen=True)
class Suppressed:
    """A suppression: ``final_results`` (until the window closes) or a time limit."""

    final_results: bool
    time_to_wait_ms: int
    buffer_config: BufferConfig
    name: str | None = None
    logging_enabled: bool = True
    logging_config: dict[str, str] | None = None

    @classmethod
    def until_window_closes(cls, buffer_config: BufferConfig) -> Suppressed:
        if not isinstance(buffer_config, BufferConfig) or not buffer_config.is_strict:
            raise TypeError(
                "until_window_closes needs a strict buffer config: BufferConfig.unbounded() or "
                "a bounded one with .shut_down_when_full()"
            )
        return cls(True, 0, buffer_config)

    @classmethod
    def until_time_limit(cls, time_to_wait_ms: int, buffer_config: BufferConfig) -> Suppressed:
        if isinstance(time_to_wait_ms, bool) or not isinstance(time_to_wait_ms, int) or time_to_wait_ms < 0:
            raise ValueError(f"time_to_wait_ms must be an int >= 0, got {time_to_wait_ms!r}")
        if not isinstance(buffer_config, BufferConfig):
            raise TypeError(f"buffer_config must be a BufferConfig, got {buffer_config!r}")
        return cls(False, time_to_wait_ms, buffer_config)

    def with_name(self, name: str) -> Suppressed:
        return dataclasses.replace(self, name=name)

    def with_logging_disabled(self) -> Suppressed:
        return dataclasses.replace(self, logging_enabled=False, logging_config=None)

    def with_logging_enabled(self, config: dict[str, str] | None = None) -> Suppressed:
        return dataclasses.replace(self, logging_enabled=True, logging_config=dict(config or {}))


def _positive(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be an int >= 0, got {value!r}")
    return value
