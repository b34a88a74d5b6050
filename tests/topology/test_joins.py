"""Joins through the TopologyTestDriver: stream-stream (inner, left, outer, with the timing of
non-joined results), stream-table, stream-globaltable and table-table joins, tombstones on both
sides, repartitioning before a join and co-partition groups."""

from __future__ import annotations

from streams_runtime import (
    Consumed,
    Joined,
    JoinWindows,
    Materialized,
    Produced,
    Serdes,
    StreamJoined,
    StreamsBuilder,
    TestRecord,
    TopologyTestDriver,
)

S, I = Serdes.String(), Serdes.Integer()


def _stream_stream(kind, windows, **kw):
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(I, S))
    right = builder.stream("right", Consumed.with_(I, S))
    joined = getattr(left, kind)(right, lambda a, b: f"{a}+{b}", windows, **kw)
    joined.to("out", Produced.with_(I, S))
    topology = builder.build()
    driver = TopologyTestDriver(topology)
    return (
        topology,
        driver,
        driver.create_input_topic("left", I, S),
        driver.create_input_topic("right", I, S),
        driver.create_output_topic("out", I, S),
    )


def test_inner_join_emits_matches_within_window_at_max_timestamp():
    _, driver, left, right, out = _stream_stream("join", JoinWindows.of_time_difference_with_no_grace(100))
    with driver:
        left.pipe_input(0, "A0", 0)
        right.pipe_input(0, "a0", 100)  # exactly at the window bound: joins
        right.pipe_input(0, "b0", 101)  # one past: no join
        left.pipe_input(1, "A1", 5)
        assert out.read_records_to_list() == [TestRecord(0, "A0+a0", 100)]


def test_inner_join_respects_before_and_after():
    windows = JoinWindows.of_time_difference_with_no_grace(0).before(10).after(0)
    _, driver, left, right, out = _stream_stream("join", windows)
    with driver:
        right.pipe_input(0, "r", 95)
        left.pipe_input(0, "l", 100)  # right record 5 ms before: within before=10
        right.pipe_input(0, "late-side", 105)  # 5 ms after the left record: after=0, no join
        assert out.read_values_to_list() == ["l+r"]


def test_left_join_emits_non_joined_record_only_after_window_closes():
    _, driver, left, right, out = _stream_stream("left_join", JoinWindows.of_time_difference_and_grace(10, 5))
    with driver:
        left.pipe_input(0, "A0", 0)
        assert out.is_empty()  # not yet: a right record could still arrive
        right.pipe_input(9, "x", 15)  # stream time 15 = 0 + after(10) + grace(5): window still open
        assert out.is_empty()
        right.pipe_input(9, "y", 16)  # stream time passes window end + grace: emitted now
        assert out.read_records_to_list() == [TestRecord(0, "A0+None", 0)]


def test_left_join_with_later_match_emits_no_spurious_null_result():
    _, driver, left, right, out = _stream_stream(
        "left_join", JoinWindows.of_time_difference_with_no_grace(10)
    )
    with driver:
        left.pipe_input(0, "A0", 0)
        right.pipe_input(0, "a0", 5)
        right.pipe_input(7, "z", 100)
        assert out.read_values_to_list() == ["A0+a0"]


def test_outer_join_emits_both_sides_unmatched_after_close_oldest_first():
    _, driver, left, right, out = _stream_stream(
        "outer_join", JoinWindows.of_time_difference_with_no_grace(10)
    )
    with driver:
        left.pipe_input(0, "A0", 0)
        right.pipe_input(1, "b1", 1)
        left.pipe_input(2, "A2", 50)
        assert out.read_records_to_list() == [TestRecord(0, "A0+None", 0), TestRecord(1, "None+b1", 1)]


