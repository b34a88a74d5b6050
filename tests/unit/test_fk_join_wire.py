"""Foreign-key join internals: the murmur3 hash (reference vectors), the wire formats of the
subscription and response wrappers, and the response resolver's stale-response check."""

from __future__ import annotations

from types import SimpleNamespace

from streams_runtime import Record, Serdes
from streams_runtime.kstream.internals.fk_join_processors import FkJoinShared, ResponseJoin
from streams_runtime.kstream.internals.fk_join_wire import (
    CombinedKeySchema,
    Instruction,
    SubscriptionResponseWrapper,
    SubscriptionResponseWrapperSerde,
    SubscriptionWrapper,
    SubscriptionWrapperSerde,
    hash_bytes,
    murmur3_128,
)
from streams_runtime.state import ValueAndTimestamp


def test_murmur3_matches_the_reference_vectors():
    assert murmur3_128(b"hello", 0) == (0xCBD8A7B341BD9B02, 0x5B1E906A48AE1D19)
    assert murmur3_128(b"The quick brown fox jumps over the lazy dog", 0) == (
        0xE34BBC7BBC071B6C,
        0x7A433CA9C49A9347,
    )
    assert murmur3_128(b"", 0) == (0, 0)
    assert hash_bytes(b"a") != hash_bytes(b"b")
    assert hash_bytes(None) is None


def test_wrappers_round_trip_with_and_without_hash_and_value():
    sub = SubscriptionWrapperSerde(Serdes.String())
    for wrapper in (
        SubscriptionWrapper(hash_bytes(b"v"), Instruction.PROPAGATE_ONLY_IF_FK_VAL_AVAILABLE, "pk-1", 3),
        SubscriptionWrapper(None, Instruction.DELETE_KEY_AND_PROPAGATE, "pk-2", None),
    ):
        assert sub.deserialize("t", sub.serialize("t", wrapper)) == wrapper
    resp = SubscriptionResponseWrapperSerde(Serdes.String())
    for wrapper in (
        SubscriptionResponseWrapper(hash_bytes(b"v"), "foreign", 1),
        SubscriptionResponseWrapper(None, None, 0),
        SubscriptionResponseWrapper(hash_bytes(b"v"), "", 2),  # empty is not null
    ):
        assert resp.deserialize("t", resp.serialize("t", wrapper)) == wrapper


def test_combined_key_prefix_separates_foreign_keys_sharing_a_prefix():
    schema = CombinedKeySchema(Serdes.String(), Serdes.String())
    key = schema.to_bytes("ab", "pk")
    assert key.startswith(schema.prefix("ab"))
    assert not key.startswith(schema.prefix("a"))  # the length prefix keeps "a" from matching "ab"
    assert schema.primary_key(key) == "pk"


class _Getter:
    def __init__(self, values):
        self.values = values

    def get(self):
        return self

    def init(self, context):
        pass

    def get_value(self, key):
        return self.values.get(key)


def _resolver(current: dict, left_join: bool):
    forwarded = []
    shared = FkJoinShared(
        "reg-topic",
        CombinedKeySchema(Serdes.String(), Serdes.String()),
        SubscriptionWrapperSerde(Serdes.String()),
        SubscriptionResponseWrapperSerde(Serdes.String()),
        Serdes.String(),
    )
    getter = _Getter(current)
    getter_supplier = SimpleNamespace(get=lambda: SimpleNamespace(init=lambda c: None, get=getter.get_value))
    processor = ResponseJoin(shared, getter_supplier, lambda k, a, b: f"{a}+{b}", left_join)
    context = SimpleNamespace(
        application_id="app",
        app_configs=None,
        task_id="0_0",
        metrics=SimpleNamespace(dropped_records=lambda task: SimpleNamespace(record=lambda: None)),
        forward=forwarded.append,
    )
    processor.init(context)
    return processor, shared, forwarded


def test_a_response_for_a_superseded_left_value_is_dropped():
    """The hash check: a response computed for an older left value never becomes a result."""
    processor, shared, forwarded = _resolver({"lhs1": ValueAndTimestamp.make("new|fk2", 5)}, left_join=False)
    stale = SubscriptionResponseWrapper(shared.value_hash("old|fk1"), "rhs1", 0)
    processor.process(Record("lhs1", stale, 5))
    assert forwarded == []
    fresh = SubscriptionResponseWrapper(shared.value_hash("new|fk2"), "rhs2", 0)
    processor.process(Record("lhs1", fresh, 5))
    assert [(r.key, r.value) for r in forwarded] == [("lhs1", "new|fk2+rhs2")]


def test_a_response_without_foreign_value_is_a_tombstone_for_inner_and_a_half_join_for_left():
    for left_join, expected in ((False, None), (True, "v|fk+None")):
        processor, shared, forwarded = _resolver({"k": ValueAndTimestamp.make("v|fk", 1)}, left_join)
        processor.process(Record("k", SubscriptionResponseWrapper(shared.value_hash("v|fk"), None, 0), 1))
        assert [r.value for r in forwarded] == [expected]
