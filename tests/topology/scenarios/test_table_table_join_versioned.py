"""Replays Kafka Streams' TableTableJoinIntegrationTest cases on versioned stores
(testInnerWithVersionedStores, testLeftWithVersionedStores, testOuterWithVersionedStores), driven
as its AbstractJoinIntegrationTest does: one key, inputs alternating between the two tables with
out-of-order records, the output checked after each input.

Both tables are materialized on versioned stores (5 minutes of history, no changelog): an
out-of-order update changes the table's history but produces no join result. The join result is
materialized in ``table-table-join-integration-test-store`` without caching.
"""

import pytest

from streams_runtime import Materialized, Serdes, Stores, StreamsBuilder, TopologyTestDriver

LEFT, RIGHT, OUTPUT = "inputTopicLeft", "inputTopicRight", "outputTopic"
STORE = "table-table-join-integration-test-store"
KEY = 0
BASE = 1_600_000_000_000

INPUT = [
    (LEFT, None, 1),
    (RIGHT, None, 2),
    (LEFT, "A", 3),
    (RIGHT, "a", 4),
    (LEFT, "B", 5),
    (RIGHT, "b", 6),
    (LEFT, None, 7),
    (RIGHT, None, 8),
    (LEFT, "C", 9),
    (RIGHT, "c", 10),
    (RIGHT, None, 11),
    (LEFT, None, 12),
    (RIGHT, None, 13),
    (RIGHT, "d", 7),  # out-of-order data with null as latest
    (LEFT, "D", 6),
    (LEFT, None, 2),
    (RIGHT, None, 3),
    (RIGHT, "e", 14),
    (LEFT, "E", 15),
    (LEFT, None, 10),  # out-of-order data with non-null as latest
    (RIGHT, None, 9),
    (LEFT, "F", 4),
    (RIGHT, "f", 3),
]

_ = None
INNER = [_, _, _, [("A-a", 4)], [("B-a", 5)], [("B-b", 6)], [(None, 7)], _, _, [("C-c", 10)], [(None, 11)]]
INNER += [_] * 7 + [[("E-e", 15)]] + [_] * 4
LEFT_JOIN = [_, _, [("A-null", 3)], [("A-a", 4)], [("B-a", 5)], [("B-b", 6)], [(None, 7)], _]
LEFT_JOIN += (
    [[("C-null", 9)], [("C-c", 10)], [("C-null", 11)], [(None, 12)]] + [_] * 6 + [[("E-e", 15)]] + [_] * 4
)
OUTER = [_, _, [("A-null", 3)], [("A-a", 4)], [("B-a", 5)], [("B-b", 6)], [("null-b", 7)], [(None, 8)]]
OUTER += [[("C-null", 9)], [("C-c", 10)], [("C-null", 11)], [(None, 12)]] + [_] * 5
OUTER += [[("null-e", 14)], [("E-e", 15)]] + [_] * 4


def _s(value):
    return "null" if value is None else value


def _versioned(name):
    return Materialized.as_(
        Stores.persistent_versioned_key_value_store(name, 5 * 60_000)
    ).with_logging_disabled()


@pytest.mark.parametrize(
    ("join", "expected"),
    [("join", INNER), ("left_join", LEFT_JOIN), ("outer_join", OUTER)],
    ids=["testInnerWithVersionedStores", "testLeftWithVersionedStores", "testOuterWithVersionedStores"],
)
def test_table_table_join_with_versioned_stores(make_config, join, expected):
    """Mirrors TableTableJoinIntegrationTest.test{Inner,Left,Outer}WithVersionedStores."""
    assert len(expected) == len(INPUT)
    builder = StreamsBuilder()
    left = builder.table(LEFT, materialized=_versioned("left"))
    right = builder.table(RIGHT, materialized=_versioned("right"))
    materialized = (
        Materialized.as_(STORE)
        .with_key_serde(Serdes.Long())
        .with_value_serde(Serdes.String())
        .with_caching_disabled()
        .with_logging_disabled()
    )
    getattr(left, join)(right, lambda a, b: f"{_s(a)}-{_s(b)}", materialized).to_stream().to(OUTPUT)
    with TopologyTestDriver(builder.build(), make_config(Serdes.Long(), Serdes.String())) as driver:
        topics = {t: driver.create_input_topic(t, Serdes.Long(), Serdes.String()) for t in (LEFT, RIGHT)}
        output = driver.create_output_topic(OUTPUT, Serdes.Long(), Serdes.String())
        final = None
        for step, ((topic, value, ts), want) in enumerate(zip(INPUT, expected, strict=True)):
            topics[topic].pipe_input(KEY, value, BASE + ts)
            got = [(r.key, r.value, r.timestamp) for r in output.read_records_to_list()]
            assert got == [(KEY, v, BASE + t) for v, t in (want or [])], f"step {step}: {topic} {value}@{ts}"
            if want:
                final = want[-1][0]
        stored = driver.get_key_value_store(STORE).get(KEY)
        assert (stored.value if hasattr(stored, "value") else stored) == final
