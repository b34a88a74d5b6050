"""Replays Kafka Streams' KStreamKTableLeftJoinTest: a stream left-joined with a table.

Every stream record produces exactly one result, ``value+null`` when the table has no row for its key;
table updates never trigger output. Results carry the stream record's timestamp.
"""

from .windows_joins_support import StreamTableJoin, take


def test_stream_records_join_an_empty_table_with_null(make_config, capture):
    """Mirrors KStreamKTableLeftJoinTest.shouldJoinWithEmptyTableOnStreamUpdates."""
    join = StreamTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == [(0, "X0+null", 0), (1, "X1+null", 1)]


def test_table_updates_do_not_trigger_output(make_config, capture):
    """Mirrors KStreamKTableLeftJoinTest.shouldNotJoinOnTableUpdates."""
    join = StreamTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == [(0, "X0+null", 0), (1, "X1+null", 1)]
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [(0, "X0+Y0", 0), (1, "X1+Y1", 1), (2, "X2+null", 2), (3, "X3+null", 3)]
        join.push_to_table(4, "YY")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [(0, "X0+YY0", 0), (1, "X1+YY1", 1), (2, "X2+YY2", 2), (3, "X3+YY3", 3)]
        join.push_to_table(4, "YYY")
        assert take(capture) == []


def test_stream_records_join_whether_or_not_the_table_has_the_key(make_config, capture):
    """Mirrors KStreamKTableLeftJoinTest.shouldJoinRegardlessIfMatchFoundOnStreamUpdates."""
    join = StreamTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [(0, "X0+Y0", 0), (1, "X1+Y1", 1), (2, "X2+null", 2), (3, "X3+null", 3)]


def test_table_tombstone_turns_later_results_into_null_joins(make_config, capture):
    """Mirrors KStreamKTableLeftJoinTest.shouldClearTableEntryOnNullValueUpdates."""
    join = StreamTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [(0, "X0+Y0", 0), (1, "X1+Y1", 1), (2, "X2+Y2", 2), (3, "X3+Y3", 3)]
        join.push_deletes_to_table(2)
        assert take(capture) == []
        join.push_to_stream(4, "XX")
        assert take(capture) == [(0, "XX0+null", 0), (1, "XX1+null", 1), (2, "XX2+Y2", 2), (3, "XX3+Y3", 3)]
