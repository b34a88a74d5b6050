"""Stream-table joins with a grace period (KIP-923), on a versioned table.

Each stream record waits in a time-ordered buffer until stream time has passed its timestamp by
the grace period, then joins with the table version valid at the record's timestamp; so a table
update that arrives a little late still meets the stream records it should have met. A record
already older than ``stream time - grace`` joins at once and evicts nothing (as Kafka Streams).
Stream time here is the buffer's: the newest timestamp of a record that went into the buffer. A
record with a null key or value never does (it is dropped, or a left join's null key joins at
once), so it moves no stream time, as in Kafka Streams, whose buffer store keeps its own.
Eviction runs after each buffered put: every record with ``timestamp <= stream time - grace``
leaves, oldest first; records of one timestamp leave in the byte order of their serialized keys,
then in arrival order, as from Kafka Streams' buffer (whose store keys are ``timestamp | key |
seqnum``).

The buffer is a logged key-value store ``<join name>-Buffer`` (bytes keys ``timestamp | key |
seq``, 8-byte big-endian numbers; values ``len(key) | key | value``), so buffered records survive
a restart; stream time is kept in it under a reserved key. (A buffer written before keys held the
record key, ``timestamp | seq``, reads the same: the timestamp is the first 8 bytes, the sequence
number the last 8.) Record headers are not kept in the buffer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from streams_runtime.errors import StreamsError, TopologyError
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
)
from streams_runtime.processor.api import Processor, Record
from streams_runtime.serdes import Serde

_U64 = struct.Struct(">Q")
_LEN = struct.Struct(">i")
_STREAM_TIME = b"\xff" * 17
_OFFSET = 1 << 63
NOT_VERSIONED = "KTable must be versioned to use a grace period in a stream table join."
RETENTION_TOO_SHORT = "History retention must be at least grace period."


def check_versioned_store(store_builder: object, grace_ms: int) -> None:
    """Kafka's checks: the joined table is versioned, its history covers the grace period."""
    retention = getattr(store_builder, "history_retention_ms", None)
    if retention is None:
        raise TopologyError(NOT_VERSIONED)
    if retention < grace_ms:
        raise TopologyError(RETENTION_TOO_SHORT)


@dataclass(eq=False, repr=False)
class KStreamKTableJoinWithGrace(InternalProcessor):
    """Buffers stream records, then hands them to the plain join processor ``join``; the serdes
    (of the buffer) default to the app's."""

    join: Processor
    buffer_name: str
    grace_ms: int
    key_serde: Serde | None
    value_serde: Serde | None

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.join.init(context)
        configs = context.app_configs
        self.keys: Serde = self.key_serde or configs.default_serde("key")
        self.values: Serde = self.value_serde or configs.default_serde("value")
        self.store = context.get_state_store(self.buffer_name)
        raw = self.store.get(_STREAM_TIME)
        self.stream_time = struct.unpack(">q", raw)[0] if raw else -(2**63)
        self.seq = 0
        with self.store.all() as entries:
            for kv in entries:
                if kv.key != _STREAM_TIME:
                    self.seq = max(self.seq, _U64.unpack_from(kv.key, len(kv.key) - 8)[0] + 1)

    def process(self, record: Record) -> None:
        if record.key is None or record.value is None:
            # dropped or joined at once, as without grace; it does not move the buffer's stream
            # time, which is the newest timestamp buffered, as in Kafka Streams (where a left
            # join's null-key record fails the task: docs/decisions/0012-kafka-streams-differences.md)
            self.join.process(record)
            return
        if record.timestamp > self.stream_time:
            self.stream_time = record.timestamp
            self.store.put(_STREAM_TIME, struct.pack(">q", self.stream_time))
        horizon = self.stream_time - self.grace_ms
        if record.timestamp < horizon:
            self.join.process(record)
            return
        topic = self.buffer_name
        key = self.keys.serialize(topic, record.key)
        value = self.values.serialize(topic, record.value)
        if key is None or value is None:
            raise StreamsError(f"a serde of {topic} serialized a non-null key or value to null")
        store_key = _U64.pack(record.timestamp + _OFFSET) + key + _U64.pack(self.seq)
        self.store.put(store_key, _LEN.pack(len(key)) + key + value)
        self.seq += 1
        self._evict(horizon)

    def _evict(self, horizon: int) -> None:
        ready = []
        with self.store.all() as entries:
            for kv in entries:
                if kv.key == _STREAM_TIME:
                    continue
                timestamp = _U64.unpack_from(kv.key, 0)[0] - _OFFSET
                if timestamp > horizon:
                    break
                ready.append((kv.key, timestamp, kv.value))
        topic = self.buffer_name
        for store_key, timestamp, data in ready:
            self.store.delete(store_key)
            (length,) = _LEN.unpack_from(data, 0)
            key = self.keys.deserialize(topic, data[4 : 4 + length])
            value = self.values.deserialize(topic, data[4 + length :])
            self.join.process(Record(key, value, timestamp))

    def close(self) -> None:
        close = getattr(self.join, "close", None)
        if callable(close):
            close()
