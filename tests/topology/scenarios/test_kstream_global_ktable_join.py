"""Replays Kafka Streams' KStreamGlobalKTableJoinTest and KStreamGlobalKTableLeftJoinTest.

Stream values look like ``X0,FKey0``: the key selector picks the token after the comma as the global
table key (no token means no key). Stream records auto-advance their timestamps by 1 ms from 0, so the
expected timestamps count every stream record piped so far. Only stream records trigger output.
"""

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver

from .windows_joins_support import take, to_string_joiner

KEYS = (0, 1, 2, 3)


def _foreign_key(key, value):
    tokens = value.split(",")
    return tokens[1] if len(tokens) > 1 else None


class _GlobalTableJoin:
    def __init__(self, make_config, capture, *, left: bool) -> None:
        builder = StreamsBuilder()
        stream = builder.stream("streamTopic", Consumed.with_(Serdes.Integer(), Serdes.String()))
        table = builder.global_table("globalTableTopic", Consumed.with_(Serdes.String(), Serdes.String()))
        (stream.left_join if left else stream.join)(table, _foreign_key, to_string_joiner).process(capture)
        self.driver = TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String()))
        self.stream_topic = self.driver.create_input_topic(
            "streamTopic", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0, auto_advance_ms=1
        )
        self.table_topic = self.driver.create_input_topic(
            "globalTableTopic", Serdes.String(), Serdes.String(), start_timestamp_ms=0, auto_advance_ms=1
        )

    def push_to_stream(self, count, prefix, *, with_foreign_key=True, null_first_key=False):
        for i in range(count):
            value = f"{prefix}{KEYS[i]}" + (f",FKey{KEYS[i]}" if with_foreign_key else "")
            key = None if null_first_key and i == 0 else KEYS[i]
            self.stream_topic.pipe_input(key, value)

    def push_to_table(self, count, prefix):
        for i in range(count):
            self.table_topic.pipe_input(f"FKey{KEYS[i]}", f"{prefix}{KEYS[i]}")

    def push_deletes_to_table(self, count):
        for i in range(count):
            self.table_topic.pipe_input(f"FKey{KEYS[i]}", None)


def test_stream_record_does_not_join_an_empty_global_table(make_config, capture):
    """Mirrors KStreamGlobalKTableJoinTest.shouldNotJoinWithEmptyGlobalTableOnStreamUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=False)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == []


def test_global_table_updates_do_not_trigger_output(make_config, capture):
    """Mirrors KStreamGlobalKTableJoinTest.shouldNotJoinOnGlobalTableUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=False)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == []
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [(0, "X0,FKey0+Y0", 2), (1, "X1,FKey1+Y1", 3)]
        join.push_to_table(4, "YY")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [
            (0, "X0,FKey0+YY0", 6),
            (1, "X1,FKey1+YY1", 7),
            (2, "X2,FKey2+YY2", 8),
            (3, "X3,FKey3+YY3", 9),
        ]
        join.push_to_table(4, "YYY")
        assert take(capture) == []


def test_global_table_tombstone_removes_the_join_partner(make_config, capture):
    """Mirrors KStreamGlobalKTableJoinTest.shouldClearGlobalTableEntryOnNullValueUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=False)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [
            (0, "X0,FKey0+Y0", 0),
            (1, "X1,FKey1+Y1", 1),
            (2, "X2,FKey2+Y2", 2),
            (3, "X3,FKey3+Y3", 3),
        ]
        join.push_deletes_to_table(2)
        assert take(capture) == []
        join.push_to_stream(4, "XX")
        assert take(capture) == [(2, "XX2,FKey2+Y2", 6), (3, "XX3,FKey3+Y3", 7)]


def test_null_selected_key_does_not_join(make_config, capture):
    """Mirrors KStreamGlobalKTableJoinTest.shouldNotJoinOnNullKeyMapperValues."""
    join = _GlobalTableJoin(make_config, capture, left=False)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "XXX", with_foreign_key=False)
        assert take(capture) == []


def test_null_record_key_joins_when_the_selected_key_is_present(make_config, capture):
    """Mirrors KStreamGlobalKTableJoinTest.shouldJoinOnNullKeyWithNonNullKeyMapperValues."""
    join = _GlobalTableJoin(make_config, capture, left=False)
    with join.driver:
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X", null_first_key=True)
        assert take(capture) == [(None, "X0,FKey0+Y0", 0), (1, "X1,FKey1+Y1", 1)]


def test_left_join_global_table_updates_do_not_trigger_output(make_config, capture):
    """Mirrors KStreamGlobalKTableLeftJoinTest.shouldNotJoinOnGlobalTableUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == [(0, "X0,FKey0+null", 0), (1, "X1,FKey1+null", 1)]
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [
            (0, "X0,FKey0+Y0", 2),
            (1, "X1,FKey1+Y1", 3),
            (2, "X2,FKey2+null", 4),
            (3, "X3,FKey3+null", 5),
        ]
        join.push_to_table(4, "YY")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [
            (0, "X0,FKey0+YY0", 6),
            (1, "X1,FKey1+YY1", 7),
            (2, "X2,FKey2+YY2", 8),
            (3, "X3,FKey3+YY3", 9),
        ]
        join.push_to_table(4, "YYY")
        assert take(capture) == []


def test_left_join_global_table_tombstone_turns_results_into_null_joins(make_config, capture):
    """Mirrors KStreamGlobalKTableLeftJoinTest.shouldClearGlobalTableEntryOnNullValueUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == [
            (0, "X0,FKey0+Y0", 0),
            (1, "X1,FKey1+Y1", 1),
            (2, "X2,FKey2+Y2", 2),
            (3, "X3,FKey3+Y3", 3),
        ]
        join.push_deletes_to_table(2)
        assert take(capture) == []
        join.push_to_stream(4, "XX")
        assert take(capture) == [
            (0, "XX0,FKey0+null", 4),
            (1, "XX1,FKey1+null", 5),
            (2, "XX2,FKey2+Y2", 6),
            (3, "XX3,FKey3+Y3", 7),
        ]


def test_left_join_null_selected_key_joins_with_null(make_config, capture):
    """KStreamGlobalKTableLeftJoinTest.shouldNotJoinOnNullKeyMapperValues once skipped a non-null
    record whose selected key is null; Kafka Streams 4.3.1 keeps it in a left join, joined with
    null (tests/oracle compares with it), and so does this project."""
    join = _GlobalTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "XXX", with_foreign_key=False)
        assert take(capture) == [(k, f"XXX{k}+null", k) for k in KEYS]


def test_left_join_null_record_key_joins_when_the_selected_key_is_present(make_config, capture):
    """Mirrors KStreamGlobalKTableLeftJoinTest.shouldJoinOnNullKeyWithNonNullKeyMapperValues."""
    join = _GlobalTableJoin(make_config, capture, left=True)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X", null_first_key=True)
        assert take(capture) == [
            (None, "X0,FKey0+Y0", 0),
            (1, "X1,FKey1+Y1", 1),
            (2, "X2,FKey2+Y2", 2),
            (3, "X3,FKey3+Y3", 3),
        ]
