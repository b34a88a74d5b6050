"""Replays Kafka Streams' KTableFilterTest versioned cases (and the non-versioned ones they are
contrasted with) and StreamsBuilderTest.shouldThrowOnVersionedStoreSupplierForGlobalTable.

A filter whose parent sends old values drops a tombstone that replaces nothing ("skip null"),
except when the source table is versioned: its out-of-order updates make that optimization
unsafe, so repeated tombstones go downstream. Both tables are observed through ``to_stream()``.
"""

import pytest

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyError,
    TopologyTestDriver,
)

from .support import Capture

FIVE_MINUTES = 5 * 60_000


def _versioned(name):
    return Materialized.as_(Stores.persistent_versioned_key_value_store(name, FIVE_MINUTES))


def _run_skip_null(make_config, builder, table1, table2, should_skip):
    first, second = Capture(), Capture()
    table1.to_stream().process(first)
    table2.to_stream().process(second)
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("topic1", Serdes.String(), Serdes.String())
        topic.pipe_input("A", "reject", 5)
        topic.pipe_input("B", "reject", 10)
        topic.pipe_input("C", "reject", 20)
    assert first.processed == [("A", "reject", 5), ("B", "reject", 10), ("C", "reject", 20)]
    assert second.processed == ([] if should_skip else [("A", None, 5), ("B", None, 10), ("C", None, 20)])


def _accept(key, value):
    return value.lower() == "accept"


def _grouped_reduce(table, materialized=None):
    grouped = table.group_by(lambda k, v: (k, v))
    adder, subtractor = (lambda a, b: a + b), (lambda a, b: a)
    return (
        grouped.reduce(adder, subtractor, materialized) if materialized else grouped.reduce(adder, subtractor)
    )


def test_should_skip_null_to_repartition_without_materialization(make_config):
    """Mirrors KTableFilterTest.shouldSkipNullToRepartitionWithoutMaterialization."""
    builder = StreamsBuilder()
    table1 = builder.table("topic1", Consumed.with_(Serdes.String(), Serdes.String()))
    table2 = table1.filter(_accept)
    _grouped_reduce(table2)
    _run_skip_null(make_config, builder, table1, table2, True)


def test_should_skip_null_to_repartition_on_materialization(make_config):
    """Mirrors KTableFilterTest.shouldSkipNullToRepartitionOnMaterialization."""
    builder = StreamsBuilder()
    table1 = builder.table("topic1", Consumed.with_(Serdes.String(), Serdes.String()))
    table2 = table1.filter(_accept, Materialized.as_("store2"))
    _grouped_reduce(table2, Materialized.as_("mock-result"))
    _run_skip_null(make_config, builder, table1, table2, True)


def test_should_not_skip_null_if_versioned_upstream(make_config):
    """Mirrors KTableFilterTest.shouldNotSkipNullIfVersionedUpstream."""
    builder = StreamsBuilder()
    table1 = builder.table(
        "topic1", Consumed.with_(Serdes.String(), Serdes.String()), _versioned("versioned")
    )
    table2 = table1.filter(_accept)
    _grouped_reduce(table2)
    _run_skip_null(make_config, builder, table1, table2, False)


def test_should_skip_null_if_versioned_downstream(make_config):
    """Mirrors KTableFilterTest.shouldSkipNullIfVersionedDownstream."""
    builder = StreamsBuilder()
    table1 = builder.table(
        "topic1", Consumed.with_(Serdes.String(), Serdes.String()), Materialized.as_("store")
    )
    table2 = table1.filter(_accept, _versioned("versioned"))
    _grouped_reduce(table2)
    _run_skip_null(make_config, builder, table1, table2, True)


def test_should_throw_on_versioned_store_supplier_for_global_table():
    """Mirrors StreamsBuilderTest.shouldThrowOnVersionedStoreSupplierForGlobalTable."""
    builder = StreamsBuilder()
    supplier = Stores.persistent_versioned_key_value_store("store", 0)
    with pytest.raises(TopologyError):
        builder.global_table(
            "topic",
            materialized=Materialized.as_(supplier)
            .with_key_serde(Serdes.Long())
            .with_value_serde(Serdes.String()),
        )


@pytest.mark.parametrize("filtered", [False, True])
def test_group_by_of_a_versioned_table_drops_out_of_order_updates(filtered):
    """An update older than its key's latest version does not reach a versioned table's group_by
    (directly, or through an operation without a store of its own), as in Kafka Streams 4.3.1:
    the aggregate counts each key's latest value only (tests/oracle found it)."""
    builder = StreamsBuilder()
    table = builder.table("topic1", Consumed.with_(Serdes.String(), Serdes.String()), _versioned("v"))
    if filtered:
        table = table.filter(lambda k, v: True)
    strings = Grouped.with_(Serdes.String(), Serdes.String())
    counts = table.group_by(lambda k, v: (v, v), strings).count(
        Materialized.with_(Serdes.String(), Serdes.Long())
    )
    captured = Capture()
    counts.to_stream().process(captured)
    with TopologyTestDriver(builder.build()) as driver:
        topic = driver.create_input_topic("topic1", Serdes.String(), Serdes.String())
        topic.pipe_input("a", "x", 10)
        topic.pipe_input("a", "y", 5)  # out of order: "a" stays "x"
        topic.pipe_input("a", None, 3)  # out of order too
        topic.pipe_input("a", "z", 12)
    assert captured.processed == [("x", 1, 10), ("x", 0, 12), ("z", 1, 12)]
