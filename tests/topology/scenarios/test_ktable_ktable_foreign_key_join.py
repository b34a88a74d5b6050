"""Replays Kafka Streams' KTableKTableForeignKeyJoinIntegrationTest (driver-based; the scenario and
describe() tests are in test_ktable_ktable_foreign_key_join_scenario.py).

Left table ``left_table`` (String keys, values ``"<value>|<foreign key>"``), right table
``right_table``; the join result ``(<left>,<right>)`` goes to ``output-topic``. Each test runs as
inner and left join, with and without ``Materialized.as_("store")``, and with and without the
"rejoin" (joining the result back with the left table), as Kafka's parameterized test does.
Inputs, timestamps and expected outputs are those of the Java tests.
"""

import pytest

from streams_runtime import (
    Consumed,
    Materialized,
    Produced,
    Serdes,
    Stores,
    StreamsBuilder,
    TopologyTestDriver,
)

from .support import store_contents

LEFT, RIGHT, OUTPUT, REJOIN_OUTPUT = "left_table", "right_table", "output-topic", "rejoin-output-topic"
BASE = 1_600_000_000_000


def _s(value):
    """Java's string concatenation: null prints as "null"."""
    return "null" if value is None else value


def _extract(value):
    return value.split("|")[1]


def _table(builder, topic, versioned_store):
    consumed = Consumed.with_(Serdes.String(), Serdes.String())
    if versioned_store is None:
        return builder.table(topic, consumed)
    supplier = Stores.persistent_versioned_key_value_store(versioned_store, 5 * 60_000)
    return builder.table(topic, consumed, Materialized.as_(supplier))


def _topology(
    materialized, left_join, rejoin, extractor=_extract, left_versioned=False, right_versioned=False
):
    builder = StreamsBuilder()
    left = _table(builder, LEFT, "left" if left_versioned else None)
    right = _table(builder, RIGHT, "right" if right_versioned else None)
    # as in the Java test: caching off (the cache would suppress tombstones asserted on)
    mat = (
        Materialized.as_(Stores.in_memory_key_value_store(materialized)).with_value_serde(Serdes.String())
        if materialized
        else Materialized.with_(None, Serdes.String())
    ).with_caching_disabled()
    joiner = lambda a, b: f"({_s(a)},{_s(b)})"  # noqa: E731
    fk = (left.left_join if left_join else left.join)(right, extractor, joiner, mat)
    fk.to_stream().to(OUTPUT, Produced.with_(Serdes.String(), Serdes.String()))
    if rejoin:
        rejoiner = lambda a, b: f"rejoin({_s(a)},{_s(b)})"  # noqa: E731
        rejoin_mat = (
            Materialized.as_(Stores.in_memory_key_value_store(materialized + "-rejoin"))
            .with_value_serde(Serdes.String())
            .with_caching_disabled()
            if materialized
            else Materialized.with_(None, Serdes.String())
        )
        (fk.left_join if left_join else fk.join)(left, rejoiner, rejoin_mat).to_stream().to(REJOIN_OUTPUT)
    return builder.build()


class _Run:
    def __init__(
        self, make_config, materialized, left_join, rejoin, extractor=_extract, versioned=(False, False)
    ):
        self.materialized = materialized
        topology = _topology("store" if materialized else None, left_join, rejoin, extractor, *versioned)
        self.driver = TopologyTestDriver(topology, make_config())
        s = Serdes.String()
        self.left = self.driver.create_input_topic(LEFT, s, s)
        self.right = self.driver.create_input_topic(RIGHT, s, s)
        self.output = self.driver.create_output_topic(OUTPUT, s, s)
        self.rejoin = self.driver.create_output_topic(REJOIN_OUTPUT, s, s) if rejoin else None

    def out(self):
        return self.output.read_key_values_to_map()

    def check_store(self, expected):
        if self.materialized:
            assert store_contents(self.driver.get_key_value_store("store")) == expected


