"""RecordQueue and PartitionGroup: the buffered input of one task and the choice of the next record.

Owned by a StreamTask. Each input partition has a RecordQueue of raw (bytes) records. The queue
deserializes and timestamps lazily, one record at a time, when a record becomes its head: a
corrupt record goes to the deserialization handler, a record whose extracted timestamp is
negative is dropped (logged, counted). The PartitionGroup picks, among queues with a head, the
one whose head has the smallest timestamp (ties: the queue created first), which is how a task
merges partitions in timestamp order; stream time is the largest timestamp processed.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import NamedTuple, cast

from streams_runtime.processor.api import Headers
from streams_runtime.processor.internals.handlers import DeserializationHandler
from streams_runtime.processor.internals.metrics import Sensor
from streams_runtime.processor.internals.nodes import SourceNode
from streams_runtime.processor.timestamps import ConsumerRecord, Extractor, fail_on_invalid
from streams_runtime.serdes import Serde, deserialize_or_raise

log = logging.getLogger("streams_runtime.processor")

UNKNOWN = -1

_new_tuple = tuple.__new__  # what a named tuple's generated constructor calls


class RawRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Headers


class RecordQueue:
    """The raw records of one partition and its deserialized, timestamped head."""

    __slots__ = (
        "topic",
        "partition",
        "source",
        "raw",
        "head",
        "head_time",
        "partition_time",
        "_key_serde",
        "_value_serde",
        "_extractor",
        "_handler",
        "_dropped",
    )

    def __init__(
        self,
        topic: str,
        partition: int,
        source: SourceNode,
        key_serde: Serde,
        value_serde: Serde,
        extractor: Extractor,
        handler: DeserializationHandler,
        dropped: Sensor,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.source = source
        self.raw: deque[RawRecord] = deque()
        self.head: ConsumerRecord | None = None
        self.head_time = UNKNOWN
        self.partition_time = UNKNOWN
        self._key_serde = key_serde
        self._value_serde = value_serde
        self._extractor = extractor
        self._handler = handler
        self._dropped = dropped

    def __len__(self) -> int:
        return len(self.raw) + (self.head is not None)

    def add(self, record: RawRecord) -> None:
        self.raw.append(record)
        if self.head is None:
            self._update_head()

    def poll(self) -> tuple[ConsumerRecord, int]:
        """Remove the head (caller checked there is one) and advance to the next valid record."""
        head, time = self.head, self.head_time
        self.head = None
        if time > self.partition_time:
            self.partition_time = time
        if self.raw:
            self._update_head()
        return cast(ConsumerRecord, head), time

    def _update_head(self) -> None:
        # The hot path of every input record: the serdes are called directly (a failure is
        # wrapped by deserialize_or_raise, called again only then), the ConsumerRecord is built
        # without the named tuple's Python-level constructor, and the default extractor's rule
        # (the record's own timestamp when not negative) is applied without calling it.
        raw = self.raw
        key_serde, value_serde, extractor = self._key_serde, self._value_serde, self._extractor
        while self.head is None and raw:
            rec = raw.popleft()
            topic, partition, offset, timestamp, raw_key, raw_value, headers = rec
            try:
                key = key_serde.deserialize(topic, raw_key)
                value = value_serde.deserialize(topic, raw_value)
            except Exception:
                try:
                    key = deserialize_or_raise(key_serde, topic, "key", raw_key)
                    value = deserialize_or_raise(value_serde, topic, "value", raw_value)
                except Exception as exc:  # a corrupt record: the handler skips it or raises
                    self._handler.handle(
                        exc, topic, partition, offset, timestamp, raw_key, raw_value, headers
                    )
                    continue
            consumed: ConsumerRecord = _new_tuple(
                ConsumerRecord, (topic, partition, offset, timestamp, key, value, headers)
            )
            if extractor is fail_on_invalid and timestamp >= 0:
                time = timestamp
            else:
                time = extractor(consumed, self.partition_time)
            if time < 0:
                log.warning(
                    "Skipping record due to negative extracted timestamp. topic=[%s] partition=[%s] "
                    "offset=[%s] extractedTimestamp=[%s]",
                    topic,
                    partition,
                    offset,
                    time,
                )
                self._dropped.record()
                continue
            self.head = consumed
            self.head_time = time


class PartitionGroup:
    """All queues of one task; ``next_record`` returns the queue with the earliest head."""

    def __init__(self) -> None:
        self.queues: dict[tuple[str, int], RecordQueue] = {}
        self._ordered: list[RecordQueue] = []
        self.stream_time = UNKNOWN

    def add_queue(self, queue: RecordQueue) -> None:
        self.queues[(queue.topic, queue.partition)] = queue
        self._ordered.append(queue)

    def queue_for(self, topic: str, partition: int) -> RecordQueue | None:
        return self.queues.get((topic, partition))

    @property
    def ordered_queues(self) -> list[RecordQueue]:
        """The input queues in the order they were added (do not change the list)."""
        return self._ordered

    def has_records(self) -> bool:
        return any(q.head is not None or q.raw for q in self._ordered)

    def num_buffered(self) -> int:
        return sum(len(q) for q in self._ordered)

    def next_queue(self) -> RecordQueue | None:
        best = None
        for queue in self._ordered:
            if queue.head is not None and (best is None or queue.head_time < best.head_time):
                best = queue
        return best
