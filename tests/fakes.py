"""Test fakes shared by the unit tests: one definition each.

- :class:`FakeError`, :class:`FakeMessage`: what a confluent consumer returns (records, errors,
  end-of-partition events);
- :class:`FakeEofConsumer`: a consumer over in-memory partitions whose listed end may lag the true
  end, as the embedded broker's ListOffsets does (docs/decisions/0001-embedded-broker.md);
- :class:`NoOpProcessor`: a processor that does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streams_runtime.kafka.clients import PARTITION_EOF
from streams_runtime.processor.api import Processor


@dataclass(frozen=True)
class FakeError:
    """A consumer error: ``code()`` and ``str()`` as librdkafka's ``KafkaError``."""

    error_code: int
    text: str = "fake error"

    def code(self) -> int:
        return self.error_code

    def fatal(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.text


class FakeMessage:
    """A consumed record, or an error event when ``error`` is given."""

    def __init__(
        self,
        offset: int,
        key: bytes | None = None,
        value: bytes | None = None,
        headers: list | None = None,
        *,
        topic: str = "topic",
        partition: int = 0,
        timestamp: int | None = None,
        error: FakeError | None = None,
    ) -> None:
        self._offset, self._key, self._value, self._headers = offset, key, value, headers
        self._topic, self._partition, self._error = topic, partition, error
        self._timestamp = 1_000 + offset if timestamp is None else timestamp

    def error(self) -> FakeError | None:
        return self._error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, self._timestamp)

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list | None:
        return self._headers


class FakeEofConsumer:
    """A consumer with ``enable.partition.eof`` over in-memory partitions.

    :param partitions: ``(topic, partition) -> (low, listed end, true end)``; the partition holds
        one record at every offset in ``[low, true end)``; ListOffsets answers ``(low, listed end)``.
    :param fail: ``(topic, partition)`` whose first fetch answers a broker error instead.
    :param stall: ``(topic, partition)`` that never reach their end (no EOF event).
    """

    def __init__(
        self,
        partitions: dict[tuple[str, int], tuple[int, int, int]],
        fail: set[tuple[str, int]] | None = None,
        stall: set[tuple[str, int]] | None = None,
    ) -> None:
        self.partitions = partitions
        self.fail = fail or set()
        self.stall = stall or set()
        self.positions: dict[tuple[str, int], int] = {}
        self.assignments: list[list[tuple[str, int, int]]] = []
        self.unassigned = 0

    def get_watermark_offsets(self, tp: Any, timeout: float = 0.0, cached: bool = False) -> tuple[int, int]:
        low, listed, _ = self.partitions[(tp.topic, tp.partition)]
        return low, listed

    def assign(self, tps: list[Any]) -> None:
        self.assignments.append([(tp.topic, tp.partition, tp.offset) for tp in tps])
        self.positions = {(tp.topic, tp.partition): tp.offset for tp in tps}

    def unassign(self) -> None:
        self.positions = {}
        self.unassigned += 1

    def consume(self, num_messages: int = 1, timeout: float = 0.0) -> list[FakeMessage]:
        out: list[FakeMessage] = []
        for tp, position in list(self.positions.items()):
            topic, partition = tp
            if tp in self.fail:
                out.append(FakeMessage(position, topic=topic, partition=partition, error=FakeError(-1)))
                continue
            end = self.partitions[tp][2]
            while position < end and len(out) < num_messages:
                out.append(FakeMessage(position, b"k%d" % position, b"v", topic=topic, partition=partition))
                position += 1
            if position >= end and tp not in self.stall and len(out) < num_messages:
                out.append(FakeMessage(end, topic=topic, partition=partition, error=FakeError(PARTITION_EOF)))
                position += 1  # one EOF event per reaching the end
            self.positions[tp] = position
        return out


class NoOpProcessor(Processor):
    """A processor that does nothing."""

    def process(self, record: Any) -> None:
        pass
