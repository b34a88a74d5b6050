import json
import struct

import pytest

from streams_runtime.errors import SerializationError
from streams_runtime.serdes import Serde, Serdes, deserialize_or_raise, serialize_or_raise

ROUND_TRIPS = [
    (Serdes.String(), "héllo"),
    (Serdes.Bytes(), b"\x00\xffraw"),
    (Serdes.Integer(), -2_147_483_648),
    (Serdes.Integer(), 2_147_483_647),
    (Serdes.Long(), -(2**63)),
    (Serdes.Long(), 2**63 - 1),
    (Serdes.Double(), 3.5),
    (Serdes.Json(), {"a": [1, 2, {"b": None}], "c": "ü"}),
    (Serdes.from_functions(lambda v: v.upper().encode(), lambda b: b.decode(), name="Upper"), "ABC"),
]

ALL_SERDES = [
    Serdes.String(),
    Serdes.Bytes(),
    Serdes.Integer(),
    Serdes.Long(),
    Serdes.Double(),
    Serdes.Json(),
    Serdes.from_functions(lambda v: b"x", lambda b: "x"),
]


@pytest.mark.parametrize(("serde", "value"), ROUND_TRIPS, ids=lambda p: getattr(p, "name", None))
def test_should_round_trip_values(serde, value):
    assert serde.deserialize("t", serde.serialize("t", value)) == value


@pytest.mark.parametrize("serde", ALL_SERDES, ids=lambda s: s.name)
def test_should_map_none_to_none_both_ways_for_tombstones(serde):
    assert serde.serialize("t", None) is None
    assert serde.deserialize("t", None) is None


def test_should_not_call_user_functions_with_none():
    def fail(_):
        raise AssertionError("called with None")

    serde = Serdes.from_functions(fail, fail, name="Never")
    assert serde.serialize("t", None) is None
    assert serde.deserialize("t", None) is None


def test_should_write_integer_as_four_byte_big_endian_signed():
    assert Serdes.Integer().serialize("t", -1) == b"\xff\xff\xff\xff"
    assert Serdes.Integer().serialize("t", 258) == b"\x00\x00\x01\x02"


def test_should_write_long_as_eight_byte_big_endian_signed():
    assert Serdes.Long().serialize("t", 1) == b"\x00" * 7 + b"\x01"
    assert Serdes.Long().serialize("t", -2) == b"\xff" * 7 + b"\xfe"


def test_should_write_double_as_ieee_big_endian():
    assert Serdes.Double().serialize("t", 1.25) == struct.pack(">d", 1.25)


def test_should_write_string_as_utf8_and_json_compactly():
    assert Serdes.String().serialize("t", "é") == "é".encode()
    assert Serdes.Json().serialize("t", {"a": 1, "b": [1, 2]}) == b'{"a":1,"b":[1,2]}'
    assert json.loads(Serdes.Json().serialize("t", {"k": "ü"})) == {"k": "ü"}


def test_should_reject_wrong_types_instead_of_coercing():
    with pytest.raises(TypeError):
        Serdes.String().serialize("t", 5)
    with pytest.raises(TypeError):
        Serdes.Integer().serialize("t", True)
    with pytest.raises(TypeError):
        Serdes.Bytes().serialize("t", "text")


def test_should_wrap_serializer_failure_naming_topic_side_and_serde():
    with pytest.raises(SerializationError) as info:
        serialize_or_raise(Serdes.Integer(), "orders", "key", 2**40)
    error = info.value
    assert (error.topic, error.side, error.serde) == ("orders", "key", "Serdes.Integer")
    assert "orders" in str(error) and "key" in str(error) and "Serdes.Integer" in str(error)
    assert isinstance(error.__cause__, OverflowError)
    assert error.cause is error.__cause__


def test_should_wrap_deserializer_failure_naming_topic_side_and_serde():
    with pytest.raises(SerializationError) as info:
        deserialize_or_raise(Serdes.Long(), "payments", "value", b"\x01\x02")
    message = str(info.value)
    assert "deserialize" in message
    assert "payments" in message and "value" in message and "Serdes.Long" in message
    assert info.value.operation == "deserialize"


def test_should_name_custom_serde_in_errors():
    serde = Serdes.from_functions(lambda v: 1 / 0, lambda b: b, name="Broken")
    with pytest.raises(SerializationError, match="Broken"):
        serialize_or_raise(serde, "t", "value", "x")


def test_should_pass_through_results_of_helpers():
    assert serialize_or_raise(Serdes.String(), "t", "key", "a") == b"a"
    assert deserialize_or_raise(Serdes.String(), "t", "key", b"a") == "a"
    assert serialize_or_raise(Serdes.String(), "t", "value", None) is None


def test_should_reject_unknown_side():
    with pytest.raises(ValueError, match="side"):
        serialize_or_raise(Serdes.String(), "t", "header", "a")


def test_should_reject_non_callable_functions():
    with pytest.raises(TypeError):
        Serdes.from_functions("not callable", lambda b: b)


def test_should_let_subclasses_define_only_the_non_none_paths():
    class Reversed(Serde):
        def __init__(self):
            super().__init__("Reversed")

        def _serialize(self, topic, data):
            return data[::-1].encode()

        def _deserialize(self, topic, data):
            return data.decode()[::-1]

    serde = Reversed()
    assert serde.serialize("t", "abc") == b"cba"
    assert serde.deserialize("t", b"cba") == "abc"
    assert serde.serialize("t", None) is None
    assert "Reversed" in repr(serde)


def test_json_should_write_what_the_standard_library_accepts():
    serde = Serdes.Json()
    # keys that are not strings become strings; integers wider than 64 bits are kept exactly
    assert serde.serialize("t", {1: 2, "big": 2**70}) == b'{"1":2,"big":1180591620717411303424}'
    assert serde.deserialize("t", b'{"big":1180591620717411303424}') == {"big": 2**70}
    assert serde.deserialize("t", bytearray(b'[1,"\xc3\xbc"]')) == [1, "ü"]
    assert serde.deserialize("t", b'{"x":NaN}')["x"] != serde.deserialize("t", b'{"x":NaN}')["x"]


def test_json_errors_should_explain_the_bad_input_as_the_standard_library_does():
    with pytest.raises(SerializationError, match="Expecting property name") as bad_json:
        deserialize_or_raise(Serdes.Json(), "payments", "value", b"{bad")
    assert "payments" in str(bad_json.value)
    with pytest.raises(SerializationError, match="can't decode byte 0xff"):
        deserialize_or_raise(Serdes.Json(), "payments", "value", b"\xff")
    with pytest.raises(SerializationError, match="Object of type set is not JSON serializable"):
        serialize_or_raise(Serdes.Json(), "payments", "value", {"s": {1}})