PARAMS = [(lj, m, r) for lj in (True, False) for m in (True, False) for r in (True, False)]
IDS = [
    f"{'left' if lj else 'inner'}-{'mat' if m else 'unmat'}-{'rejoin' if r else 'plain'}"
    for lj, m, r in PARAMS
]


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_do_join_from_left_then_delete_left_entity(make_config, left_join, materialized, rejoin):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.doJoinFromLeftThenDeleteLeftEntity."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.right.pipe_input("rhs1", "rhsValue1", BASE)
        run.right.pipe_input("rhs2", "rhsValue2", BASE + 1)
        run.right.pipe_input("rhs3", "rhsValue3", BASE + 2)
        assert run.out() == {}
        run.check_store({})
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE + 3)
        run.left.pipe_input("lhs2", "lhsValue2|rhs2", BASE + 4)
        expected = {"lhs1": "(lhsValue1|rhs1,rhsValue1)", "lhs2": "(lhsValue2|rhs2,rhsValue2)"}
        assert run.out() == expected
        if rejoin:
            assert run.rejoin.read_key_values_to_map() == {
                "lhs1": "rejoin((lhsValue1|rhs1,rhsValue1),lhsValue1|rhs1)",
                "lhs2": "rejoin((lhsValue2|rhs2,rhsValue2),lhsValue2|rhs2)",
            }
        run.check_store(expected)
        run.left.pipe_input("lhs3", "lhsValue3|rhs1", BASE + 5)
        assert run.out() == {"lhs3": "(lhsValue3|rhs1,rhsValue1)"}
        if rejoin:
            assert run.rejoin.read_key_values_to_map() == {
                "lhs3": "rejoin((lhsValue3|rhs1,rhsValue1),lhsValue3|rhs1)"
            }
        run.check_store({**expected, "lhs3": "(lhsValue3|rhs1,rhsValue1)"})
        run.left.pipe_input("lhs1", None, BASE + 6)
        assert run.out() == {"lhs1": None}
        if rejoin:
            assert run.rejoin.read_key_values_to_map() == {"lhs1": None}
        run.check_store({"lhs2": "(lhsValue2|rhs2,rhsValue2)", "lhs3": "(lhsValue3|rhs1,rhsValue1)"})


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_do_join_from_right_then_delete_right_entity(make_config, left_join, materialized, rejoin):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.doJoinFromRightThenDeleteRightEntity."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE)
        run.left.pipe_input("lhs2", "lhsValue2|rhs2", BASE + 1)
        run.left.pipe_input("lhs3", "lhsValue3|rhs1", BASE + 2)
        half = {
            "lhs1": "(lhsValue1|rhs1,null)",
            "lhs2": "(lhsValue2|rhs2,null)",
            "lhs3": "(lhsValue3|rhs1,null)",
        }
        assert run.out() == (half if left_join else {})
        run.check_store(half if left_join else {})
        run.right.pipe_input("rhs1", "rhsValue1", BASE + 3)
        assert run.out() == {"lhs1": "(lhsValue1|rhs1,rhsValue1)", "lhs3": "(lhsValue3|rhs1,rhsValue1)"}
        joined1 = {"lhs1": "(lhsValue1|rhs1,rhsValue1)", "lhs3": "(lhsValue3|rhs1,rhsValue1)"}
        run.check_store({**joined1, "lhs2": "(lhsValue2|rhs2,null)"} if left_join else joined1)
        run.right.pipe_input("rhs2", "rhsValue2", BASE + 4)
        assert run.out() == {"lhs2": "(lhsValue2|rhs2,rhsValue2)"}
        full = {**joined1, "lhs2": "(lhsValue2|rhs2,rhsValue2)"}
        run.check_store(full)
        run.right.pipe_input("rhs3", "rhsValue3", BASE + 5)
        assert run.out() == {}
        run.check_store(full)
        run.right.pipe_input("rhs1", None, BASE + 6)
        assert run.out() == {
            "lhs1": "(lhsValue1|rhs1,null)" if left_join else None,
            "lhs3": "(lhsValue3|rhs1,null)" if left_join else None,
        }
        if left_join:
            run.check_store(
                {
                    "lhs1": "(lhsValue1|rhs1,null)",
                    "lhs2": "(lhsValue2|rhs2,rhsValue2)",
                    "lhs3": "(lhsValue3|rhs1,null)",
                }
            )
        else:
            run.check_store({"lhs2": "(lhsValue2|rhs2,rhsValue2)"})


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_should_emit_tombstone_when_deleting_non_joining_records(
    make_config, left_join, materialized, rejoin
):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.shouldEmitTombstoneWhenDeletingNonJoiningRecords."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE)
        expected = {"lhs1": "(lhsValue1|rhs1,null)"} if left_join else {}
        assert run.out() == expected
        run.check_store(expected)
        run.left.pipe_input("lhs1", None, BASE + 1)
        assert run.out() == {"lhs1": None}
        run.check_store({})
        run.left.pipe_input("lhs1", None, BASE + 2)
        assert run.out() == {}
        run.check_store({})


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_should_not_emit_tombstones_when_deleting_non_existing_records(
    make_config, left_join, materialized, rejoin
):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest
    .shouldNotEmitTombstonesWhenDeletingNonExistingRecords."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.left.pipe_input("lhs1", None, BASE)
        assert run.out() == {}
        run.check_store({})


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_join_should_produce_nulls_when_value_has_non_matching_foreign_key(
    make_config, left_join, materialized, rejoin
):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest
    .joinShouldProduceNullsWhenValueHasNonMatchingForeignKey."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE)
        half = {"lhs1": "(lhsValue1|rhs1,null)"}
        assert run.out() == (half if left_join else {})
        run.check_store(half if left_join else {})
        run.left.pipe_input("lhs1", "lhsValue1|rhs2", BASE + 1)
        assert run.out() == {"lhs1": "(lhsValue1|rhs2,null)" if left_join else None}
        run.check_store({"lhs1": "(lhsValue1|rhs2,null)"} if left_join else {})
        run.left.pipe_input("lhs1", "lhsValue1|rhs3", BASE + 2)
        assert run.out() == {"lhs1": "(lhsValue1|rhs3,null)" if left_join else None}
        run.check_store({"lhs1": "(lhsValue1|rhs3,null)"} if left_join else {})
        run.right.pipe_input("rhs1", "rhsValue1", BASE + 3)
        assert run.out() == {}
        run.check_store({"lhs1": "(lhsValue1|rhs3,null)"} if left_join else {})
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE + 4)
        assert run.out() == {"lhs1": "(lhsValue1|rhs1,rhsValue1)"}
        run.check_store({"lhs1": "(lhsValue1|rhs1,rhsValue1)"})
        run.left.pipe_input("lhs1", "lhsValue1|rhs2", BASE + 5)
        assert run.out() == {"lhs1": "(lhsValue1|rhs2,null)" if left_join else None}
        run.check_store({"lhs1": "(lhsValue1|rhs2,null)"} if left_join else {})


