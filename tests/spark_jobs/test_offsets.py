"""Offset options of the ``kafka_range`` source: parsing and clamping, broker-free."""

from __future__ import annotations

import pytest

from spark_jobs.kafka_source.offsets import EARLIEST, LATEST, OffsetRange, clamp_offset, parse_offsets


def test_should_parse_every_accepted_offsets_form():
    assert parse_offsets(None, "t", "o") == {}
    assert parse_offsets('{"0": 5, "2": -2}', "t", "o") == {0: 5, 2: EARLIEST}
    assert parse_offsets('{"t": {"1": -1}}', "t", "o") == {1: LATEST}
    assert parse_offsets("earliest", "t", "o") == {-1: EARLIEST}
    assert parse_offsets({"3": "7"}, "t", "o") == {3: 7}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{0: 1", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"other": {"0": 1}}', "names topics"),
        ('{"0": "x"}', "must be integers"),
        ('{"0": -3}', "out of range"),
    ],
)
def test_should_name_the_option_when_offsets_are_malformed(spec, message):
    with pytest.raises(ValueError, match=f"starting_offsets: .*{message}"):
        parse_offsets(spec, "t", "starting_offsets")


def test_should_clamp_requested_offsets_into_low_and_true_end():
    low, end = 10, 100
    assert clamp_offset(None, low, low, end) == 10
    assert clamp_offset(EARLIEST, end, low, end) == 10
    assert clamp_offset(LATEST, low, low, end) == 100
    assert clamp_offset(5, end, low, end) == 10
    assert clamp_offset(5_000, end, low, end) == 100
    assert OffsetRange("t", 0, 100, 100).size == 0
