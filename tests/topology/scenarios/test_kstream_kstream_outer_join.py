"""Replays Kafka Streams' KStreamKStreamOuterJoinTest: the windowed outer join of two streams.

The left input carries String values, the right input Long values; the joiner prints ``left+right``
with a missing side as ``null``. Unmatched records of either side are emitted once their window has
closed, ordered by timestamp (at equal timestamps the right side's before the left's, as Kafka Streams'
outer-join store orders them), each with its own timestamp.
"""

from streams_runtime import Consumed, JoinWindows, Serdes, StreamJoined, StreamsBuilder, TopologyTestDriver

from .windows_joins_support import take, to_string_joiner


def _outer_joined(make_config, capture, windows):
    builder = StreamsBuilder()
    left = builder.stream("topic1", Consumed.with_(Serdes.Integer(), Serdes.String()))
    right = builder.stream("topic2", Consumed.with_(Serdes.Integer(), Serdes.Long()))
    left.outer_join(
        right,
        to_string_joiner,
        windows,
        stream_joined=StreamJoined.with_(Serdes.Integer(), Serdes.String(), Serdes.Long()),
    ).process(capture)
    driver = TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String()))
    topic1 = driver.create_input_topic("topic1", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0)
    topic2 = driver.create_input_topic("topic2", Serdes.Integer(), Serdes.Long(), start_timestamp_ms=0)
    return driver, topic1, topic2


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


def test_expired_left_records_are_emitted_by_a_left_record(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testLeftExpiredNonJoinedRecordsAreEmittedByTheLeftProcessor."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        topic1.pipe_input(0, "A0", 1)
        topic1.pipe_input(1, "A1", 2)
        topic1.pipe_input(0, "A0-0", 3)
        assert take(capture) == []
        topic2.pipe_input(1, 11, 3)
        assert take(capture) == [(1, "A1+11", 3)]
        topic1.pipe_input(2, "dummy", 401)
        assert take(capture) == [(0, "A0+null", 1), (0, "A0-0+null", 3)]
        topic2.pipe_input(2, 100, 401)
        assert take(capture) == [(2, "dummy+100", 401)]


def test_expired_left_records_are_emitted_by_a_right_record(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testLeftExpiredNonJoinedRecordsAreEmittedByTheRightProcessor."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 0)
    )
    with driver:
        topic1.pipe_input(0, "A0", 1)
        topic1.pipe_input(1, "A1", 2)
        topic1.pipe_input(0, "A0-0", 3)
        assert take(capture) == []
        topic2.pipe_input(1, 11, 3)
        assert take(capture) == [(1, "A1+11", 3)]
        topic2.pipe_input(2, 100, 401)
        assert take(capture) == [(0, "A0+null", 1), (0, "A0-0+null", 3)]
        topic1.pipe_input(2, "dummy", 402)
        assert take(capture) == [(2, "dummy+100", 402)]


def test_expired_right_records_are_emitted_by_a_left_record(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testRightExpiredNonJoinedRecordsAreEmittedByTheLeftProcessor."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        topic2.pipe_input(0, 10, 1)
        topic2.pipe_input(1, 11, 2)
        topic2.pipe_input(0, 12, 3)
        assert take(capture) == []
        topic1.pipe_input(1, "A1", 3)
        assert take(capture) == [(1, "A1+11", 3)]
        topic1.pipe_input(2, "dummy", 401)
        assert take(capture) == [(0, "null+10", 1), (0, "null+12", 3)]
        topic2.pipe_input(2, 100, 402)
        assert take(capture) == [(2, "dummy+100", 402)]


def test_expired_right_records_are_emitted_by_a_right_record(make_config, capture):
    """Mirrors KStreamKStreamOuterJoinTest.testRightExpiredNonJoinedRecordsAreEmittedByTheRightProcessor."""
    driver, topic1, topic2 = _outer_joined(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 0)
    )
    with driver:
        topic2.pipe_input(0, 10, 1)
        topic2.pipe_input(1, 11, 2)
        topic2.pipe_input(0, 12, 3)
        assert take(capture) == []
        topic1.pipe_input(1, "A1", 3)
        assert take(capture) == [(1, "A1+11", 3)]
        topic2.pipe_input(2, 100, 401)
        assert take(capture) == [(0, "null+10", 1), (0, "null+12", 3)]
        topic1.pipe_input(2, "dummy", 402)
        assert take(capture) == [(2, "dummy+100", 402)]


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