@pytest.mark.parametrize(("left_join", "materialized", "rejoin"), PARAMS, ids=IDS)
def test_should_unsubscribe_old_foreign_key_if_left_side_is_updated(
    make_config, left_join, materialized, rejoin
):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.shouldUnsubscribeOldForeignKeyIfLeftSideIsUpdated."""
    run = _Run(make_config, materialized, left_join, rejoin)
    with run.driver:
        run.right.pipe_input("rhs1", "rhsValue1", BASE)
        run.right.pipe_input("rhs2", "rhsValue2", BASE + 1)
        assert run.out() == {}
        run.check_store({})
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE + 2)
        assert run.out() == {"lhs1": "(lhsValue1|rhs1,rhsValue1)"}
        run.check_store({"lhs1": "(lhsValue1|rhs1,rhsValue1)"})
        run.left.pipe_input("lhs1", "lhsValue1|rhs2", BASE + 3)
        assert run.out() == {"lhs1": "(lhsValue1|rhs2,rhsValue2)"}
        run.check_store({"lhs1": "(lhsValue1|rhs2,rhsValue2)"})
        run.right.pipe_input("rhs1", "rhsValue1Delta", BASE + 4)
        assert run.out() == {}
        run.check_store({"lhs1": "(lhsValue1|rhs2,rhsValue2)"})


@pytest.mark.parametrize(("materialized", "rejoin"), [(m, r) for m in (True, False) for r in (True, False)])
def test_should_emit_record_on_null_foreign_key_for_left_joins(make_config, materialized, rejoin):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.shouldEmitRecordOnNullForeignKeyForLeftJoins."""
    run = _Run(make_config, materialized, True, rejoin, extractor=lambda value: None)
    with run.driver:
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE)
        assert run.out() == {"lhs1": "(lhsValue1|rhs1,null)"}
        run.check_store({"lhs1": "(lhsValue1|rhs1,null)"})


def _null_on_marker(value):
    fk = value.split("|")[1]
    return None if fk == "returnNull" else fk


