"""Replays Kafka Streams' KTableTransformValuesTest through the DSL: a stateful value transformer over a
table, with stores it reads, materialized or not, and the old values a downstream group_by needs."""

import pytest

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyTestDriver,
    ValueAndTimestamp,
)

STORE_NAME = "someStore"
OTHER_STORE_NAME = "otherStore"
QUERYABLE_NAME = "queryable-store"
S = Serdes.String()


def store_builder(name):
    return Stores.key_value_store_builder(
        Stores.persistent_key_value_store(name), Serdes.Long(), Serdes.Long()
    )


class ExclamationValueTransformer:
    """Checks it can reach its stores, then maps a value to ``key->value!``."""

    def __init__(self, expected_stores):
        self.expected_stores = expected_stores

    def init(self, context):
        missing = [name for name in self.expected_stores if context.get_state_store(name) is None]
        assert not missing, f"State stores are not accessible: {missing}"

    def transform(self, key, value):
        return f"{key}->{'null' if value is None else value}!"

    def close(self):
        pass


class StatefulTransformer:
    def __init__(self):
        self.counter = 0

    def transform(self, key, value):
        self.counter += 1
        return self.counter


class StatelessTransformer:
    def transform(self, key, value):
        return None if value is None else len(value)


def _run(builder, capture, rows, config):
    driver = TopologyTestDriver(builder.build(), config)
    topic = driver.create_input_topic("inputTopic", S, S)
    for key, value, ts in rows:
        topic.pipe_input(key, value, ts)
    return driver


def test_should_transform_values_with_key(make_config, capture):
    """Mirrors KTableTransformValuesTest.shouldTransformValuesWithKey: two stores connected by name; a
    delete reaches the transformer too; nothing is materialized."""
    builder = StreamsBuilder()
    builder.add_state_store(store_builder(STORE_NAME)).add_state_store(store_builder(OTHER_STORE_NAME))
    (
        builder.table("inputTopic", Consumed.with_(S, S))
        .transform_values(
            lambda: ExclamationValueTransformer([STORE_NAME, OTHER_STORE_NAME]), STORE_NAME, OTHER_STORE_NAME
        )
        .to_stream()
        .process(capture)
    )
    with _run(builder, capture, [("A", "a", 5), ("B", "b", 10), ("D", None, 15)], make_config()) as driver:
        assert driver.get_key_value_store(QUERYABLE_NAME) is None, "Store should not be materialized"
        assert set(driver.get_all_state_stores()) == {STORE_NAME, OTHER_STORE_NAME}
    assert capture.processed == [("A", "A->a!", 5), ("B", "B->b!", 10), ("D", "D->null!", 15)]


def test_should_transform_values_with_key_and_materialize(make_config, capture):
    """Mirrors KTableTransformValuesTest.shouldTransformValuesWithKeyAndMaterialize."""
    builder = StreamsBuilder()
    builder.add_state_store(store_builder(STORE_NAME))
    (
        builder.table("inputTopic", Consumed.with_(S, S))
        .transform_values(
            lambda: ExclamationValueTransformer([STORE_NAME, QUERYABLE_NAME]),
            STORE_NAME,
            materialized=Materialized.as_(QUERYABLE_NAME).with_key_serde(S).with_value_serde(S),
        )
        .to_stream()
        .process(capture)
    )
    with _run(builder, capture, [("A", "a", 5), ("B", "b", 10), ("C", None, 15)], make_config()) as driver:
        store = driver.get_key_value_store(QUERYABLE_NAME)
        assert (store.get("A"), store.get("B"), store.get("C")) == ("A->a!", "B->b!", "C->null!")
        timestamped = driver.get_timestamped_key_value_store(QUERYABLE_NAME)
        assert timestamped.get("C") == ValueAndTimestamp.make("C->null!", 15)
    assert capture.processed == [("A", "A->a!", 5), ("B", "B->b!", 10), ("C", "C->null!", 15)]


def _reduce_downstream(table, capture):
    (
        table.group_by(lambda k, v: (k, v), Grouped.with_(S, Serdes.Integer()))
        .reduce(lambda a, b: a + b, lambda a, b: a - b)
        .map_values(str)
        .to_stream()
        .process(capture)
    )


def test_should_calculate_correct_old_values_if_materialized_even_if_stateful(make_config, capture):
    """Mirrors KTableTransformValuesTest.shouldCalculateCorrectOldValuesIfMaterializedEvenIfStateful: the old
    value comes from the store, so the counting transformer runs once per record."""
    builder = StreamsBuilder()
    table = builder.table("inputTopic", Consumed.with_(S, S)).transform_values(
        StatefulTransformer,
        materialized=Materialized.as_(QUERYABLE_NAME).with_key_serde(S).with_value_serde(Serdes.Integer()),
    )
    _reduce_downstream(table, capture)
    rows = [("A", "ignored", 5), ("A", "ignored1", 15), ("A", "ignored2", 10)]
    with _run(builder, capture, rows, make_config()) as driver:
        assert driver.get_key_value_store(QUERYABLE_NAME).get("A") == 3
    assert capture.processed == [("A", "1", 5), ("A", "2", 15), ("A", "3", 15)]


def test_should_calculate_correct_old_values_if_not_stateful_even_if_not_materialized(make_config, capture):
    """Mirrors KTableTransformValuesTest.shouldCalculateCorrectOldValuesIfNotStatefulEvenIfNotMaterialized:
    without a store the old value is the transformer applied to the old value."""
    builder = StreamsBuilder()
    table = builder.table("inputTopic", Consumed.with_(S, S)).transform_values(StatelessTransformer)
    _reduce_downstream(table, capture)
    with _run(builder, capture, [("A", "a", 5), ("A", "aa", 15), ("A", "aaa", 10)], make_config()):
        pass
    assert capture.processed == [("A", "1", 5), ("A", "2", 15), ("A", "3", 15)]


def test_transform_values_rejects_a_supplier_returning_no_transformer(make_config):
    """Mirrors KTableTransformValuesTest.shouldThrowOnGetIfSupplierReturnsNull (NullSupplier)."""
    builder = StreamsBuilder()
    builder.table("inputTopic", Consumed.with_(S, S)).transform_values(lambda: None).to_stream().to("out")
    with (
        pytest.raises(Exception, match="transformer"),
        TopologyTestDriver(builder.build(), make_config()) as driver,
    ):
        driver.create_input_topic("inputTopic", S, S).pipe_input("A", "a", 1)
    with pytest.raises(TypeError, match="transformer supplier"):
        builder.table("other").transform_values(None)


def test_transform_values_table_answers_join_lookups(make_config, capture):
    """A non-materialized transform_values table joined with another table: its lookups go through the
    parent's store and a transformer of their own (Kafka's KTableTransformValuesGetter)."""
    builder = StreamsBuilder()
    left = builder.table("inputTopic", Consumed.with_(S, S)).transform_values(StatelessTransformer)
    right = builder.table("right", Consumed.with_(S, S))
    right.join(left, lambda r, length: f"{r}:{length}").to_stream().process(capture)
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        driver.create_input_topic("inputTopic", S, S).pipe_input("A", "abcd", 1)
        driver.create_input_topic("right", S, S).pipe_input("A", "r", 2)
    assert capture.processed == [("A", "r:4", 2)]
