"""Replays Kafka Streams' KTableKTableInnerJoinTest, KTableKTableLeftJoinTest and KTableKTableOuterJoinTest
(their ``testJoin`` scenarios), read from the output topic.

Both tables are keyed by Integer with String values. An update on either side re-evaluates the join for
its key; a result carries the larger timestamp of the two rows joined; a row that stops joining emits a
tombstone (inner), or ``value+null`` / ``null+value`` (left, outer). Null-keyed input records are
dropped. The record sequence is the same for all three joins; only the expected results differ.
"""

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, TopologyTestDriver

from .support import records
from .windows_joins_support import to_string_joiner

KEYS = (0, 1, 2, 3)


def _table_join_driver(make_config, joiner_name, *, materialized=None):
    builder = StreamsBuilder()
    consumed = Consumed.with_(Serdes.Integer(), Serdes.String())
    table1 = builder.table("topic1", consumed)
    table2 = builder.table("topic2", consumed)
    join = getattr(table1, joiner_name)
    joined = (
        join(table2, to_string_joiner)
        if materialized is None
        else join(table2, to_string_joiner, materialized)
    )
    joined.to_stream().to("output")
    driver = TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String()))
    topic1 = driver.create_input_topic("topic1", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0)
    topic2 = driver.create_input_topic("topic2", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0)
    output = driver.create_output_topic("output", Serdes.Integer(), Serdes.String())
    return driver, topic1, topic2, output


# testJoin's eight steps: (side, key, value, timestamp) records, side 1 = topic1 (left), 2 = topic2 (right).
JOIN_STEPS = [
    [(1, 0, "X0", 5), (1, 1, "X1", 6), (1, None, "SomeVal", 42)],  # the null-keyed record is dropped
    [(2, 0, "Y0", 0), (2, 1, "Y1", 10), (2, None, "AnotherVal", 73)],
    [(1, k, f"XX{k}", 7) for k in KEYS],
    [(2, k, f"YY{k}", 5 * k) for k in KEYS],
    [(1, k, f"XXX{k}", 6) for k in KEYS],
    [(2, 0, None, 5), (2, 1, None, 7)],  # right-side deletes
    [(1, k, f"XXXX{k}", 13) for k in KEYS],
    [(1, 0, None, 0), (1, 1, None, 42), (1, 2, None, 5), (1, 3, None, 20)],  # left-side deletes
]


def _replay(topic1, topic2, output, expected_per_step):
    """Pipe each of JOIN_STEPS, comparing the output topic after each with ``expected_per_step``."""
    assert len(JOIN_STEPS) == len(expected_per_step)
    for number, (step, expected) in enumerate(zip(JOIN_STEPS, expected_per_step, strict=True)):
        for side, key, value, timestamp in step:
            (topic1 if side == 1 else topic2).pipe_input(key, value, timestamp)
        assert records(output) == expected, f"step {number}"


INNER_JOIN_RESULTS = [
    [],
    [(0, "X0+Y0", 5), (1, "X1+Y1", 10)],
    [(0, "XX0+Y0", 7), (1, "XX1+Y1", 10)],
    [(0, "XX0+YY0", 7), (1, "XX1+YY1", 7), (2, "XX2+YY2", 10), (3, "XX3+YY3", 15)],
    [(0, "XXX0+YY0", 6), (1, "XXX1+YY1", 6), (2, "XXX2+YY2", 10), (3, "XXX3+YY3", 15)],
    [(0, None, 6), (1, None, 7)],
    [(2, "XXXX2+YY2", 13), (3, "XXXX3+YY3", 15)],
    [(2, None, 10), (3, None, 20)],
]


def test_inner_join(make_config):
    """Mirrors KTableKTableInnerJoinTest.testJoin."""
    driver, topic1, topic2, output = _table_join_driver(make_config, "join")
    with driver:
        _replay(topic1, topic2, output, INNER_JOIN_RESULTS)


def test_materialized_inner_join(make_config):
    """Mirrors KTableKTableInnerJoinTest.testQueryableJoin: materializing the result changes nothing
    downstream."""
    driver, topic1, topic2, output = _table_join_driver(
        make_config, "join", materialized=Materialized.with_(Serdes.Integer(), Serdes.String())
    )
    with driver:
        _replay(topic1, topic2, output, INNER_JOIN_RESULTS)


def test_left_join(make_config):
    """Mirrors KTableKTableLeftJoinTest.testJoin."""
    driver, topic1, topic2, output = _table_join_driver(make_config, "left_join")
    with driver:
        _replay(
            topic1,
            topic2,
            output,
            [
                [(0, "X0+null", 5), (1, "X1+null", 6)],
                [(0, "X0+Y0", 5), (1, "X1+Y1", 10)],
                [(0, "XX0+Y0", 7), (1, "XX1+Y1", 10), (2, "XX2+null", 7), (3, "XX3+null", 7)],
                [(0, "XX0+YY0", 7), (1, "XX1+YY1", 7), (2, "XX2+YY2", 10), (3, "XX3+YY3", 15)],
                [(0, "XXX0+YY0", 6), (1, "XXX1+YY1", 6), (2, "XXX2+YY2", 10), (3, "XXX3+YY3", 15)],
                [(0, "XXX0+null", 6), (1, "XXX1+null", 7)],
                [(0, "XXXX0+null", 13), (1, "XXXX1+null", 13), (2, "XXXX2+YY2", 13), (3, "XXXX3+YY3", 15)],
                [(0, None, 0), (1, None, 42), (2, None, 10), (3, None, 20)],
            ],
        )


def test_outer_join(make_config):
    """Mirrors KTableKTableOuterJoinTest.testJoin."""
    driver, topic1, topic2, output = _table_join_driver(make_config, "outer_join")
    with driver:
        _replay(
            topic1,
            topic2,
            output,
            [
                [(0, "X0+null", 5), (1, "X1+null", 6)],
                [(0, "X0+Y0", 5), (1, "X1+Y1", 10)],
                [(0, "XX0+Y0", 7), (1, "XX1+Y1", 10), (2, "XX2+null", 7), (3, "XX3+null", 7)],
                [(0, "XX0+YY0", 7), (1, "XX1+YY1", 7), (2, "XX2+YY2", 10), (3, "XX3+YY3", 15)],
                [(0, "XXX0+YY0", 6), (1, "XXX1+YY1", 6), (2, "XXX2+YY2", 10), (3, "XXX3+YY3", 15)],
                [(0, "XXX0+null", 6), (1, "XXX1+null", 7)],
                [(0, "XXXX0+null", 13), (1, "XXXX1+null", 13), (2, "XXXX2+YY2", 13), (3, "XXXX3+YY3", 15)],
                [(0, None, 0), (1, None, 42), (2, "null+YY2", 10), (3, "null+YY3", 20)],
            ],
        )
