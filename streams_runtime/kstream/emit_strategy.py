"""EmitStrategy: when a windowed aggregation sends its results downstream (Kafka Streams' KIP-825).

Owner: the DSL. Two strategies, as in Kafka Streams 3.x:

* ``EmitStrategy.on_window_update()`` (the default): every record that updates a window
  forwards the new aggregate (through the record cache when the store is cached).
* ``EmitStrategy.on_window_close()``: nothing is forwarded while a window is open; once stream
  time passes window end + grace, the processor forwards the window's final aggregate, once,
  read back from its own window store (no suppression buffer).

Taken by ``TimeWindowedKStream.emit_strategy`` (tumbling, hopping and sliding windows) and
``SessionWindowedKStream.emit_strategy`` (a session closes once stream time passes its end +
inactivity gap + grace), as in Kafka Streams 3.3.
"""

from __future__ import annotations

import enum
from typing import TypeAlias

__all__ = ["EmitStrategy", "StrategyType"]


class StrategyType(enum.Enum):
    """The kinds of emit strategy; ``id`` is Kafka Streams' numeric id of each."""

    ON_WINDOW_UPDATE = 0
    ON_WINDOW_CLOSE = 1

    @property
    def id(self) -> int:
        return self.value

    @classmethod
    def for_id(cls, strategy_id: int) -> StrategyType:
        for member in cls:
            if member.value == strategy_id:
                return member
        raise ValueError(
            f"unknown emit strategy id {strategy_id!r}; allowed: "
            + ", ".join(f"{m.value} ({m.name})" for m in cls)
        )


class EmitStrategy:
    """An immutable choice of :class:`StrategyType`; build it with the two class methods."""

    __slots__ = ("_type",)
    StrategyType: TypeAlias = StrategyType

    def __init__(self, strategy_type: StrategyType) -> None:
        if not isinstance(strategy_type, StrategyType):
            raise TypeError(
                f"an emit strategy type must be a StrategyType ({_allowed_types()}), got {strategy_type!r}"
            )
        self._type = strategy_type

    @classmethod
    def on_window_update(cls) -> EmitStrategy:
        """Forward each update of a window (the default)."""
        return cls(StrategyType.ON_WINDOW_UPDATE)

    @classmethod
    def on_window_close(cls) -> EmitStrategy:
        """Forward one final result per window once it closes (window end + grace; sessions: + gap)."""
        return cls(StrategyType.ON_WINDOW_CLOSE)

    @property
    def type(self) -> StrategyType:
        return self._type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EmitStrategy) and other._type is self._type

    def __hash__(self) -> int:
        return hash(self._type)

    def __repr__(self) -> str:
        return f"EmitStrategy.{self._type.name.lower()}()"


def check_emit_strategy(strategy: object) -> EmitStrategy:
    """``strategy`` if it is an EmitStrategy; a TypeError naming the allowed values otherwise."""
    if not isinstance(strategy, EmitStrategy):
        raise TypeError(
            "emit_strategy takes EmitStrategy.on_window_update() or "
            f"EmitStrategy.on_window_close(), got {strategy!r}"
        )
    return strategy


def _allowed_types() -> str:
    return ", ".join(f"StrategyType.{m.name}" for m in StrategyType)
