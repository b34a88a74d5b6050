"""Replays Kafka Streams' StreamTableJoinIntegrationTest.testInnerWithVersionedStore and
testLeftWithVersionedStore: the AbstractJoinIntegrationTest input (left = a stream, right = a
table on a versioned store); each stream record joins the table version valid at its timestamp,
so out-of-order stream records meet the table as it was then (``D@6`` joins ``b``, ``F@4``
joins ``a``).
"""

import pytest

from streams_runtime import (
    Materialized,
    Serde,
    Serdes,
    Stores,
    StreamsBuilder,
    StreamsError,
    TopologyTestDriver,
)

from .test_table_table_join_versioned import BASE, INPUT, KEY, LEFT, OUTPUT, RIGHT, _s

_ = None
INNER = (
    [_, _, _, _, [("B-a", 5)]] + [_] * 9 + [[("D-b", 6)]] + [_] * 3 + [[("E-e", 15)], _, _, [("F-a", 4)], _]
)
LEFT_JOIN = [_, _, [("A-null", 3)], _, [("B-a", 5)], _, _, _, [("C-null", 9)]] + [_] * 5
LEFT_JOIN += [[("D-b", 6)]] + [_] * 3 + [[("E-e", 15)], _, _, [("F-a", 4)], _]


@pytest.mark.parametrize(
    ("join", "expected"),
    [("join", INNER), ("left_join", LEFT_JOIN)],
    ids=["testInnerWithVersionedStore", "testLeftWithVersionedStore"],
)
def test_stream_table_join_with_versioned_store(make_config, join, expected):
    """Mirrors StreamTableJoinIntegrationTest.test{Inner,Left}WithVersionedStore."""
    assert len(expected) == len(INPUT)
    builder = StreamsBuilder()
    stream = builder.stream(LEFT)
    table = builder.table(
        RIGHT,
        materialized=Materialized.as_(Stores.persistent_versioned_key_value_store("table-store", 5 * 60_000)),
    )
    getattr(stream, join)(table, lambda a, b: f"{_s(a)}-{_s(b)}").to(OUTPUT)
    with TopologyTestDriver(builder.build(), make_config(Serdes.Long(), Serdes.String())) as driver:
        topics = {t: driver.create_input_topic(t, Serdes.Long(), Serdes.String()) for t in (LEFT, RIGHT)}
        output = driver.create_output_topic(OUTPUT, Serdes.Long(), Serdes.String())
        for step, ((topic, value, ts), want) in enumerate(zip(INPUT, expected, strict=True)):
            topics[topic].pipe_input(KEY, value, BASE + ts)
            got = [(r.key, r.value, r.timestamp) for r in output.read_records_to_list()]
            assert got == [(KEY, v, BASE + t) for v, t in (want or [])], f"step {step}: {topic} {value}@{ts}"


# StreamTableJoinWithGraceIntegrationTest: the same input, joined with Joined "Grace" and a 2 ms grace
GRACE_INNER = [_] * 8 + [[("B-a", 5)]] + [_] * 5 + [[("D-b", 6)]] + [_] * 6 + [[("F-a", 4)], _]
GRACE_LEFT = [_, _, _, _, [("A-null", 3)], _, _, _, [("B-a", 5)]] + [_] * 5 + [[("D-b", 6)]]
GRACE_LEFT += [_, _, _, [("C-null", 9)], _, _, [("F-a", 4)], _]


@pytest.mark.parametrize(
    ("join", "expected"),
    [("join", GRACE_INNER), ("left_join", GRACE_LEFT)],
    ids=["testInnerWithVersionedStore", "testLeftWithVersionedStore"],
)
def test_stream_table_join_with_grace(make_config, join, expected):
    """Mirrors StreamTableJoinWithGraceIntegrationTest.test{Inner,Left}WithVersionedStore."""
    from streams_runtime import Joined

    assert len(expected) == len(INPUT)
    builder = StreamsBuilder()
    stream = builder.stream(LEFT)
    table = builder.table(
        RIGHT,
        materialized=Materialized.as_(Stores.persistent_versioned_key_value_store("table-store", 5 * 60_000)),
    )
    joined = Joined.with_(Serdes.Long(), Serdes.String(), Serdes.String(), "Grace").with_grace_period(2)
    getattr(stream, join)(table, lambda a, b: f"{_s(a)}-{_s(b)}", joined).to(OUTPUT)
    with TopologyTestDriver(builder.build(), make_config(Serdes.Long(), Serdes.String())) as driver:
        topics = {t: driver.create_input_topic(t, Serdes.Long(), Serdes.String()) for t in (LEFT, RIGHT)}
        output = driver.create_output_topic(OUTPUT, Serdes.Long(), Serdes.String())
        for step, ((topic, value, ts), want) in enumerate(zip(INPUT, expected, strict=True)):
            topics[topic].pipe_input(KEY, value, BASE + ts)
            got = [(r.key, r.value, r.timestamp) for r in output.read_records_to_list()]
            assert got == [(KEY, v, BASE + t) for v, t in (want or [])], f"step {step}: {topic} {value}@{ts}"


class _NullBytesSerde(Serde):
    """Breaks the serde contract: a non-null value serializes to null."""

    def __init__(self) -> None:
        super().__init__("NullBytes")

    def _serialize(self, topic, data):
        return None

    def _deserialize(self, topic, data):
        return data


def test_a_grace_buffer_whose_serde_makes_null_bytes_fails_naming_its_topic(make_config):
    """The buffer keeps serialized keys and values: a serde that turns a value into null bytes
    cannot be buffered, and the error names the buffer."""
    from streams_runtime import Joined

    builder = StreamsBuilder()
    stream = builder.stream(LEFT)
    table = builder.table(
        RIGHT,
        materialized=Materialized.as_(Stores.persistent_versioned_key_value_store("table-store", 5 * 60_000)),
    )
    joined = Joined.with_(Serdes.Long(), _NullBytesSerde(), Serdes.String(), "Grace").with_grace_period(2)
    stream.join(table, lambda a, b: f"{a}-{b}", joined).to(OUTPUT)
    with TopologyTestDriver(builder.build(), make_config(Serdes.Long(), Serdes.String())) as driver:
        left = driver.create_input_topic(LEFT, Serdes.Long(), Serdes.String())
        with pytest.raises(StreamsError, match="Grace-Buffer serialized a non-null key or value to null"):
            left.pipe_input(KEY, "A", BASE)