def test_stream_stream_join_drops_null_values_and_counts_them():
    _, driver, left, right, out = _stream_stream("join", JoinWindows.of_time_difference_with_no_grace(10))
    with driver:
        left.pipe_input(0, None, 0)
        assert out.is_empty()
        assert driver.metrics.total("dropped-records") == 1


def test_stream_stream_join_names_stores_and_copartitions_inputs():
    topology, driver, *_ = _stream_stream(
        "left_join", JoinWindows.of_time_difference_with_no_grace(10), stream_joined=StreamJoined.as_("j")
    )
    driver.close()
    text = str(topology.describe())
    assert (
        "j-this-join-store" in text
        and "j-outer-other-join-store" in text
        and "j-left-shared-join-store" in text
    )
    assert topology.sub_topologies()[0].copartition_groups == [["left", "right"]]
    assert (
        topology.internal_topic_configs()["j-this-join-store-changelog"]["cleanup.policy"] == "compact,delete"
    )


def _stream_table(kind, rekey=False):
    builder = StreamsBuilder()
    stream = builder.stream("orders", Consumed.with_(S, S))
    if rekey:
        stream = stream.select_key(lambda k, v: v.split(":")[0])
    table = builder.table("users", Consumed.with_(S, S))
    getattr(stream, kind)(table, lambda o, u: f"{o}|{u}", Joined.with_(S, S)).to("out", Produced.with_(S, S))
    topology = builder.build()
    driver = TopologyTestDriver(topology)
    return (
        topology,
        driver,
        driver.create_input_topic("orders", S, S),
        driver.create_input_topic("users", S, S),
        driver.create_output_topic("out", S, S),
    )


def test_stream_table_join_looks_up_table_and_table_updates_do_not_trigger_output():
    _, driver, orders, users, out = _stream_table("join")
    with driver:
        orders.pipe_input("u1", "o1", 1)  # no user yet: inner join emits nothing
        users.pipe_input("u1", "alice", 2)  # table update: no output
        assert out.is_empty()
        orders.pipe_input("u1", "o2", 3)
        assert out.read_records_to_list() == [TestRecord("u1", "o2|alice", 3)]


def test_stream_table_left_join_sees_table_tombstone_as_missing():
    _, driver, orders, users, out = _stream_table("left_join")
    with driver:
        users.pipe_input("u1", "alice", 1)
        orders.pipe_input("u1", "o1", 2)
        users.pipe_input("u1", None, 3)  # tombstone on the table side
        orders.pipe_input("u1", "o2", 4)
        assert out.read_values_to_list() == ["o1|alice", "o2|None"]


def test_stream_table_join_after_key_change_inserts_repartition_topic():
    topology, driver, orders, users, out = _stream_table("join", rekey=True)
    with driver:
        users.pipe_input("u1", "alice", 1)
        orders.pipe_input("t1", "u1:9", 2)
        assert out.read_records_to_list() == [TestRecord("u1", "u1:9|alice", 2)]
    text = str(topology.describe())
    assert "KSTREAM-KEY-SELECT-0000000001-repartition" in text
    groups = [g for info in topology.sub_topologies() for g in info.copartition_groups]
    assert groups == [["KSTREAM-KEY-SELECT-0000000001-repartition", "users"]]


def test_stream_global_table_join_uses_key_selector():
    builder = StreamsBuilder()
    stream = builder.stream("orders", Consumed.with_(S, S))
    users = builder.global_table("users", Consumed.with_(S, S))
    stream.left_join(users, lambda k, v: v, lambda o, u: f"{o}|{u}").to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build()) as driver:
        driver.create_input_topic("users", S, S).pipe_input("u1", "alice", 0)
        orders = driver.create_input_topic("orders", S, S)
        orders.pipe_input("o1", "u1", 1)
        orders.pipe_input("o2", "u2", 2)
        assert driver.create_output_topic("out", S, S).read_key_values_to_list() == [
            ("o1", "u1|alice"),
            ("o2", "u2|None"),
        ]


