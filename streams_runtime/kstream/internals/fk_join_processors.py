"""Foreign-key table-table join processors (KIP-213), one per step of the protocol:

1. *subscription send* (left side): for each left-hand change, subscribe the new foreign key
   and unsubscribe the old one when it changed; each subscription carries the hash of the new
   left value and the left row's partition;
2. *subscription receive* (foreign side, after the subscription topic): keep the subscription in
   the subscription store under ``(fk, pk)`` (or remove it);
3. *subscription join* (foreign side): answer the subscription with the current foreign value;
4. *foreign table join* (foreign side): on a foreign-table change, answer every subscriber of
   that foreign key (a prefix scan of the subscription store);
5. *response resolver* (left side, after the response topic): drop a response whose hash no
   longer matches the current left value; otherwise join (or emit a tombstone).

The result goes through a KTable source processor (the ``-OUTPUT-`` node), which materializes it
when asked. Semantics follow Kafka Streams' processors of the same names.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals.change import Change
from streams_runtime.kstream.internals.fk_join_wire import (
    CombinedKeySchema,
    Instruction,
    SubscriptionResponseWrapper,
    SubscriptionResponseWrapperSerde,
    SubscriptionWrapper,
    SubscriptionWrapperSerde,
    hash_bytes,
)
from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
    skip_null,
)
from streams_runtime.processor.api import Record
from streams_runtime.serdes import Serde, Serdes
from streams_runtime.state import ValueAndTimestamp

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.kstream.internals.table_joins import ValueGetterSupplier
    from streams_runtime.processor.internals.metrics import Sensor

log = logging.getLogger("streams_runtime.kstream")

_BYTES = Serdes.Bytes()


@dataclass(eq=False, repr=False)
class FkJoinShared:
    """What the five processors share: serdes (bound to the app defaults on first init) and the
    pseudo-topic names the serdes are called with."""

    registration_topic: str
    key_schema: CombinedKeySchema
    subscription_serde: SubscriptionWrapperSerde
    response_serde: SubscriptionResponseWrapperSerde
    value_serde: Serde | None  # the left table's value serde (for the hash)
    bound: bool = field(default=False, init=False)

    def bind(self, context: ProcessorContext) -> None:
        if self.bound:
            return
        topic = context.application_id + "-" + self.registration_topic
        self.key_schema.bind(context, topic + "-fk", topic + "-pk")
        self.subscription_serde.bind(context, topic + "-pk")
        self.response_serde.bind(context)
        if self.value_serde is None:
            self.value_serde = context.app_configs.default_serde("value")
        self.hash_serde: Serde = self.value_serde
        self.value_hash_topic = topic + "-vh"
        self.bound = True

    def value_hash(self, value: object) -> bytes | None:
        if value is None:
            return None
        return hash_bytes(self.hash_serde.serialize(self.value_hash_topic, value))


def _skip_out_of_order(dropped: Sensor) -> None:
    """An out-of-order update of a versioned table joins nothing; counted, as in Kafka Streams."""
    log.info("Skipping out-of-order record from versioned table while performing table-table join.")
    dropped.record()


@dataclass(eq=False, repr=False)
class _Base(InternalProcessor):
    """A processor of the join; with ``store_name`` it opens that (subscription) store, with
    ``getter_supplier`` a table's value getter."""

    shared: FkJoinShared
    store_name: str | None = field(default=None, kw_only=True)
    getter_supplier: ValueGetterSupplier | None = field(default=None, kw_only=True)

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context
        self.shared.bind(context)
        self.dropped = context.metrics.dropped_records(context.task_id)
        if self.store_name is not None:
            self.store = context.get_state_store(self.store_name)
        if self.getter_supplier is not None:
            self.getter = self.getter_supplier.get()
            self.getter.init(context)


@dataclass(eq=False, repr=False)
class SubscriptionSend(_Base):
    extractor: Callable[..., Any]
    left_join: bool

    def process(self, record: Record) -> None:
        change = record.value
        if not getattr(change, "is_latest", True):
            _skip_out_of_order(self.dropped)
            return
        new, old = change.new_value, change.old_value
        self._hash: Any = ...
        fk_bytes = self.shared.key_schema.prefix
        old_fk = None if old is None else self.extractor(record.key, old)
        if self.left_join:
            if old is None and new is None:
                return  # deleting an absent row changes no left-join result
            new_fk = None if new is None else self.extractor(record.key, new)
            if old_fk is not None and (new_fk is None or fk_bytes(new_fk) != fk_bytes(old_fk)):
                # the new subscription's response carries the result: the old one only unsubscribes
                self._send(record, old_fk, Instruction.DELETE_KEY_NO_PROPAGATE)
            # every change gets a response (a delete too, through a null foreign key)
            self._send(record, new_fk, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE)
            return
        if new is None:
            if old_fk is not None:
                self._send(record, old_fk, Instruction.DELETE_KEY_AND_PROPAGATE)
            return
        new_fk = self.extractor(record.key, new)
        if new_fk is None:
            skip_null(self.context, self.dropped, "foreign key")
            if old_fk is not None:  # the old result (if any) goes
                self._send(record, old_fk, Instruction.DELETE_KEY_AND_PROPAGATE)
            return
        if old_fk is None:
            # an insert (or a row that had no foreign key): no earlier result to delete
            self._send(record, new_fk, Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE)
        elif fk_bytes(new_fk) != fk_bytes(old_fk):
            self._send(record, old_fk, Instruction.DELETE_KEY_NO_PROPAGATE)
            # a null result when the new key has no value: it replaces the old key's result
            self._send(record, new_fk, Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE)
        else:
            # the same key: no value there now means none before either, so nothing to delete
            self._send(record, new_fk, Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE)

    def _send(self, record: Record, foreign_key: object, instruction: Instruction) -> None:
        if self._hash is ...:
            self._hash = self.shared.value_hash(record.value.new_value)
        meta = self.context.record_metadata()
        partition = meta.partition if meta is not None else self.context.partition
        wrapper = SubscriptionWrapper(self._hash, instruction, record.key, partition)
        self.context.forward(Record(foreign_key, wrapper, record.timestamp, record.headers))


