"""The C functions the hot paths call in place of a serde (``bytes_decoder``/``bytes_encoder``):
for every input they accept they give the serde's result, and they raise for the inputs where the
serde takes its general path, so a caller that falls back to the serde on an error gets the
serde's results and errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams_runtime import Serdes
from streams_runtime.serdes import bytes_decoder, bytes_encoder

JSON_BYTES = [b'{"user":"u-1","amount":5}', b"[1,2.5,null]", b'"x"', b"0", b"true"]
JSON_VALUES = [{"user": "u-1", "amount": 5}, [1, 2.5, None], "x", 0, True, {1: "int key"}]


@pytest.mark.parametrize("data", JSON_BYTES)
def test_the_json_decoder_gives_what_the_serde_gives(data: bytes) -> None:
    decode = bytes_decoder(Serdes.Json())
    assert decode is not None
    assert decode(data) == Serdes.Json().deserialize("t", data)


@pytest.mark.parametrize("value", JSON_VALUES)
def test_the_json_encoder_gives_what_the_serde_gives(value: object) -> None:
    encode = bytes_encoder(Serdes.Json())
    assert encode is not None
    assert encode(value) == Serdes.Json().serialize("t", value)


def test_the_json_fast_paths_raise_where_the_serde_takes_the_standard_library_path() -> None:
    decode, encode, serde = bytes_decoder(Serdes.Json()), bytes_encoder(Serdes.Json()), Serdes.Json()
    assert decode is not None and encode is not None
    with pytest.raises(ValueError):
        decode(b'{"a": NaN}')
    assert str(serde.deserialize("t", b'{"a": NaN}')["a"]) == "nan"
    with pytest.raises(TypeError):
        encode(2**70)
    assert serde.serialize("t", 2**70) == b"1180591620717411303424"


def test_the_string_fast_paths_match_the_serde_and_refuse_what_it_refuses() -> None:
    decode, encode, serde = bytes_decoder(Serdes.String()), bytes_encoder(Serdes.String()), Serdes.String()
    assert decode is not None and encode is not None
    assert decode("é-1".encode()) == serde.deserialize("t", "é-1".encode()) == "é-1"
    assert encode("é-1") == serde.serialize("t", "é-1")
    with pytest.raises(UnicodeDecodeError):
        decode(b"\xff")
    with pytest.raises(TypeError):
        encode(5)  # not a str: the serde decides


def test_the_bytes_fast_paths_hand_back_the_same_bytes_and_refuse_the_rest() -> None:
    decode, encode, serde = bytes_decoder(Serdes.Bytes()), bytes_encoder(Serdes.Bytes()), Serdes.Bytes()
    assert decode is not None and encode is not None
    data = b"user-1"
    assert decode(data) is data and encode(data) is data
    assert serde.deserialize("t", data) is data and serde.serialize("t", data) is data
    for other in (bytearray(b"x"), memoryview(b"x"), "x", 5, [1, 2]):
        with pytest.raises(TypeError):
            encode(other)  # type: ignore[arg-type]  # the serde decides: bytes(...) for a buffer
    assert serde.serialize("t", bytearray(b"x")) == b"x"
    with pytest.raises(TypeError, match="expected bytes"):
        serde.serialize("t", 5)


def test_serdes_without_a_fast_path_get_none() -> None:
    for serde in (Serdes.Long(), Serdes.Integer(), Serdes.String(encoding="latin-1")):
        assert bytes_decoder(serde) is None
        assert bytes_encoder(serde) is None


ONE_CALL_SERDES = [Serdes.String(), Serdes.String("latin-1"), Serdes.Bytes(), Serdes.Integer(), Serdes.Long()]


def _outcome(call: Callable[[], object]) -> object:
    try:
        return call()
    except Exception as exc:  # the same error type is the same outcome
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(
        st.none(),
        st.text(),
        st.binary(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.booleans(),
        st.floats(allow_nan=False),
        st.binary().map(bytearray),
    )
)
def test_a_one_call_serde_gives_what_its_general_rule_gives(data: object) -> None:
    """The C call of the common case never changes a result or an error: every serde of one C
    call gives, for any input, what its general rule gives (None for None)."""
    for serde in ONE_CALL_SERDES:
        general = (lambda: None) if data is None else (lambda s=serde: s._serialize("t", data))
        assert _outcome(lambda s=serde: s.serialize("t", data)) == _outcome(general), serde
        if isinstance(data, (bytes, bytearray)):
            general = lambda s=serde: s._deserialize("t", data)  # noqa: E731
            assert _outcome(lambda s=serde: s.deserialize("t", data)) == _outcome(general), serde
