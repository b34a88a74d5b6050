"""Replays Kafka Streams' KStreamGlobalKTableJoinTest and KStreamGlobalKTableLeftJoinTest.

Stream values look like ``X0,FKey0``: the key selector picks the token after the comma as the global
table key (no token means no key). Stream records auto-advance their timestamps by 1 ms from 0, so the
expected timestamps count every stream record piped so far. Only stream records trigger output.

Each scenario runs as both tests ran it, the inner join and the left join: the expected rows name the
table partner each stream record finds (None for none); the inner join emits the rows with a partner,
the left join every row, a missing partner printed ``null``.
"""

import pytest

from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver

from .windows_joins_support import STREAM_TABLE_JOINS, joined, take, to_string_joiner

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


@STREAM_TABLE_JOINS
def test_stream_record_finds_nothing_in_an_empty_global_table(make_config, capture, left):
    """Mirrors KStreamGlobalKTableJoinTest.shouldNotJoinWithEmptyGlobalTableOnStreamUpdates (the
    left join emits each record with null)."""
    join = _GlobalTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == joined(left, [(k, f"X{k},FKey{k}", None, k) for k in KEYS[:2]])


@STREAM_TABLE_JOINS
def test_global_table_updates_do_not_trigger_output(make_config, capture, left):
    """Mirrors KStreamGlobalKTable{,Left}JoinTest.shouldNotJoinOnGlobalTableUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == joined(left, [(k, f"X{k},FKey{k}", None, k) for k in KEYS[:2]])
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(
            left, [(k, f"X{k},FKey{k}", f"Y{k}" if k < 2 else None, 2 + k) for k in KEYS]
        )
        join.push_to_table(4, "YY")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k},FKey{k}", f"YY{k}", 6 + k) for k in KEYS])
        join.push_to_table(4, "YYY")
        assert take(capture) == []


@STREAM_TABLE_JOINS
def test_global_table_tombstone_removes_the_join_partner(make_config, capture, left):
    """Mirrors KStreamGlobalKTable{,Left}JoinTest.shouldClearGlobalTableEntryOnNullValueUpdates."""
    join = _GlobalTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k},FKey{k}", f"Y{k}", k) for k in KEYS])
        join.push_deletes_to_table(2)
        assert take(capture) == []
        join.push_to_stream(4, "XX")
        assert take(capture) == joined(
            left, [(k, f"XX{k},FKey{k}", f"Y{k}" if k >= 2 else None, 4 + k) for k in KEYS]
        )


@STREAM_TABLE_JOINS
def test_null_selected_key_finds_no_partner(make_config, capture, left):
    """Mirrors KStreamGlobalKTableJoinTest.shouldNotJoinOnNullKeyMapperValues. The left join's
    version of that test once skipped a non-null record whose selected key is null; Kafka Streams
    4.3.1 keeps it in a left join, joined with null (tests/oracle compares with it), and so does
    this project."""
    join = _GlobalTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "XXX", with_foreign_key=False)
        assert take(capture) == joined(left, [(k, f"XXX{k}", None, k) for k in KEYS])


@pytest.mark.parametrize(("left", "in_table"), [(False, 2), (True, 4)], ids=["join", "left-join"])
def test_null_record_key_joins_when_the_selected_key_is_present(make_config, capture, left, in_table):
    """Mirrors KStreamGlobalKTable{,Left}JoinTest.shouldJoinOnNullKeyWithNonNullKeyMapperValues
    (the inner join's test fills two table keys, the left join's four)."""
    join = _GlobalTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_table(in_table, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X", null_first_key=True)
        rows = [(None if k == 0 else k, f"X{k},FKey{k}", f"Y{k}" if k < in_table else None, k) for k in KEYS]
        assert take(capture) == joined(left, rows)
