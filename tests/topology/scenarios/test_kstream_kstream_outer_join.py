"""Replays Kafka Streams' KStreamKStreamOuterJoinTest: the windowed outer join of two streams.

The left input carries String values, the right input Long values; the joiner prints ``left+right``
with a missing side as ``null``. Unmatched records of either side are emitted once their window has
closed, ordered by timestamp (at equal timestamps the right side's before the left's, as Kafka Streams'
outer-join store orders them), each with its own timestamp.
"""

import pytest

from streams_runtime import JoinWindows, Serdes

from .windows_joins_support import stream_stream_join, take


def _outer_joined(make_config, capture, windows):
    return stream_stream_join(make_config, capture, windows, "outer_join", right_serde=Serdes.Long())


def test_non_joined_duplicates_of_both_sides_are_emitted_when_window_closes(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testOuterJoinDuplicates."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 10)
    )
    with driver:
        topic1.pipe_input(0, "A0", 0)
        topic1.pipe_input(0, "A0-0", 0)
        topic2.pipe_input(1, 11, 0)
        topic2.pipe_input(1, 12, 0)
        topic2.pipe_input(1, 10, 111)
        topic2.pipe_input(3, 100, 211)
        assert take(capture) == [(1, "null+11", 0), (1, "null+12", 0), (0, "A0+null", 0), (0, "A0-0+null", 0)]

        topic1.pipe_input(2, "A2", 200)
        topic1.pipe_input(2, "A2-0", 200)
        topic2.pipe_input(2, 13, 201)
        topic2.pipe_input(2, 14, 201)
        assert take(capture) == [
            (2, "A2+13", 201),
            (2, "A2-0+13", 201),
            (2, "A2+14", 201),
            (2, "A2-0+14", 201),
        ]

        topic2.pipe_input(3, 100, 1500)
        assert take(capture) == [(1, "null+10", 111), (3, "null+100", 211)]


#: each side's unmatched records (keys 0, 1, 0 at 1, 2, 3), what they print as once expired, the
#: record of that side that meets key 1's partner, and the side's record of key 2 that moves time on
UNMATCHED = {
    "left": (["A0", "A1", "A0-0"], ["A0+null", "A0-0+null"], "A1", "dummy"),
    "right": ([10, 11, 12], ["null+10", "null+12"], 11, 100),
}


@pytest.mark.parametrize(
    ("expired", "advancing", "joined_at"),
    [("left", "left", 401), ("left", "right", 402), ("right", "left", 402), ("right", "right", 402)],
    ids=["left-by-left", "left-by-right", "right-by-left", "right-by-right"],
)
def test_expired_records_are_emitted_by_a_record_of_either_side(
    make_config, capture, expired, advancing, joined_at
):
    """Mirrors KStreamKStreamOuterJoinTest.test{Left,Right}ExpiredNonJoinedRecordsAreEmittedBy
    The{Left,Right}Processor: whichever side moves stream time past the window, the unmatched
    records of the expired side are emitted with their own timestamps."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 0)
    )
    topics = {"left": topic1, "right": topic2}
    partner = "right" if expired == "left" else "left"
    values, emitted, _, _ = UNMATCHED[expired]
    other = "right" if advancing == "left" else "left"
    with driver:
        for key, value, timestamp in zip((0, 1, 0), values, (1, 2, 3), strict=True):
            topics[expired].pipe_input(key, value, timestamp)
        assert take(capture) == []
        topics[partner].pipe_input(1, UNMATCHED[partner][2], 3)
        assert take(capture) == [(1, "A1+11", 3)]
        topics[advancing].pipe_input(2, UNMATCHED[advancing][3], 401)
        assert take(capture) == [(0, printed, ts) for printed, ts in zip(emitted, (1, 3), strict=True)]
        topics[other].pipe_input(2, UNMATCHED[other][3], joined_at)
        assert take(capture) == [(2, "dummy+100", joined_at)]


def test_closed_non_joined_result_comes_before_the_new_join_result(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testOrdering."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        topic1.pipe_input(0, "A0", 0)
        topic1.pipe_input(1, "A1", 100)
        assert take(capture) == []
        topic2.pipe_input(1, 11, 110)
        assert take(capture) == [(0, "A0+null", 0), (1, "A1+11", 110)]


def test_grace_period_delays_non_joined_results_of_both_sides(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testGracePeriod: the window of records at 0 ends at 100 and
    closes at 110; a record at 112 flushes both sides' unmatched records."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 10)
    )
    with driver:
        topic1.pipe_input(0, "A0", 0)
        topic2.pipe_input(1, 11, 0)
        assert take(capture) == []
        topic1.pipe_input(1, "A1", 101)
        topic2.pipe_input(0, 10, 101)
        assert take(capture) == []
        topic2.pipe_input(0, 100, 112)
        assert take(capture) == [(1, "null+11", 0), (0, "A0+null", 0)]


def test_asymmetric_window_emits_each_side_when_its_own_window_closes(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testEmitAllNonJoinedResultsForAsymmetricWindow:
    before=5, after=20."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(5).after(20)
    )
    with driver:
        topic1.pipe_input(0, "A0", 29)
        assert take(capture) == []
        topic1.pipe_input(1, "A1", 30)
        assert take(capture) == []
        topic2.pipe_input(2, 12, 31)
        assert take(capture) == []
        topic2.pipe_input(3, 13, 36)
        assert take(capture) == []
        topic2.pipe_input(4, 14, 37)
        assert take(capture) == [(2, "null+12", 31)]
        topic2.pipe_input(5, 15, 50)
        assert take(capture) == [(0, "A0+null", 29), (3, "null+13", 36), (4, "null+14", 37)]
