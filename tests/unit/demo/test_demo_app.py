"""The demo application and its bookkeeping, broker-free."""

from __future__ import annotations

from streams_runtime import Serdes, TopologyTestDriver
from streams_runtime.demo.app import CONFIG, PAYMENTS_TOPIC, RESULTS_TOPIC, STORE, app
from streams_runtime.demo.results import Ledger, compare, table

PAYMENTS = [
    {"payment_id": 0, "user": "user-0", "amount": 10.25},
    {"payment_id": 1, "user": "user-1", "amount": 99.99},
    {"payment_id": 2, "user": "user-0", "amount": 0.1},
]


def test_should_count_payments_and_sum_cents_per_user_on_a_logged_store() -> None:
    topology, config = app()
    assert config["application_id"] == CONFIG["application_id"]
    assert f"{CONFIG['application_id']}-{STORE}-changelog" in topology.internal_topic_configs()
    with TopologyTestDriver(topology, config) as driver:
        payments = driver.create_input_topic(PAYMENTS_TOPIC, Serdes.String(), Serdes.Json())
        results = driver.create_output_topic(RESULTS_TOPIC, Serdes.String(), Serdes.Json())
        for payment in PAYMENTS:
            payments.pipe_input(payment["user"], payment)
        latest = {kv.key: kv.value for kv in results.read_key_values_to_list()}
    assert latest == {
        "user-0": {"count": 2, "total_cents": 1035},
        "user-1": {"count": 1, "total_cents": 9999},
    }


def test_should_match_the_ledger_only_when_every_user_is_equal() -> None:
    ledger = Ledger()
    for payment in PAYMENTS:
        ledger.add(payment)
    assert ledger.payments == 3
    done = {"user-0": {"count": 2, "total_cents": 1035}, "user-1": {"count": 1, "total_cents": 9999}}
    assert compare(done, ledger) == (True, [])
    assert compare({"user-0": {"count": 2, "total_cents": 1035}}, ledger) == (False, [])
    matches, over = compare({**done, "user-1": {"count": 2, "total_cents": 19998}}, ledger)
    assert not matches and over == ["user-1: 2 counted, 1 produced"]


def test_should_print_missing_users_as_zero_rows() -> None:
    text = table({"user-1": {"count": 1, "total_cents": 9999}}, ["user-0", "user-1"])
    assert text.splitlines()[1:] == ["  user-0          0       0.00", "  user-1          1      99.99"]