class SubscriptionReceive(_Base):
    """Stores or removes the subscription; forwards ``((fk, pk), Change(new, old))``."""

    def process(self, record: Record) -> None:
        wrapper: SubscriptionWrapper = record.value
        if record.key is None and wrapper.instruction != Instruction.PROPAGATE_NULL_IF_NO_FK_VAL_AVAILABLE:
            skip_null(self.context, self.dropped, "foreign key")
            return
        if wrapper.version > 0:
            raise ValueError("SubscriptionWrapper is of an incompatible version")
        new = ValueAndTimestamp.make(wrapper, record.timestamp)
        old = None
        if record.key is not None:
            key = self.shared.key_schema.to_bytes(record.key, wrapper.primary_key)
            old = self.store.get(key)
            if wrapper.instruction in (
                Instruction.DELETE_KEY_AND_PROPAGATE,
                Instruction.DELETE_KEY_NO_PROPAGATE,
            ):
                self.store.delete(key)
            else:
                self.store.put(key, new)
        combined = (record.key, wrapper.primary_key)
        self.context.forward(Record(combined, Change(new, old), record.timestamp, record.headers))


class SubscriptionJoin(_Base):
    """Answers a subscription with the foreign table's current value."""

    def process(self, record: Record) -> None:
        foreign_key, primary_key = record.key
        vat = record.value.new_value
        wrapper: SubscriptionWrapper = vat.value
        found = None if foreign_key is None else self.getter.get(foreign_key)
        timestamp = vat.timestamp if found is None else max(vat.timestamp, found.timestamp)
        instruction = wrapper.instruction
        if instruction == Instruction.DELETE_KEY_NO_PROPAGATE:
            return
        if instruction == Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE and found is None:
            return
        value = None
        if instruction != Instruction.DELETE_KEY_AND_PROPAGATE and found is not None:
            value = found.value
        response = SubscriptionResponseWrapper(wrapper.hash, value, wrapper.primary_partition)
        self.context.forward(Record(primary_key, response, timestamp, record.headers))


class ForeignTableJoin(_Base):
    """A foreign-table change answers every subscriber of its key."""

    def process(self, record: Record) -> None:
        if record.key is None:
            skip_null(self.context, self.dropped, "key")
            return
        change = record.value
        if not getattr(change, "is_latest", True):
            _skip_out_of_order(self.dropped)
            return
        schema = self.shared.key_schema
        prefix = schema.prefix(record.key)
        with self.store.prefix_scan(prefix, _BYTES) as found:
            entries = list(found)
        for key, vat in entries:
            wrapper: SubscriptionWrapper = vat.value
            response = SubscriptionResponseWrapper(wrapper.hash, change.new_value, wrapper.primary_partition)
            self.context.forward(
                Record(schema.primary_key(bytes(key)), response, record.timestamp, record.headers)
            )


class ResponseJoin(_Base):
    """Joins a response with the current left value when the hash still matches."""

    def __init__(
        self, shared: FkJoinShared, getter: ValueGetterSupplier, joiner: Callable[..., Any], left_join: bool
    ) -> None:
        super().__init__(shared, getter_supplier=getter)
        self.joiner = joiner
        self.left_join = left_join

    def process(self, record: Record) -> None:
        response: SubscriptionResponseWrapper = record.value
        if response.version != 0:
            raise ValueError("SubscriptionResponseWrapper is of an incompatible version")
        current = self.getter.get(record.key)
        current_hash = None if current is None else self.shared.value_hash(current.value)
        if response.original_value_hash != current_hash:
            log.debug("Dropping FK-join response due to hash mismatch. Expected %s. Actual %s", current_hash,
                      response.original_value_hash)  # fmt: skip
            return
        foreign = response.foreign_value
        if foreign is None and (not self.left_join or current is None):
            result = None
        else:
            result = self.joiner(record.key, None if current is None else current.value, foreign)
        self.context.forward(record.with_value(result))


def primary_partition_partitioner(topic: str, key: Any, value: Any, *_: object) -> int | None:
    """The response sink's partitioner: back to the left row's partition."""
    partition: int | None = value.primary_partition
    return partition
