import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores, ValueAndTimestamp
from streams_runtime.state.internals.timestamped import (
    ValueAndTimestampSerde,
    raw_value_to_timestamped,
    record_converter_for,
    split_timestamped,
)


def test_should_prefix_the_value_with_an_eight_byte_big_endian_timestamp():
    serde = ValueAndTimestampSerde(Serdes.String())
    data = serde.serialize("t", ValueAndTimestamp("v", 258))
    assert data == b"\x00\x00\x00\x00\x00\x00\x01\x02" + b"v"
    assert serde.deserialize("t", data) == ValueAndTimestamp("v", 258)


@pytest.mark.parametrize("value,timestamp", [(0, 0), (5, -3), (2**63 - 1, 123), (-(2**63), 2**40)])
def test_should_store_long_values_as_timestamp_then_value_bytes(value, timestamp):
    serde = ValueAndTimestampSerde(Serdes.Long())
    data = serde.serialize("t", ValueAndTimestamp(value, timestamp))
    assert data == timestamp.to_bytes(8, "big", signed=True) + value.to_bytes(8, "big", signed=True)
    assert serde.deserialize("t", data) == ValueAndTimestamp(value, timestamp)
    assert serde.deserialize("t", bytearray(data)) == ValueAndTimestamp(value, timestamp)


@pytest.mark.parametrize(
    "bad,error",
    [
        (ValueAndTimestamp(2**63, 1), OverflowError),
        (ValueAndTimestamp(True, 1), TypeError),
        (ValueAndTimestamp(1, 2**63), OverflowError),
        ("x", TypeError),
    ],
)
def test_should_reject_what_the_long_serde_rejects(bad, error):
    with pytest.raises(error):
        ValueAndTimestampSerde(Serdes.Long()).serialize("t", bad)


def test_should_reject_a_long_value_of_the_wrong_width():
    with pytest.raises(ValueError, match="expected 8 bytes"):
        ValueAndTimestampSerde(Serdes.Long()).deserialize("t", bytes(12))


def test_should_keep_tombstones_as_none():
    serde = ValueAndTimestampSerde(Serdes.String())
    assert serde.serialize("t", None) is None
    assert serde.deserialize("t", None) is None
    assert raw_value_to_timestamped(None, 5) is None


def test_should_make_none_for_a_none_value():
    assert ValueAndTimestamp.make(None, 1) is None
    assert ValueAndTimestamp.make("v", 1) == ValueAndTimestamp("v", 1)
    assert ValueAndTimestamp.get_value_or_none(None) is None


def test_should_reject_short_timestamped_values():
    with pytest.raises(ValueError):
        split_timestamped(b"\x00\x01")


def test_should_convert_changelog_records_only_for_timestamped_stores():
    timestamped = Stores.timestamped_key_value_store_builder(
        Stores.in_memory_key_value_store("t"), Serdes.String(), Serdes.String()
    ).build()
    plain = Stores.key_value_store_builder(
        Stores.in_memory_key_value_store("p"), Serdes.String(), Serdes.String()
    ).build()
    assert record_converter_for(timestamped)(b"k", b"v", 7) == (b"k", raw_value_to_timestamped(b"v", 7))
    assert record_converter_for(timestamped)(b"k", None, 7) == (b"k", None)
    assert record_converter_for(plain)(b"k", b"v", 7) == (b"k", b"v")


def test_should_restore_a_timestamped_store_from_its_changelog(context):
    store = Stores.timestamped_key_value_store_builder(
        Stores.in_memory_key_value_store("t"), Serdes.String(), Serdes.Long()
    ).build()
    store.init(context)
    registration = context.registered[-1]
    converter = record_converter_for(registration.store)
    changelog = [(b"a", (5).to_bytes(8, "big"), 100), (b"b", (6).to_bytes(8, "big"), 200), (b"b", None, 300)]
    registration.restore_callback([converter(*record) for record in changelog], 2)
    assert store.get("a") == ValueAndTimestamp(5, 100)
    assert store.get("b") is None


def test_should_log_what_restore_reads_back(context):
    store = Stores.timestamped_key_value_store_builder(
        Stores.in_memory_key_value_store("t"), Serdes.String(), Serdes.Long()
    ).build()
    store.init(context)
    store.put("a", ValueAndTimestamp(9, 1234))
    change = context.logged[0]
    assert change.value == (9).to_bytes(8, "big") and change.timestamp == 1234
    converter = record_converter_for(store)
    key, value = converter(change.key, change.value, change.timestamp)
    assert store.inner().get(key) == value
