"""Replays Kafka Streams' KStreamKStreamLeftJoinTest: the windowed left join of two streams.

A left record with no partner is emitted as ``value+null`` only once its window has closed (stream time
past record time + after + grace), carrying its own timestamp; a record arriving after its window has
already closed is emitted at once. Stream time is shared by both sides of the join. The test driver
emits non-joined results without throttling, as Kafka Streams' TopologyTestDriver does.
"""

import pytest

from streams_runtime import JoinWindows

from .windows_joins_support import pipe_each, stream_stream_join, take

KEYS = (0, 1, 2, 3)


def _left_joined(make_config, capture, windows):
    return stream_stream_join(make_config, capture, windows, "left_join")


def test_non_joined_duplicates_are_emitted_when_window_closes(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testLeftJoinDuplicates."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 10)
    )
    with driver:
        topic1.pipe_input(0, "A0", 0)
        topic1.pipe_input(0, "A0-0", 0)
        topic2.pipe_input(1, "a0", 111)
        topic2.pipe_input(2, "dummy", 500)  # advances stream time past 0 + 100 + 10
        assert take(capture) == [(0, "A0+null", 0), (0, "A0-0+null", 0)]

        topic1.pipe_input(2, "A2", 1000)
        topic1.pipe_input(2, "A2-0", 1000)
        topic2.pipe_input(2, "a2", 1001)
        assert take(capture) == [(2, "A2+a2", 1001), (2, "A2-0+a2", 1001)]

        # already joined, so they are not emitted again as non-joined
        topic2.pipe_input(3, "a3", 315)
        assert take(capture) == []


@pytest.mark.parametrize(
    ("advancing", "joined_at"),
    [("left", 401), ("right", 402)],
    ids=["by-the-left-processor", "by-the-right-processor"],
)
def test_expired_left_records_are_emitted_by_a_record_of_either_side(
    make_config, capture, advancing, joined_at
):
    """Mirrors KStreamKStreamLeftJoinTest.testLeftExpiredNonJoinedRecordsAreEmittedByThe{Left,Right}Processor:
    a record of either side that moves stream time past the window emits the unmatched left records."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 0)
    )
    first, then = (topic1, topic2) if advancing == "left" else (topic2, topic1)
    with driver:
        topic1.pipe_input(0, "A0", 1)
        topic1.pipe_input(1, "A1", 2)
        topic1.pipe_input(0, "A0-0", 3)
        assert take(capture) == []
        topic2.pipe_input(1, "a1", 3)
        assert take(capture) == [(1, "A1+a1", 3)]
        first.pipe_input(2, "dummy", 401)
        assert take(capture) == [(0, "A0+null", 1), (0, "A0-0+null", 3)]
        then.pipe_input(2, "dummy", joined_at)
        assert take(capture) == [(2, "dummy+dummy", joined_at)]


@pytest.mark.parametrize(
    "advancing", ["left", "right"], ids=["by-the-left-processor", "by-the-right-processor"]
)
def test_unmatched_right_records_are_never_emitted_whichever_side_advances_time(
    make_config, capture, advancing
):
    """Mirrors KStreamKStreamLeftJoinTest.testRightNonJoinedRecordsAreNeverEmittedBy
    The{Left,Right}Processor."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    first, then = (topic1, topic2) if advancing == "left" else (topic2, topic1)
    with driver:
        topic2.pipe_input(0, "A0", 1)
        topic2.pipe_input(1, "A1", 2)
        topic2.pipe_input(0, "A0-0", 3)
        assert take(capture) == []
        topic1.pipe_input(1, "a1", 3)
        assert take(capture) == [(1, "a1+A1", 3)]
        first.pipe_input(2, "dummy", 401)
        assert take(capture) == []
        then.pipe_input(2, "dummy", 402)
        assert take(capture) == [(2, "dummy+dummy", 402)]


def test_zero_after_window_emits_left_results_as_soon_as_time_moves_on(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testLeftJoinedRecordsWithZeroAfterAreEmitted:
    before=100, after=0."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100).after(0)
    )
    with driver:
        pipe_each(topic1, "A", KEYS, 1000, step=1)
        # A3 is still in its window (stream time 1003); the first three have closed.
        assert take(capture) == [(0, "A0+null", 1000), (1, "A1+null", 1001), (2, "A2+null", 1002)]
        pipe_each(topic2, "a", KEYS, 999)
        assert take(capture) == [
            (0, "A0+a0", 1000),
            (1, "A1+a1", 1001),
            (2, "A2+a2", 1002),
            (3, "A3+a3", 1003),
        ]
        pipe_each(topic2, "b", KEYS, 1000)
        assert take(capture) == [
            (0, "A0+b0", 1000),
            (1, "A1+b1", 1001),
            (2, "A2+b2", 1002),
            (3, "A3+b3", 1003),
        ]
        pipe_each(topic2, "c", KEYS, 1001)
        assert take(capture) == [(1, "A1+c1", 1001), (2, "A2+c2", 1002), (3, "A3+c3", 1003)]
        pipe_each(topic2, "d", KEYS, 1002)
        assert take(capture) == [(2, "A2+d2", 1002), (3, "A3+d3", 1003)]
        pipe_each(topic2, "e", KEYS, 1003)
        assert take(capture) == [(3, "A3+e3", 1003)]
        pipe_each(topic2, "f", KEYS, 1100)
        assert take(capture) == []


