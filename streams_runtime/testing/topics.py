"""TestRecord, TestInputTopic and TestOutputTopic: typed access to the driver's topics.

An input topic serializes what the test pipes in and hands the bytes to the driver, which
processes it at once. Records piped without a timestamp get the topic's current time, which
then advances by ``auto_advance_ms`` (Kafka Streams' TestInputTopic rule; the start time
defaults to the wall clock). An output topic reads, in order, the records the topology
produced to that topic (sinks, repartition and changelog topics alike) and deserializes them.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import NoSuchElementError, StreamsError
from streams_runtime.processor.api import Headers, normalize_headers
from streams_runtime.serdes import deserialize_or_raise, serialize_or_raise
from streams_runtime.state import KeyValue

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.testing.driver import ProducedRecord, TopologyTestDriver

_UNSET: Any = object()


@dataclass(frozen=True)
class TestRecord:
    """A record as a test sees it: key, value, timestamp (ms, None = assigned on pipe) and headers."""

    __test__ = False  # not a pytest test class

    key: Any = None
    value: Any = None
    timestamp: int | None = None
    headers: Headers = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", normalize_headers(self.headers))

    @property
    def record_time(self) -> int | None:
        return self.timestamp

    def header(self, name: str) -> bytes | None:
        """The last value of header ``name`` (None if absent)."""
        found = None
        for key, value in self.headers:
            if key == name:
                found = value
        return found


class TestInputTopic:
    """Pipes typed records into one topic of a TopologyTestDriver."""

    __test__ = False

    def __init__(
        self,
        driver: TopologyTestDriver,
        topic: str,
        key_serde: Serde,
        value_serde: Serde,
        start_timestamp_ms: int | None = None,
        auto_advance_ms: int = 0,
    ) -> None:
        if auto_advance_ms < 0:
            raise ValueError("auto_advance_ms must not be negative")
        self._driver = driver
        self.topic = topic
        self._key_serde = key_serde
        self._value_serde = value_serde
        self._current_time = int(time.time() * 1000) if start_timestamp_ms is None else start_timestamp_ms
        self._advance = auto_advance_ms

    @property
    def current_time_ms(self) -> int:
        return self._current_time

    def advance_time(self, advance_ms: int) -> None:
        """Advance the time given to records piped without a timestamp."""
        if advance_ms < 0:
            raise ValueError("advance_ms must not be negative")
        self._current_time += advance_ms

    def _timestamp(self, timestamp: int | None) -> int:
        if timestamp is not None:
            return timestamp
        now = self._current_time
        self._current_time += self._advance
        return now

    def pipe_record(self, record: TestRecord) -> None:
        key = serialize_or_raise(self._key_serde, self.topic, "key", record.key)
        value = serialize_or_raise(self._value_serde, self.topic, "value", record.value)
        self._driver.pipe_raw(self.topic, key, value, self._timestamp(record.timestamp), record.headers)

    def pipe_input(
        self,
        *args: Any,
        key: Any = _UNSET,
        value: Any = _UNSET,
        timestamp: int | None = None,
        headers: Mapping[str, bytes | None] | Iterable[tuple[str, bytes | None]] | None = None,
    ) -> None:
        """``pipe_input(value)``, ``pipe_input(key, value)`` or
        ``pipe_input(key, value, timestamp[, headers])``."""
        if len(args) == 1 and key is _UNSET and value is _UNSET:
            key, value = None, args[0]
        elif 2 <= len(args) <= 4:
            key, value = args[0], args[1]
            if len(args) >= 3:
                timestamp = args[2]
            if len(args) == 4:
                headers = args[3]
        elif args:
            raise TypeError("pipe_input takes (value), (key, value) or (key, value, timestamp[, headers])")
        key = None if key is _UNSET else key
        value = None if value is _UNSET else value
        topic = self.topic
        self._driver.pipe_raw(
            topic,
            serialize_or_raise(self._key_serde, topic, "key", key),
            serialize_or_raise(self._value_serde, topic, "value", value),
            self._timestamp(timestamp),
            normalize_headers(headers),
        )

    def pipe_record_list(self, records: Iterable[TestRecord]) -> None:
        for record in records:
            self.pipe_record(record)

    def pipe_value_list(
        self, values: Iterable[Any], start_timestamp: int | None = None, advance_ms: int = 0
    ) -> None:
        """Pipe values (key None); with ``start_timestamp`` record i gets start + i * advance."""
        for i, value in enumerate(values):
            ts = None if start_timestamp is None else start_timestamp + i * advance_ms
            self.pipe_record(TestRecord(None, value, ts))

    def pipe_key_value_list(
        self, pairs: Iterable[Any], start_timestamp: int | None = None, advance_ms: int = 0
    ) -> None:
        """Pipe ``(key, value)`` pairs or KeyValues; timestamps as in :meth:`pipe_value_list`."""
        for i, (key, value) in enumerate(pairs):
            ts = None if start_timestamp is None else start_timestamp + i * advance_ms
            self.pipe_record(TestRecord(key, value, ts))

    def __repr__(self) -> str:
        return f"TestInputTopic[topic='{self.topic}']"


class TestOutputTopic:
    """Reads, in order, the records produced to one topic; each read removes the record."""

    __test__ = False

    def __init__(self, driver: TopologyTestDriver, topic: str, key_serde: Serde, value_serde: Serde) -> None:
        self._driver = driver
        self.topic = topic
        self._key_serde = key_serde
        self._value_serde = value_serde

    def _queue(self) -> collections.deque[ProducedRecord]:
        return self._driver.output_queue(self.topic)

    def read_record(self) -> TestRecord:
        queue = self._queue()
        if not queue:
            raise NoSuchElementError(f"empty topic: {self.topic}")
        produced = queue.popleft()
        key = deserialize_or_raise(self._key_serde, self.topic, "key", produced.key)
        value = deserialize_or_raise(self._value_serde, self.topic, "value", produced.value)
        return TestRecord(key, value, produced.timestamp, produced.headers)

    def read_value(self) -> Any:
        return self.read_record().value

    def read_key_value(self) -> KeyValue:
        record = self.read_record()
        return KeyValue(record.key, record.value)

    def read_records_to_list(self) -> list[TestRecord]:
        out = []
        while not self.is_empty():
            out.append(self.read_record())
        return out

    def read_values_to_list(self) -> list[Any]:
        return [r.value for r in self.read_records_to_list()]

    def read_key_values_to_list(self) -> list[KeyValue]:
        return [KeyValue(r.key, r.value) for r in self.read_records_to_list()]

    def read_key_values_to_map(self) -> dict[Any, Any]:
        """Last value per key (a None value is kept as None); a None key is an error."""
        out: dict[Any, Any] = {}
        for record in self.read_records_to_list():
            if record.key is None:
                raise StreamsError(
                    f"topic {self.topic}: null keys are not allowed with read_key_values_to_map"
                )
            out[record.key] = record.value
        return out

    def queue_size(self) -> int:
        return len(self._queue())

    get_queue_size = queue_size

    def is_empty(self) -> bool:
        return not self._queue()

    def __repr__(self) -> str:
        return f"TestOutputTopic[topic='{self.topic}', size={self.queue_size()}]"