def _table_table(kind, materialized=None):
    builder = StreamsBuilder()
    left = builder.table("l", Consumed.with_(S, S))
    right = builder.table("r", Consumed.with_(S, S))
    getattr(left, kind)(right, lambda a, b: f"{a}+{b}", materialized).to_stream().to(
        "out", Produced.with_(S, S)
    )
    driver = TopologyTestDriver(builder.build())
    return (
        driver,
        driver.create_input_topic("l", S, S),
        driver.create_input_topic("r", S, S),
        driver.create_output_topic("out", S, S),
    )


def test_table_table_inner_join_propagates_tombstones_from_both_sides():
    driver, left, right, out = _table_table("join")
    with driver:
        left.pipe_input("k", "A", 1)
        right.pipe_input("k", "a", 5)
        left.pipe_input("k", None, 6)  # left tombstone: result deleted
        left.pipe_input("k", "B", 7)
        right.pipe_input("k", None, 8)  # right tombstone: result deleted
        assert out.read_records_to_list() == [
            TestRecord("k", "A+a", 5),
            TestRecord("k", None, 6),
            TestRecord("k", "B+a", 7),
            TestRecord("k", None, 8),
        ]


def test_table_table_left_join_keeps_left_rows_and_null_fills_right():
    driver, left, right, out = _table_table("left_join")
    with driver:
        left.pipe_input("k", "A", 1)
        right.pipe_input("k", "a", 2)
        right.pipe_input("k", None, 3)
        right.pipe_input("x", "only-right", 4)  # no left row: nothing
        left.pipe_input("k", None, 5)
        assert out.read_values_to_list() == ["A+None", "A+a", "A+None", None]


def test_table_table_outer_join_emits_either_side():
    driver, left, right, out = _table_table("outer_join", Materialized.as_("joined").with_value_serde(S))
    with driver:
        right.pipe_input("k", "a", 1)
        left.pipe_input("k", "A", 2)
        right.pipe_input("k", None, 3)
        left.pipe_input("k", None, 4)
        assert out.read_values_to_list() == ["None+a", "A+a", "A+None", None]
        assert driver.get_key_value_store("joined").get("k") is None


def test_foreign_key_join_accepts_a_key_and_value_extractor_and_rejects_stray_arguments(tmp_path):
    """``join(other, extractor(key, value), joiner)`` (Kafka 4's BiFunction form); a plain
    table-table join given extra arguments fails naming the foreign-key form."""
    import pytest

    from streams_runtime import Consumed, Serdes, StreamsBuilder, TopologyTestDriver

    builder = StreamsBuilder()
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    orders = builder.table("orders", strings)
    users = builder.table("users", strings)
    orders.join(users, lambda key, value: key.split("-")[0], lambda o, u: f"{o}:{u}").to_stream().to("out")
    config = {
        "application_id": "fk-bifunction",
        "state_dir": str(tmp_path),
        "default_key_serde": "string",
        "default_value_serde": "string",
    }
    with TopologyTestDriver(builder.build(), config) as driver:
        driver.create_input_topic("users", Serdes.String(), Serdes.String()).pipe_input("u1", "Ada")
        driver.create_input_topic("orders", Serdes.String(), Serdes.String()).pipe_input("u1-o7", "book")
        out = driver.create_output_topic("out", Serdes.String(), Serdes.String())
        assert out.read_key_values_to_map() == {"u1-o7": "book:Ada"}
    with pytest.raises(TypeError, match="foreign-key join is join"):
        orders.join(users, lambda a, b: a, None, "stray")


def _fk_join(left_join: bool):
    builder = StreamsBuilder()
    orders = builder.table("orders", Consumed.with_(S, S))
    customers = builder.table("customers", Consumed.with_(S, S))
    join = orders.left_join if left_join else orders.join
    join(customers, lambda v: v, lambda o, c: f"{o}|{c}").to_stream().to("out", Produced.with_(S, S))
    driver = TopologyTestDriver(builder.build())
    return (
        driver,
        driver.create_input_topic("orders", S, S),
        driver.create_input_topic("customers", S, S),
        driver.create_output_topic("out", S, S),
    )