def test_left_join_with_default_stores(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testLeftJoinWithDefaultSuppliers (runLeftJoin)."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        pipe_each(topic1, "A", KEYS[:2], 0)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS[:2], 0)
        assert take(capture) == [(0, "A0+a0", 0), (1, "A1+a1", 0)]
        pipe_each(topic1, "B", KEYS[:3], 0)
        assert take(capture) == [(0, "B0+a0", 0), (1, "B1+a1", 0)]
        pipe_each(topic2, "b", KEYS, 0)
        assert take(capture) == [
            (0, "A0+b0", 0),
            (0, "B0+b0", 0),
            (1, "A1+b1", 0),
            (1, "B1+b1", 0),
            (2, "B2+b2", 0),
        ]
        pipe_each(topic1, "C", KEYS, 0)
        assert take(capture) == [
            (0, "C0+a0", 0),
            (0, "C0+b0", 0),
            (1, "C1+a1", 0),
            (1, "C1+b1", 0),
            (2, "C2+b2", 0),
            (3, "C3+b3", 0),
        ]
        # everything has been joined, so expiring the windows emits nothing
        topic1.pipe_input(0, "dummy", 1000)
        assert take(capture) == []


def test_closed_non_joined_result_comes_before_the_new_join_result(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testOrdering."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        topic1.pipe_input(0, "A0", 0)
        topic1.pipe_input(1, "A1", 100)
        assert take(capture) == []
        topic2.pipe_input(1, "a1", 110)
        assert take(capture) == [(0, "A0+null", 0), (1, "A1+a1", 110)]


def test_grace_period_delays_non_joined_results(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testGracePeriod: window ended (101) is not window closed (110)."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 10)
    )
    with driver:
        pipe_each(topic1, "A", KEYS[:2], 0)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS, 101)
        assert take(capture) == []
        topic2.pipe_input(0, "dummy", 1201)
        assert take(capture) == [(0, "A0+null", 0), (1, "A1+null", 0)]


def test_windowing_at_the_upper_and_lower_bound(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.testWindowing (with its testUpperWindowBound and
    testLowerWindowBound steps)."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        pipe_each(topic1, "A", KEYS[:2], 0)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS, 0)
        assert take(capture) == [(0, "A0+a0", 0), (1, "A1+a1", 0)]

        # upper bound: b0..b3 at 1000..1003 on the right
        pipe_each(topic2, "b", KEYS, 1000, step=1)
        assert take(capture) == []
        pipe_each(topic1, "B", KEYS, 1100)
        assert take(capture) == [
            (0, "B0+b0", 1100),
            (1, "B1+b1", 1100),
            (2, "B2+b2", 1100),
            (3, "B3+b3", 1100),
        ]
        pipe_each(topic1, "C", KEYS, 1101)
        assert take(capture) == [(1, "C1+b1", 1101), (2, "C2+b2", 1101), (3, "C3+b3", 1101)]
        pipe_each(topic1, "d", KEYS, 1102)
        assert take(capture) == [(2, "d2+b2", 1102), (3, "d3+b3", 1102)]
        pipe_each(topic1, "E", KEYS, 1103)
        assert take(capture) == [(3, "E3+b3", 1103)]
        pipe_each(topic1, "F", KEYS, 1104)
        assert take(capture) == []
        topic1.pipe_input(0, "dummy", 1405)
        assert take(capture) == [
            (0, "C0+null", 1101),
            (0, "d0+null", 1102),
            (1, "d1+null", 1102),
            (0, "E0+null", 1103),
            (1, "E1+null", 1103),
            (2, "E2+null", 1103),
            (0, "F0+null", 1104),
            (1, "F1+null", 1104),
            (2, "F2+null", 1104),
            (3, "F3+null", 1104),
        ]

        # lower bound: records whose window closed long ago are emitted at once
        pipe_each(topic1, "G", KEYS, 899)
        assert take(capture) == [
            (0, "G0+null", 899),
            (1, "G1+null", 899),
            (2, "G2+null", 899),
            (3, "G3+null", 899),
        ]
        pipe_each(topic1, "H", KEYS, 900)
        assert take(capture) == [
            (0, "H0+b0", 1000),
            (1, "H1+null", 900),
            (2, "H2+null", 900),
            (3, "H3+null", 900),
        ]
        pipe_each(topic1, "I", KEYS, 901)
        assert take(capture) == [
            (0, "I0+b0", 1000),
            (1, "I1+b1", 1001),
            (2, "I2+null", 901),
            (3, "I3+null", 901),
        ]
        pipe_each(topic1, "J", KEYS, 902)
        assert take(capture) == [
            (0, "J0+b0", 1000),
            (1, "J1+b1", 1001),
            (2, "J2+b2", 1002),
            (3, "J3+null", 902),
        ]
        pipe_each(topic1, "K", KEYS, 903)
        assert take(capture) == [
            (0, "K0+b0", 1000),
            (1, "K1+b1", 1001),
            (2, "K2+b2", 1002),
            (3, "K3+b3", 1003),
        ]
        topic1.pipe_input(0, "dummy", 1203)
        assert take(capture) == [(0, "dummy+null", 1203)]


def test_asymmetric_window_does_not_emit_early_left_result(make_config, capture):
    """Mirrors KStreamKStreamLeftJoinTest.shouldNotEmitLeftJoinResultForAsymmetricWindow:
    before=0, after=100."""
    driver, topic1, topic2 = _left_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100).before(0)
    )
    with driver:
        pipe_each(topic1, "A", KEYS[:2], 0, step=1)
        assert take(capture) == []
        topic2.pipe_input(0, "a0", 100)
        assert take(capture) == [(0, "A0+a0", 100)]
        topic2.pipe_input(1, "a1", 102)
        assert take(capture) == [(1, "A1+null", 1)]
