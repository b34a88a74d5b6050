"""Replays Kafka Streams' KStreamKTableJoinTest cases for versioned tables and joins with a grace
period (KIP-923): the checks on the table's store, and the buffering of stream records.

Stream ``streamTopic`` and table ``tableTopic2`` (Integer keys, String values); the table is
materialized on ``Stores.persistent_versioned_key_value_store("V-grace", 5 minutes)`` and joined
with ``Joined.with_(..., "Grace").with_grace_period(...)``, captured by a MockApiProcessor stand-in.
"""

import pytest

from streams_runtime import (
    Consumed,
    Joined,
    Materialized,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyError,
    TopologyTestDriver,
)

MINUTES = 60_000
KEYS = (0, 1, 2, 3)


def _join_with_grace(make_config, capture, grace_ms):
    builder = StreamsBuilder()
    consumed = Consumed.with_(Serdes.Integer(), Serdes.String())
    stream = builder.stream("streamTopic", consumed)
    table = builder.table(
        "tableTopic2",
        consumed,
        Materialized.as_(Stores.persistent_versioned_key_value_store("V-grace", 5 * MINUTES)),
    )
    joined = Joined.with_(Serdes.Integer(), Serdes.String(), Serdes.String(), "Grace").with_grace_period(
        grace_ms
    )
    stream.join(table, lambda a, b: f"{a}+{b}", joined).process(capture)
    driver = TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String()))
    stream_in = driver.create_input_topic("streamTopic", Serdes.Integer(), Serdes.String())
    table_in = driver.create_input_topic("tableTopic2", Serdes.Integer(), Serdes.String())
    return driver, stream_in, table_in


def _push_stream(topic, count, prefix):
    for i in range(count):
        topic.pipe_input(KEYS[i], f"{prefix}{KEYS[i]}", i)


def _push_table(topic, count, prefix):
    for i in range(count):
        topic.pipe_input(KEYS[i], f"{prefix}{KEYS[i]}", 0)


def _check_and_clear(capture, *expected):
    assert capture.processed == list(expected)
    capture.processed.clear()


def _strings():
    return Consumed.with_(Serdes.String(), Serdes.String())


def _joined(grace_ms):
    return Joined.with_(Serdes.String(), Serdes.String(), Serdes.String(), "first-join").with_grace_period(
        grace_ms
    )


def test_should_fail_if_table_is_not_versioned():
    """Mirrors KStreamKTableJoinTest.shouldFailIfTableIsNotVersioned."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", _strings())
    table = builder.table("topic2", _strings())
    with pytest.raises(
        TopologyError, match="^KTable must be versioned to use a grace period in a stream table join.$"
    ):
        stream.join(table, lambda a, b: a + b, _joined(6))


def test_should_fail_if_table_is_not_versioned_but_materialization_is_inherited():
    """Mirrors KStreamKTableJoinTest.shouldFailIfTableIsNotVersionedButMaterializationIsInherited."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", _strings())
    source = builder.table("topic2", _strings(), Materialized.as_(Stores.in_memory_key_value_store("tableB")))
    table = source.filter(lambda k, v: True)
    stream.join(table, lambda a, b: a + b, _joined(6)).to("out-one")
    with pytest.raises(TopologyError, match="^KTable must be versioned to use a grace period"):
        builder.build()


def test_should_not_fail_if_table_is_versioned_but_materialization_is_inherited():
    """Mirrors KStreamKTableJoinTest.shouldNotFailIfTableIsVersionedButMaterializationIsInherited."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", _strings())
    source = builder.table(
        "topic2",
        _strings(),
        Materialized.as_(Stores.persistent_versioned_key_value_store("tableB", 5 * MINUTES)),
    )
    stream.join(source.filter(lambda k, v: True), lambda a, b: a + b, _joined(6)).to("out-one")
    assert "first-join-Buffer" in str(builder.build().describe())


def test_should_fail_if_grace_period_is_longer_than_history_retention():
    """Mirrors KStreamKTableJoinTest.shouldFailIfGracePeriodIsLongerThanHistoryRetention."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", _strings())
    table = builder.table(
        "topic2",
        _strings(),
        Materialized.as_(Stores.persistent_versioned_key_value_store("tableB", 5 * MINUTES)),
    )
    stream.join(table, lambda a, b: a + b, _joined(6 * MINUTES)).to("out-one")
    with pytest.raises(TopologyError, match="^History retention must be at least grace period.$"):
        builder.build()


def test_should_fail_if_grace_period_is_longer_than_history_retention_and_inherited_store():
    """Mirrors KStreamKTableJoinTest.shouldFailIfGracePeriodIsLongerThanHistoryRetentionAndInheritedStore."""
    builder = StreamsBuilder()
    stream = builder.stream("topic", _strings())
    source = builder.table(
        "topic2", _strings(), Materialized.as_(Stores.persistent_versioned_key_value_store("V-grace", 0))
    )
    stream.join(source.filter(lambda k, v: True), lambda a, b: a + b, _joined(6)).to("out-one")
    with pytest.raises(TopologyError, match="^History retention must be at least grace period.$"):
        builder.build()


def test_should_delay_join_by_grace_period(make_config, capture):
    """Mirrors KStreamKTableJoinTest.shouldDelayJoinByGracePeriod."""
    driver, stream_in, table_in = _join_with_grace(make_config, capture, 2)
    with driver:
        _push_table(table_in, 4, "Y")
        _check_and_clear(capture)
        _push_stream(stream_in, 4, "X")
        _check_and_clear(capture, (0, "X0+Y0", 0), (1, "X1+Y1", 1))
        _push_table(table_in, 4, "YY")
        _check_and_clear(capture)
        _push_stream(stream_in, 4, "X")
        _check_and_clear(capture, (0, "X0+YY0", 0), (1, "X1+YY1", 1))
        stream_in.pipe_input(5, "test", 7)
        _check_and_clear(capture, (2, "X2+YY2", 2), (2, "X2+YY2", 2), (3, "X3+YY3", 3), (3, "X3+YY3", 3))
        _push_table(table_in, 4, "YYY")
        _check_and_clear(capture)


def test_should_handle_late_joins_with_grace_period(make_config, capture):
    """Mirrors KStreamKTableJoinTest.shouldHandleLateJoinsWithGracePeriod."""
    driver, stream_in, table_in = _join_with_grace(make_config, capture, 2)
    with driver:
        _push_table(table_in, 4, "Y")
        _check_and_clear(capture)
        _push_stream(stream_in, 4, "X")
        _check_and_clear(capture, (0, "X0+Y0", 0), (1, "X1+Y1", 1))
        _push_stream(stream_in, 1, "X")
        _check_and_clear(capture, (0, "X0+Y0", 0))