@pytest.mark.parametrize(("materialized", "rejoin"), [(m, r) for m in (True, False) for r in (True, False)])
def test_should_emit_record_when_old_and_new_fk_differ(make_config, materialized, rejoin):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.shouldEmitRecordWhenOldAndNewFkDiffer: moving to a
    null foreign key unsubscribes the old one (the subscription store entry goes away)."""
    run = _Run(make_config, materialized, True, rejoin, extractor=_null_on_marker)
    with run.driver:
        stores = run.driver.get_all_state_stores()
        name = next(n for n in stores if "SUBSCRIPTION-STATE-STORE" in n)
        subscriptions = run.driver.get_key_value_store(name)
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE)
        assert run.out() == {"lhs1": "(lhsValue1|rhs1,null)"}
        run.check_store({"lhs1": "(lhsValue1|rhs1,null)"})
        assert len(store_contents(subscriptions)) == 1
        run.left.pipe_input("lhs1", "lhsValue1|returnNull", BASE)
        assert run.out() == {"lhs1": "(lhsValue1|returnNull,null)"}
        run.check_store({"lhs1": "(lhsValue1|returnNull,null)"})
        assert store_contents(subscriptions) == {}


VERSIONED = [
    (lj, m, lv, rv)
    for lj in (True, False)
    for m in (True, False)
    for lv in (True, False)
    for rv in (True, False)
]


@pytest.mark.parametrize(("left_join", "materialized", "left_versioned", "right_versioned"), VERSIONED)
def test_should_ignore_out_of_order_records_iff_versioned(
    make_config, left_join, materialized, left_versioned, right_versioned
):
    """Mirrors KTableKTableForeignKeyJoinIntegrationTest.shouldIgnoreOutOfOrderRecordsIffVersioned."""
    run = _Run(make_config, materialized, left_join, False, versioned=(left_versioned, right_versioned))
    with run.driver:
        run.right.pipe_input("rhs1", "rhsValue1", BASE + 4)
        assert run.out() == {}
        run.check_store({})
        run.left.pipe_input("lhs1", "lhsValue1|rhs1", BASE + 3)
        run.left.pipe_input("lhs2", "lhsValue2|rhs1", BASE + 5)
        expected = {"lhs1": "(lhsValue1|rhs1,rhsValue1)", "lhs2": "(lhsValue2|rhs1,rhsValue1)"}
        assert run.out() == expected
        run.check_store(expected)
        run.left.pipe_input("lhs2", None, BASE + 6)
        assert run.out() == {"lhs2": None}
        run.check_store({"lhs1": "(lhsValue1|rhs1,rhsValue1)"})
        run.left.pipe_input("lhs1", "lhsValue1_ooo|rhs1", BASE + 2)
        run.left.pipe_input("lhs2", "lhsValue2_ooo|rhs1", BASE + 2)
        if left_versioned:
            assert run.out() == {}
            run.check_store({"lhs1": "(lhsValue1|rhs1,rhsValue1)"})
        else:
            expected = {"lhs1": "(lhsValue1_ooo|rhs1,rhsValue1)", "lhs2": "(lhsValue2_ooo|rhs1,rhsValue1)"}
            assert run.out() == expected
            run.check_store(expected)
        run.left.pipe_input("lhs1", None, BASE + 2)
        if left_versioned:
            assert run.out() == {}
            run.check_store({"lhs1": "(lhsValue1|rhs1,rhsValue1)"})
        else:
            assert run.out() == {"lhs1": None}
            run.check_store({"lhs2": "(lhsValue2_ooo|rhs1,rhsValue1)"})
        run.left.pipe_input("lhs1", "lhsValue1_new|rhs1", BASE + 8)
        run.left.pipe_input("lhs2", "lhsValue2_new|rhs1", BASE + 8)
        expected = {"lhs1": "(lhsValue1_new|rhs1,rhsValue1)", "lhs2": "(lhsValue2_new|rhs1,rhsValue1)"}
        assert run.out() == expected
        run.check_store(expected)
        run.right.pipe_input("rhs1", "rhsValue1_ooo", BASE + 1)
        if right_versioned:
            assert run.out() == {}
            run.check_store(expected)
        else:
            ooo = {"lhs1": "(lhsValue1_new|rhs1,rhsValue1_ooo)", "lhs2": "(lhsValue2_new|rhs1,rhsValue1_ooo)"}
            assert run.out() == ooo
            run.check_store(ooo)
        run.right.pipe_input("rhs1", None, BASE + 1)
        if right_versioned:
            assert run.out() == {}
            run.check_store(expected)
        elif left_join:
            half = {"lhs1": "(lhsValue1_new|rhs1,null)", "lhs2": "(lhsValue2_new|rhs1,null)"}
            assert run.out() == half
            run.check_store(half)
        else:
            assert run.out() == {"lhs1": None, "lhs2": None}
            run.check_store({})
        run.right.pipe_input("rhs1", "rhsValue1_new", BASE + 6)
        new = {"lhs1": "(lhsValue1_new|rhs1,rhsValue1_new)", "lhs2": "(lhsValue2_new|rhs1,rhsValue1_new)"}
        assert run.out() == new
        run.check_store(new)
