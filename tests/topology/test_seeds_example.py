"""The seeds' example end to end: transactions keyed by transaction_id are re-keyed by user_id
(a repartition topic is inserted before the join), joined with users keyed by user_id, then the
spend per user per window is aggregated with final results only (suppress)."""

from __future__ import annotations

from streams_runtime import (
    BufferConfig,
    Consumed,
    Grouped,
    Joined,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    Suppressed,
    TestRecord,
    TimeWindows,
    TopologyTestDriver,
)

S, J, D = Serdes.String(), Serdes.Json(), Serdes.Double()
HOUR = 3_600_000


def _topology():
    builder = StreamsBuilder({"application_id": "spend"})
    transactions = builder.stream("transactions", Consumed.with_(S, J))  # key: transaction_id
    users = builder.table("users", Consumed.with_(S, J), Materialized.as_("users-store"))  # key: user_id
    enriched = transactions.select_key(lambda tx_id, tx: tx["user_id"]).join(
        users, lambda tx, user: {**tx, "country": user["country"]}, Joined.with_(S, J).with_name("tx-by-user")
    )
    (
        enriched.group_by_key(Grouped.with_(S, J, "spend-by-user"))
        .windowed_by(TimeWindows.of_size_and_grace(HOUR, 60_000))
        .aggregate(
            lambda: 0.0,
            lambda user, tx, total: total + tx["amount"],
            Materialized.as_("spend").with_value_serde(D),
        )
        .suppress(Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("final-spend"))
        .to_stream()
        .map(lambda w, total: (f"{w.key}@{w.window.start}", total))
        .to("spend-per-user", Produced.with_(S, D))
    )
    return builder.build()


def test_describe_shows_the_repartition_before_the_join():
    text = str(_topology().describe())
    assert "spend-tx-by-user-repartition" in text
    assert "KSTREAM-JOIN" in text or "tx-by-user" in text


def test_final_windowed_spend_per_user_after_rekey_and_join():
    topology = _topology()
    groups = [g for info in topology.sub_topologies() for g in info.copartition_groups]
    assert ["spend-tx-by-user-repartition", "users"] in groups
    with TopologyTestDriver(topology) as driver:
        users = driver.create_input_topic("users", S, J)
        tx = driver.create_input_topic("transactions", S, J)
        out = driver.create_output_topic("spend-per-user", S, D)
        users.pipe_input("u1", {"country": "FR"}, 0)
        users.pipe_input("u2", {"country": "DE"}, 0)
        tx.pipe_input("t1", {"user_id": "u1", "amount": 10.0}, 1_000)
        tx.pipe_input("t2", {"user_id": "u2", "amount": 5.0}, 2_000)
        tx.pipe_input("t3", {"user_id": "u1", "amount": 2.5}, 30 * 60_000)
        tx.pipe_input("t4", {"user_id": "u1", "amount": 1.0}, HOUR + 30_000)  # next window
        assert out.is_empty()  # grace not passed
        tx.pipe_input("t5", {"user_id": "u2", "amount": 1.0}, HOUR + 60_000)  # stream time = end + grace
        assert out.read_records_to_list() == [
            TestRecord("u1@0", 12.5, 30 * 60_000),
            TestRecord("u2@0", 5.0, 2_000),
        ]
        assert "spend-tx-by-user-repartition" in driver.produced_topic_names()
