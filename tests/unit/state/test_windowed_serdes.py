"""Windowed keys and their serdes: Kafka Streams' window semantics and binary layouts."""

import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state.internals.key_schemas import (
    decode_ordered_session_key,
    decode_ordered_window_key,
    ordered_session_key,
    ordered_window_key,
    split_window_changelog_key,
    window_changelog_key,
)
from streams_runtime.windowed import SessionWindow, TimeWindow, Windowed, WindowedSerdes


def test_should_treat_time_window_end_as_exclusive_when_checking_overlap():
    assert not TimeWindow(0, 10).overlap(TimeWindow(10, 20))
    assert TimeWindow(0, 10).overlap(TimeWindow(9, 20))
    assert TimeWindow(5, 6).overlap(TimeWindow(0, 10))


def test_should_treat_session_window_end_as_inclusive_when_checking_overlap():
    assert SessionWindow(0, 10).overlap(SessionWindow(10, 20))
    assert not SessionWindow(0, 9).overlap(SessionWindow(10, 20))
    assert SessionWindow(5, 5).overlap(SessionWindow(5, 5))


def test_should_reject_invalid_windows_like_kafka_streams():
    with pytest.raises(ValueError):
        TimeWindow(5, 5)  # time windows are non-empty
    with pytest.raises(ValueError):
        SessionWindow(-1, 5)
    with pytest.raises(ValueError):
        SessionWindow(6, 5)
    with pytest.raises(TypeError):
        TimeWindow(0, 5).overlap(SessionWindow(0, 5))
    assert SessionWindow(5, 5).end == 5


def test_should_compare_windows_by_type_start_and_end():
    assert Windowed("a", TimeWindow(0, 5)) == Windowed("a", TimeWindow(0, 5))
    assert TimeWindow(0, 5) != SessionWindow(0, 5)
    assert str(Windowed("a", TimeWindow(0, 5))) == "[a@0/5]"


def test_should_serialize_time_windowed_key_as_key_bytes_then_8_byte_start():
    serde = WindowedSerdes.time_windowed(Serdes.String(), 10)
    data = serde.serialize("t", Windowed("ab", TimeWindow(256, 266)))
    assert data == b"ab" + (256).to_bytes(8, "big")
    assert serde.deserialize("t", data) == Windowed("ab", TimeWindow(256, 266))


def test_should_rebuild_time_window_end_from_the_window_size_capped_at_max_long():
    serde = WindowedSerdes.time_windowed(Serdes.Integer(), 2**62)
    data = (7).to_bytes(4, "big") + (2**62).to_bytes(8, "big")
    assert serde.deserialize("t", data) == Windowed(7, TimeWindow(2**62, 2**63 - 1))


def test_should_serialize_session_windowed_key_as_key_then_end_then_start():
    serde = WindowedSerdes.session_windowed(Serdes.String())
    data = serde.serialize("t", Windowed("k", SessionWindow(3, 9)))
    assert data == b"k" + (9).to_bytes(8, "big") + (3).to_bytes(8, "big")
    assert serde.deserialize("t", data) == Windowed("k", SessionWindow(3, 9))


def test_should_pass_tombstones_through_windowed_serdes():
    assert WindowedSerdes.session_windowed(Serdes.String()).serialize("t", None) is None
    assert WindowedSerdes.time_windowed(Serdes.String(), 5).deserialize("t", None) is None


def test_should_write_window_store_changelog_keys_with_start_and_seqnum():
    data = window_changelog_key(b"k", 5, 3)
    assert data == b"k" + (5).to_bytes(8, "big") + (3).to_bytes(4, "big")
    assert split_window_changelog_key(data) == (b"k", 5, 3)


@pytest.mark.parametrize(
    "keys",
    [
        [(b"a", 5), (b"a\x00", 1), (b"aa", 0), (b"b", -3)],
        [(b"\x00", 0), (b"\x00", 1), (b"\x00\x00", 0), (b"\x00\x01", 0), (b"\x01", 0)],
    ],
)
def test_should_order_internal_window_keys_by_key_then_time(keys):
    encoded = sorted(ordered_window_key(key, start) for key, start in keys)
    assert [decode_ordered_window_key(e)[:2] for e in encoded] == sorted(keys)


def test_should_order_internal_session_keys_by_key_then_end_then_start():
    sessions = [(b"a", 0, 10), (b"a", 5, 10), (b"a", 0, 3), (b"a\x00", 0, 0)]
    encoded = sorted(ordered_session_key(*s) for s in sessions)
    decoded = [decode_ordered_session_key(e) for e in encoded]
    assert decoded == [(b"a", 0, 3), (b"a", 0, 10), (b"a", 5, 10), (b"a\x00", 0, 0)]
