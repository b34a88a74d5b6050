"""Replays Kafka Streams' KTableAggregateTest: aggregate and count on a re-grouped table, including
key changes (subtract from the old group, add to the new), null keys and null mapper results."""

from streams_runtime import (
    Consumed,
    Grouped,
    KeyValue,
    Materialized,
    Serdes,
    StreamsBuilder,
    TopologyTestDriver,
)

from .support import records

STRINGS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())
STRING_GROUPED = Grouped(key_serde=Serdes.String(), value_serde=Serdes.String())


def init():
    return "0"


def adder(key, value, aggregate):
    return f"{aggregate}+{value}"


def remover(key, value, aggregate):
    return f"{aggregate}-{value}"


def _pipe(builder, config, topic, inputs):
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic(topic, Serdes.String(), Serdes.String())
        for key, value, timestamp in inputs:
            source.pipe_input(key, value, timestamp=timestamp)


def test_aggregate_basic(make_config, capture):
    """Mirrors KTableAggregateTest.testAggBasic: same-key updates show as "-old+new" in one emission."""
    builder = StreamsBuilder()
    (
        builder.table("topic1", STRINGS)
        .group_by(lambda key, value: KeyValue(key, value), STRING_GROUPED)
        .aggregate(
            init, adder, remover, Materialized(store_name="topic1-Canonized", value_serde=Serdes.String())
        )
        .to_stream()
        .process(capture)
    )

    _pipe(
        builder,
        make_config(),
        "topic1",
        [
            ("A", "1", 10),
            ("B", "2", 15),
            ("A", "3", 20),
            ("B", "4", 18),
            ("C", "5", 5),
            ("D", "6", 25),
            ("B", "7", 15),
            ("C", "8", 10),
        ],
    )

    assert capture.processed == [
        ("A", "0+1", 10),
        ("B", "0+2", 15),
        ("A", "0+1-1+3", 20),
        ("B", "0+2-2+4", 18),
        ("C", "0+5", 5),
        ("D", "0+6", 25),
        ("B", "0+2-2+4-4+7", 18),
        ("C", "0+5-5+8", 10),
    ]


def test_aggregate_with_repartition(make_config, capture):
    """Mirrors KTableAggregateTest.testAggRepartition: regroup by value; key "null" maps to a null key
    and key "NULL" to no pair at all, and both are dropped."""

    def by_value(key, value):
        if key == "null":
            return KeyValue(None, value)
        if key == "NULL":
            return None
        return KeyValue(value, value)

    builder = StreamsBuilder()
    (
        builder.table("topic1", STRINGS)
        .group_by(by_value, STRING_GROUPED)
        .aggregate(
            init, adder, remover, Materialized(store_name="topic1-Canonized", value_serde=Serdes.String())
        )
        .to_stream()
        .process(capture)
    )

    _pipe(
        builder,
        make_config(),
        "topic1",
        [
            ("A", "1", 10),
            ("A", None, 15),
            ("A", "1", 12),
            ("B", "2", 20),
            ("null", "3", 25),
            ("B", "4", 23),
            ("NULL", "5", 24),
            ("B", "7", 22),
        ],
    )

    assert capture.processed == [
        ("1", "0+1", 10),
        ("1", "0+1-1", 15),
        ("1", "0+1-1+1", 15),
        ("2", "0+2", 20),
        ("2", "0+2-2", 23),
        ("4", "0+4", 23),
        ("4", "0+4-4", 23),
        ("7", "0+7", 22),
    ]


COUNT_INPUT = [
    ("A", "green", 10),
    ("B", "green", 9),
    ("A", "blue", 12),
    ("C", "yellow", 15),
    ("D", "green", 11),
]
COUNT_OUTPUT = [
    ("green", 1, 10),
    ("green", 2, 10),
    ("green", 1, 12),
    ("blue", 1, 12),
    ("yellow", 1, 15),
    ("green", 2, 12),
]


def test_count(make_config, capture):
    """Mirrors KTableAggregateTest.testCount: counts per value with a named store."""
    builder = StreamsBuilder()
    (
        builder.table("count-test-input", STRINGS)
        .group_by(lambda key, value: KeyValue(value, value), STRING_GROUPED)
        .count(Materialized.as_("count"))
        .to_stream()
        .process(capture)
    )

    _pipe(builder, make_config(), "count-test-input", COUNT_INPUT)

    assert capture.processed == COUNT_OUTPUT


def test_count_with_internal_store(make_config, capture):
    """Mirrors KTableAggregateTest.testCountWithInternalStore: the same counts with no store name."""
    builder = StreamsBuilder()
    (
        builder.table("count-test-input", STRINGS)
        .group_by(lambda key, value: KeyValue(value, value), STRING_GROUPED)
        .count()
        .to_stream()
        .process(capture)
    )

    _pipe(builder, make_config(), "count-test-input", COUNT_INPUT)

    assert capture.processed == COUNT_OUTPUT


def test_remove_old_before_add_new(make_config, capture):
    """Mirrors KTableAggregateTest.testRemoveOldBeforeAddNew: the subtractor runs before the adder."""
    builder = StreamsBuilder()
    (
        builder.table("count-test-input", STRINGS)
        .group_by(lambda key, value: KeyValue(key[0], key[1]), STRING_GROUPED)
        .aggregate(
            lambda: "",
            lambda key, value, aggregate: aggregate + value,
            lambda key, value, aggregate: aggregate.replace(value, ""),
            Materialized(store_name="someStore", value_serde=Serdes.String()),
        )
        .to_stream()
        .process(capture)
    )

    _pipe(
        builder,
        make_config(),
        "count-test-input",
        [("11", "A", 10), ("12", "B", 8), ("11", None, 12), ("12", "C", 6)],
    )

    assert capture.processed == [("1", "1", 10), ("1", "12", 10), ("1", "2", 12), ("1", "2", 12)]


def test_should_not_send_transient_state_when_key_unchanged(make_config):
    """Mirrors KTableAggregateTest.testShouldNotSendTransientStateIfNotUpgrading: an update that keeps
    its group emits one result, never the intermediate "subtracted" count."""
    builder = StreamsBuilder()
    (
        builder.table("input-topic", STRINGS)
        .group_by(lambda key, value: KeyValue(key, value), STRING_GROUPED)
        .count()
        .to_stream()
        .to("output-topic")
    )

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("input-topic", Serdes.String(), Serdes.String())
        out = driver.create_output_topic("output-topic", Serdes.String(), Serdes.Long())
        source.pipe_input("1", "", timestamp=8)
        source.pipe_input("1", "", timestamp=9)
        assert records(out) == [("1", 1, 8), ("1", 1, 9)]
