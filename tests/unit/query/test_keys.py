"""Path keys convert with the store's key serde; malformed ones raise MalformedKeyError."""

from __future__ import annotations

import pytest

from streams_runtime import Serdes, ValueAndTimestamp
from streams_runtime.server.keys import MalformedKeyError, parse_key, to_json
from streams_runtime.windowed import TimeWindow, Windowed


@pytest.mark.parametrize(
    ("text", "serde", "expected"),
    [
        ("abc", Serdes.String(), "abc"),
        ("42", Serdes.Integer(), 42),
        ("-7", Serdes.Long(), -7),
        ("1.5", Serdes.Double(), 1.5),
        ('{"a": 1}', Serdes.Json(), {"a": 1}),
        ("raw", Serdes.Bytes(), b"raw"),
    ],
)
def test_should_convert_a_path_key_with_the_store_serde(text, serde, expected):
    assert parse_key(text, serde) == expected


@pytest.mark.parametrize(
    ("text", "serde"),
    [
        ("abc", Serdes.Integer()),
        ("2147483648", Serdes.Integer()),
        ("x", Serdes.Double()),
        ("{", Serdes.Json()),
    ],
)
def test_should_reject_a_key_the_serde_cannot_take_naming_the_serde(text, serde):
    with pytest.raises(MalformedKeyError, match=serde.name):
        parse_key(text, serde)


def test_should_render_store_values_as_json():
    assert to_json(ValueAndTimestamp.make(3, 17)) == {"value": 3, "timestamp": 17}
    assert to_json(Windowed("k", TimeWindow(0, 10))) == {"key": "k", "start": 0, "end": 10}
    assert to_json(b"\xff\x00") == {"base64": "/wA="}
    assert to_json(b"text") == "text"
