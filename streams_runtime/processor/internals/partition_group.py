"""RecordQueue and PartitionGroup: the buffered input of one task and the choice of the next record.

Owned by a StreamTask. Each input partition has a RecordQueue of raw (bytes) records: the
consumer's own message objects, appended per poll batch and never copied. The queue
deserializes and timestamps lazily, one record at a time, when a record becomes its head: a
corrupt record goes to the deserialization handler, a record whose extracted timestamp is
negative is dropped (logged, counted). The PartitionGroup picks, among queues with a head, the
one whose head has the smallest timestamp (ties: the queue created first), which is how a task
merges partitions in timestamp order; stream time is the largest timestamp processed. A task
with a single input queue has no choice to make: its queue does not read a head as batches
arrive (``reads_ahead`` off: a head would be deserialized through the general path once per
poll batch, only to be handed over), and the task takes the raw records in one piece
(``take_raw``) and deserializes them in its processing loop, with the same rules; the one-record
path (:meth:`PartitionGroup.next_queue`) reads such a queue's head when it asks for it. The
queue keeps, made once, what that loop calls per record: the serdes' C decoders
(:func:`~streams_runtime.serdes.bytes_decoder`) and whether the default timestamp rule applies.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from streams_runtime.processor.api import Headers, Record
from streams_runtime.processor.internals.handlers import DeserializationHandler
from streams_runtime.processor.internals.metrics import Sensor
from streams_runtime.processor.internals.nodes import SourceNode
from streams_runtime.processor.timestamps import ConsumerRecord, Extractor, fail_on_invalid
from streams_runtime.serdes import Serde, bytes_decoder, deserialize_or_raise

log = logging.getLogger("streams_runtime.processor")

UNKNOWN = -1

_new_tuple = tuple.__new__  # what a named tuple's generated constructor calls

#: a consumed message's headers: a list of (name, value) pairs from a client (None without any),
#: or the record's own tuple
MessageHeaders = Headers | list[tuple[str, bytes]] | None


class RawRecord:
    """A record not deserialized yet, with the accessors of a consumed client message.

    The queues hold what the consumer returned (its message objects: nothing is copied per
    record); records that do not come from a consumer (the TopologyTestDriver, the global
    thread) are wrapped in this class, which answers the same calls.
    """

    __slots__ = ("_topic", "_partition", "_offset", "_timestamp", "_key", "_value", "_headers")

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: MessageHeaders = (),
    ) -> None:
        self._topic, self._partition, self._offset = topic, partition, offset
        self._timestamp, self._key, self._value, self._headers = timestamp, key, value, headers

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, self._timestamp)  # (CreateTime, ms), as a client message answers

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> MessageHeaders:
        return self._headers

    def error(self) -> None:
        return None


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
        "key_serde",
        "value_serde",
        "_extractor",
        "_handler",
        "_dropped",
        "reads_ahead",
        "key_decode",
        "value_decode",
        "fast_extraction",
        "source_forward",
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
        self.key_serde = key_serde
        self.value_serde = value_serde
        self._extractor = extractor
        self._handler = handler
        self._dropped = dropped
        #: the head is deserialized as records arrive (off for a task's only queue, see the
        #: module docstring; :meth:`PartitionGroup.add_queue` sets it)
        self.reads_ahead = True
        #: C functions for the serdes that have them (Json, String, Bytes), or None
        self.key_decode = bytes_decoder(key_serde)
        self.value_decode = bytes_decoder(value_serde)
        #: the default extractor: a record's own timestamp is used as is when not negative (the
        #: processing loops apply that rule inline and call :meth:`extract_time` otherwise)
        self.fast_extraction = extractor is fail_on_invalid
        #: the task's forwarder from this queue's source, made on its first processing loop
        self.source_forward: Callable[[str, int, int, Record], None] | None = None

    def __len__(self) -> int:
        return len(self.raw) + (self.head is not None)

    def add(self, record: RawRecord) -> None:
        """Buffer one raw record (a client message, or a :class:`RawRecord`)."""
        self.raw.append(record)
        if self.head is None:
            self.update_head()

    def add_batch(self, records: list[Any]) -> None:
        """Buffer the raw records of one poll for this partition, in offset order."""
        self.raw.extend(records)
        if self.head is None and self.reads_ahead:
            self.update_head()

    def take_raw(self) -> deque[Any]:
        """Hand the buffered raw records (behind the head) to the caller, which processes them
        in order and gives back what it did not process with :meth:`give_back`."""
        raw, self.raw = self.raw, deque()
        return raw

    def give_back(self, records: list[Any]) -> None:
        """Put records taken with :meth:`take_raw` and not processed back in front, in order."""
        self.raw.extendleft(reversed(records))
        if self.head is None and self.raw:
            self.update_head()

    def pop_head(self) -> tuple[ConsumerRecord, int]:
        """Remove the head (caller checked there is one) without deserializing the next record
        (the caller takes the raw records next, with :meth:`take_raw`)."""
        head, time = self.head, self.head_time
        self.head = None
        if time > self.partition_time:
            self.partition_time = time
        return head, time  # type: ignore[return-value]  # the caller checked: not None

    def poll(self) -> tuple[ConsumerRecord, int]:
        """Remove the head (caller checked there is one) and advance to the next valid record."""
        head, time = self.head, self.head_time
        self.head = None
        if time > self.partition_time:
            self.partition_time = time
        if self.raw:
            self.update_head()
        return head, time  # type: ignore[return-value]  # the caller checked: not None

    def deserialize(self, msg: Any) -> ConsumerRecord | None:
        """The deserialized record of a raw one, or None when the deserialization handler
        skipped it (a handler that fails raises)."""
        topic, raw_key, raw_value = self.topic, msg.key(), msg.value()
        try:
            key = self.key_serde.deserialize(topic, raw_key)
            value = self.value_serde.deserialize(topic, raw_value)
        except Exception:
            try:
                key = deserialize_or_raise(self.key_serde, topic, "key", raw_key)
                value = deserialize_or_raise(self.value_serde, topic, "value", raw_value)
            except Exception as exc:  # a corrupt record: the handler skips it or raises
                self._handler.handle(exc, msg)
                return None
        result: ConsumerRecord = _new_tuple(
            ConsumerRecord,
            (topic, self.partition, msg.offset(), msg.timestamp()[1], key, value, msg.headers() or ()),
        )
        return result

    def extract_time(self, consumed: ConsumerRecord) -> int:
        """The record's extracted timestamp; a negative one is logged and counted, and the
        caller drops the record."""
        time = self._extractor(consumed, self.partition_time)
        if time < 0:
            log.warning(
                "Skipping record due to negative extracted timestamp. topic=[%s] partition=[%s] "
                "offset=[%s] extractedTimestamp=[%s]",
                consumed.topic,
                consumed.partition,
                consumed.offset,
                time,
            )
            self._dropped.record()
        return time

    def update_head(self) -> None:
        """Deserialize records until one is the head (skipped: corrupt under a skipping
        handler, or a negative extracted timestamp), or none is left."""
        raw = self.raw
        while self.head is None and raw:
            consumed = self.deserialize(raw.popleft())
            if consumed is None:
                continue
            timestamp = consumed.timestamp
            if self._extractor is fail_on_invalid and timestamp >= 0:
                time = timestamp
            else:
                time = self.extract_time(consumed)
                if time < 0:
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
        """Add an input queue; a group's only queue does not read ahead, a group of several
        does (the choice of the next record compares their heads)."""
        self.queues[(queue.topic, queue.partition)] = queue
        self._ordered.append(queue)
        alone = len(self._ordered) == 1
        for each in self._ordered:
            each.reads_ahead = not alone
            if not alone and each.head is None:
                each.update_head()

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
        ordered = self._ordered
        if len(ordered) == 1:  # a lone queue does not read ahead: its head is read when asked for
            queue = ordered[0]
            if queue.head is None and queue.raw:
                queue.update_head()
            return queue if queue.head is not None else None
        best = None
        for queue in ordered:
            if queue.head is not None and (best is None or queue.head_time < best.head_time):
                best = queue
        return best
