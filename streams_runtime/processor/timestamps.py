"""Timestamp extractors: which time a source record carries into the topology.

An extractor is ``extract(record: ConsumerRecord, partition_time: int) -> int`` (a callable or an
object with an ``extract`` method). ``partition_time`` is the largest timestamp seen so far on
that partition (-1 before the first). Built-ins, named as in config ``default_timestamp_extractor``:

- ``fail_on_invalid`` (default): the record's own timestamp; a negative one raises TimestampError.
- ``log_and_skip_on_invalid``: a negative timestamp is returned, and the runtime drops the record
  (logged, counted in ``dropped-records``).
- ``use_partition_time_on_invalid``: a negative timestamp is replaced by the partition time
  (an error if that is unknown too).
- ``wallclock``: the current wall-clock time of the task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from streams_runtime.errors import TimestampError

if TYPE_CHECKING:
    from streams_runtime.config import TimestampExtractorSpec

log = logging.getLogger(__name__)


class ConsumerRecord(NamedTuple):
    """A deserialized source record as the extractor sees it."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: Any
    value: Any
    headers: tuple[tuple[str, bytes | None], ...] = ()


Extractor = Callable[[ConsumerRecord, int], int]


def fail_on_invalid(record: ConsumerRecord, partition_time: int) -> int:
    if record.timestamp < 0:
        raise TimestampError(
            f"input record from topic {record.topic} partition {record.partition} offset "
            f"{record.offset} has invalid (negative) timestamp {record.timestamp}; use "
            f"default_timestamp_extractor='log_and_skip_on_invalid' or "
            f"'use_partition_time_on_invalid' to handle it"
        )
    return record.timestamp


def log_and_skip_on_invalid(record: ConsumerRecord, partition_time: int) -> int:
    return record.timestamp


def use_partition_time_on_invalid(record: ConsumerRecord, partition_time: int) -> int:
    if record.timestamp >= 0:
        return record.timestamp
    if partition_time < 0:
        raise TimestampError(
            f"could not infer a timestamp for the record from topic {record.topic} partition "
            f"{record.partition} offset {record.offset}: its timestamp {record.timestamp} is "
            f"invalid and the partition time is not known yet"
        )
    return partition_time


BUILTIN_EXTRACTORS: dict[str, Extractor] = {
    "fail_on_invalid": fail_on_invalid,
    "log_and_skip_on_invalid": log_and_skip_on_invalid,
    "use_partition_time_on_invalid": use_partition_time_on_invalid,
}


def resolve_extractor(spec: TimestampExtractorSpec | None, wall_clock: Callable[[], int]) -> Extractor:
    """A config value (name, callable or object with ``extract``) -> an extractor function."""
    if spec is None:
        return fail_on_invalid
    if isinstance(spec, str):
        if spec == "wallclock":
            return lambda record, partition_time: wall_clock()
        return BUILTIN_EXTRACTORS[spec]
    extract: Extractor | None = getattr(spec, "extract", None)
    if callable(extract):
        return extract
    return cast("Extractor", spec)  # neither a name nor an object with ``extract``: a function