def test_foreign_key_left_join_emits_one_result_when_the_foreign_key_changes():
    """A left row moving to another foreign key gets one result, from the new key's response: the
    old key's subscription is only removed, as Kafka Streams 4.3.1 does (tests/oracle found it)."""
    driver, orders, customers, out = _fk_join(left_join=True)
    with driver:
        customers.pipe_input("x", "1", 0)
        customers.pipe_input("y", "2", 1)
        orders.pipe_input("a", "x", 2)
        assert out.read_key_values_to_list() == [("a", "x|1")]
        orders.pipe_input("a", "y", 3)
        assert out.read_key_values_to_list() == [("a", "y|2")]
        orders.pipe_input("a", None, 4)
        assert out.read_key_values_to_list() == [("a", None)]


def test_foreign_key_inner_join_removes_the_result_when_the_new_foreign_key_is_null():
    """An inner-join row whose new value has no foreign key loses its result (a tombstone), and a
    row whose old value had none joins on its new key like an insert."""
    builder = StreamsBuilder()
    orders = builder.table("orders", Consumed.with_(S, S))
    customers = builder.table("customers", Consumed.with_(S, S))
    orders.join(customers, lambda v: v or None, lambda o, c: f"{o}|{c}").to_stream().to(
        "out", Produced.with_(S, S)
    )
    with TopologyTestDriver(builder.build()) as driver:
        order_in = driver.create_input_topic("orders", S, S)
        driver.create_input_topic("customers", S, S).pipe_input("x", "1", 0)
        out = driver.create_output_topic("out", S, S)
        order_in.pipe_input("a", "x", 1)
        order_in.pipe_input("a", "", 2)  # no foreign key now: the old result goes
        assert out.read_key_values_to_list() == [("a", "x|1"), ("a", None)]
        order_in.pipe_input("a", "x", 3)  # the old value had no foreign key: joins like an insert
        order_in.pipe_input("a", "x", 4)  # the same key again: joins again
        assert out.read_key_values_to_list() == [("a", "x|1"), ("a", "x|1")]


def test_foreign_key_inner_join_on_an_unchanged_key_without_a_match_emits_nothing():
    """An update that keeps its foreign key, which has no value on the other side, emits no
    tombstone: there was no result before either."""
    driver, orders, _, out = _fk_join(left_join=False)
    with driver:
        orders.pipe_input("a", "x", 1)
        orders.pipe_input("a", "x", 2)
        assert out.read_key_values_to_list() == []


def test_stream_global_table_left_join_keeps_a_record_whose_selected_key_is_null():
    """A left join with a global table joins a record whose key selector gives null with null (an
    inner join drops it), as Kafka Streams 4.3.1 does (tests/oracle found it)."""
    for left_join, expected in ((True, [("a", "-|-"), ("b", "x|1")]), (False, [("b", "x|1")])):
        builder = StreamsBuilder()
        table = builder.global_table("lookup", Consumed.with_(S, S))
        stream = builder.stream("in", Consumed.with_(S, S))
        join = stream.left_join if left_join else stream.join
        joined = join(table, lambda k, v: v or None, lambda v, t: f"{v or '-'}|{t or '-'}")
        joined.to("out", Produced.with_(S, S))
        with TopologyTestDriver(builder.build()) as driver:
            driver.create_input_topic("lookup", S, S).pipe_input("x", "1", 0)
            stream_in = driver.create_input_topic("in", S, S)
            stream_in.pipe_input("a", "", 1)  # the selector gives null
            stream_in.pipe_input("b", "x", 2)
            out = driver.create_output_topic("out", S, S)
            assert out.read_key_values_to_list() == expected
