"""What `streams-runtime consume` suggests for a value its --value-serde cannot read: what the other
serdes read the bytes as (a newcomer's Long counts read with the default JSON serde)."""

from __future__ import annotations

import struct

from streams_runtime.tools.consume import other_readings


def test_a_long_count_is_offered_as_a_long():
    readings = other_readings(struct.pack(">q", 3), "counts", "json")
    assert readings["long"] == 3
    assert "json" not in readings  # the serde that failed is not offered again
    assert "integer" not in readings  # 8 bytes are no Integer


def test_text_is_offered_as_a_string_only():
    assert other_readings(b"hello", "t", "json") == {"string": "hello"}
