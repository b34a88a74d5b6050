"""The state-rebuild DAG end to end with ``dag.test()``, against the embedded broker and a real worker.

The worker is a KafkaStreams client in this process running ``tests.dags.rebuild_app`` (the demo's
payments aggregation on per-test topics) with ``application_server`` set: the worker's own HTTP
server (streams_runtime/server, with the admin routes) serves it on a free loopback port, with a
bearer token; the DAG reaches it by URL like any worker.

- restore mode: every task owning the store is wiped and restored; each restored key count equals
  its changelog's live keys; one task can be picked by id; a task no worker owns fails the run.
- recompute mode (Spark + Great Expectations): the worker runs a BUGGY aggregation, and the
  changelog holds a key that should not exist; the DAG recomputes the store, validates it,
  rewrites the changelog (new values + one tombstone), rebuilds, and the stores hold the right
  totals.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest

from tests.ports import free_port

pytestmark = pytest.mark.kafka

DAG_ID = "streams_state_rebuild"
APP = "tests.dags.rebuild_app:app"
STORE = "payment-totals"
TOKEN = "rebuild-token"


@pytest.fixture(autouse=True)
def worker_token_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers' token comes from the ``streams_worker`` Connection, never from the run's Params."""
    monkeypatch.setenv(
        "AIRFLOW_CONN_STREAMS_WORKER", json.dumps({"conn_type": "streams_worker", "password": TOKEN})
    )


USERS = [f"user-{i}" for i in range(12)]


def payments(n: int = 90) -> list[tuple[str, dict, int]]:
    """(user, payment, partition): user-i always goes to partition i % 2 (as a keyed producer would)."""
    rng = random.Random(7)
    out = []
    for i in range(n):
        user = rng.choice(USERS)
        out.append(
            (
                user,
                {"payment_id": i, "user": user, "amount": round(rng.uniform(1, 80), 2)},
                int(user.split("-")[1]) % 2,
            )
        )
    return out


def expected_totals(records) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "total_cents": 0})
    for user, payment, _ in records:
        totals[user]["count"] += 1
        totals[user]["total_cents"] += round(payment["amount"] * 100)
    return dict(totals)


class Worker:
    """A running KafkaStreams of the rebuild app, its admin routes on http://127.0.0.1:<port>."""

    def __init__(self, streams, url: str, names: dict[str, str]) -> None:
        self.streams, self.url, self.names = streams, url, names

    def store_values(self) -> dict[str, dict]:
        """Every entry of the local stores, read on their stream threads."""
        values = {}
        for thread in self.streams._threads:  # noqa: SLF001 - the test reads the stores where they live

            def read(t=thread):
                found = {}
                for task in t.task_manager.tasks.values():
                    iterator = task.stores[STORE].all()
                    try:
                        for entry in iterator:
                            value = entry.value
                            found[entry.key] = getattr(value, "value", value)
                    finally:
                        iterator.close()
                return found

            values.update(thread.submit(read).result(10))
        return values

    def stop(self) -> None:
        self.streams.close()  # stops its HTTP server too


@pytest.fixture
def start_worker(bootstrap_servers, unique_name, tmp_path, monkeypatch):
    from streams_runtime import KafkaStreams
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics
    from tests.conditions import wait_committed
    from tests.integration.streams_support import latest_until, wait_running

    workers = []

    def start(records, buggy: bool = False) -> Worker:
        names = {
            "input": unique_name("rb-pay"),
            "output": unique_name("rb-tot"),
            "app": unique_name("rb-app"),
        }
        create_topics(
            create_admin(bootstrap_servers), [TopicSpec(names["input"], 2), TopicSpec(names["output"], 2)]
        )
        producer = create_producer(bootstrap_servers)
        for user, payment, partition in records:
            producer.produce(names["input"], json.dumps(payment).encode(), user.encode(), partition=partition)
        assert producer.flush(30) == 0
        spec = f"{names['input']},{names['output']},{names['app']}" + (",buggy" if buggy else "")
        monkeypatch.setenv("REBUILD_TEST_APP", spec)
        from tests.dags.rebuild_app import app

        topology, config = app()
        config = {
            **config,
            "bootstrap_servers": bootstrap_servers,
            "state_dir": str(tmp_path / names["app"]),
            "num_stream_threads": 2,
            "application_server": f"127.0.0.1:{free_port()}",
            "application_server_token": TOKEN,
        }
        streams = KafkaStreams(topology, config)
        streams.start()  # returns once the HTTP server listens
        worker = Worker(streams, f"http://{config['application_server']}", names)
        workers.append(worker)
        wait_running(streams)
        users = {u for u, _, _ in records}
        processed = latest_until(
            bootstrap_servers,
            names["output"],
            2,
            lambda m: (m.key().decode(), json.loads(m.value())["count"]),
            lambda d: sum(d.values()) == len(records) and set(d) == users,
        )
        assert sum(processed.values()) == len(records)
        wait_committed(bootstrap_servers, names["app"], names["input"], 2)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def test_restore_mode_rebuilds_every_owning_task_and_matches_the_changelog(
    run_dag, kafka_conn, start_worker, monkeypatch
):
    records = payments()
    worker = start_worker(records)
    users = {u for u, _, _ in records}
    before = worker.store_values()

    run = run_dag(DAG_ID, application=APP, store=STORE, workers=[worker.url], rebuild_timeout=60)
    assert run.state == "success", run.task_states()
    assert run.task_states()["recompute"] == "skipped" and run.task_states()["rewrite_changelog"] == "skipped"
    report = run.xcom("report")
    assert report["mode"] == "restore" and report["changelog_rewrite"] is None
    assert [t["task_id"] for t in report["tasks"]] == ["0_0", "0_1"]
    for task in report["tasks"]:
        assert task["ok"] and task["problems"] == []
        assert task["store_key_count"] == task["changelog_live_keys"] > 0
        assert task["records_restored"] > 0 and task["endpoint"] == worker.url
    assert sum(t["store_key_count"] for t in report["tasks"]) == len(users)
    assert worker.store_values() == before  # the restored stores hold what they held

    one = run_dag(DAG_ID, application=APP, store=STORE, workers=[worker.url], tasks=["0_1"])
    assert one.state == "success", one.task_states()
    assert [t["task_id"] for t in one.xcom("rebuild")["tasks"]] == ["0_1"]

    nobody = run_dag(DAG_ID, application=APP, store=STORE, workers=[worker.url], tasks=["0_7"])
    assert nobody.task_states()["rebuild"] == "failed"
    monkeypatch.setenv(
        "AIRFLOW_CONN_WRONG_WORKER", json.dumps({"conn_type": "streams_worker", "password": "nope"})
    )
    wrong_token = run_dag(
        DAG_ID, application=APP, store=STORE, workers=[worker.url], token_conn_id="wrong_worker"
    )
    assert wrong_token.task_states()["rebuild"] == "failed"
    no_store = run_dag(DAG_ID, application=APP, store="nope", workers=[worker.url])
    assert no_store.task_states()["resolve"] == "failed"


@pytest.mark.spark
def test_recompute_mode_rewrites_the_changelog_from_spark_and_rebuilds_the_right_totals(
    run_dag, kafka_conn, start_worker, spark, bootstrap_servers, tmp_path
):
    from streams_runtime.kafka.clients import create_producer

    records = payments()
    worker = start_worker(records, buggy=True)
    expected = expected_totals(records)
    wrong = worker.store_values()
    assert set(wrong) == set(expected) and wrong != expected  # the bug is in the store
    changelog = f"{worker.names['app']}-{STORE}-changelog"
    producer = create_producer(bootstrap_servers)  # a key an older bug left behind
    producer.produce(changelog, json.dumps({"count": 1, "total_cents": 5}).encode(), b"ghost", partition=0)
    assert producer.flush(10) == 0

    run = run_dag(
        DAG_ID,
        application=APP,
        store=STORE,
        workers=[worker.url],
        mode="recompute",
        output_dir=str(tmp_path / "recompute"),
        rebuild_timeout=60,
    )
    assert run.state == "success", run.task_states()
    assert run.task_states()["restore_only"] == "skipped"
    report = run.xcom("report")
    assert report["recompute"]["rows"] == len(expected) and report["recompute"]["source_records"] == len(
        records
    )
    rewrite = report["changelog_rewrite"]["partitions"]
    assert sum(p["tombstones"] for p in rewrite.values()) == 1  # the ghost
    assert sum(p["written"] for p in rewrite.values()) == len(expected)  # every buggy value replaced
    assert all(t["ok"] for t in report["tasks"]), report["tasks"]
    assert sum(t["store_key_count"] for t in report["tasks"]) == len(expected)
    assert worker.store_values() == expected
    # the rewritten changelog is an output: an event on its topic's asset, through the DAG's alias
    [(task, uri, extra)] = run.asset_events()
    assert (task, uri) == ("rewrite_changelog", f"kafka://streams_kafka/{changelog}")
    assert extra["partitions"] == report["changelog_rewrite"]["partitions"]

    # a failed suite rewrites nothing: a refund bigger than everything user-0 ever paid
    bad = create_producer(bootstrap_servers)
    refund = {"payment_id": 999, "user": "user-0", "amount": -1_000_000}
    bad.produce(worker.names["input"], json.dumps(refund).encode(), b"user-0", partition=0)
    assert bad.flush(10) == 0
    from tests.conditions import wait_committed, wait_until

    wait_until(
        lambda: worker.store_values()["user-0"]["count"] == expected["user-0"]["count"] + 1,
        30,
        "the refund processed by the (buggy) worker",
    )
    wait_committed(bootstrap_servers, worker.names["app"], worker.names["input"], 2)
    before = worker.store_values()
    assert before["user-0"]["count"] == expected["user-0"]["count"] + 1
    failed = run_dag(
        DAG_ID,
        application=APP,
        store=STORE,
        workers=[worker.url],
        mode="recompute",
        output_dir=str(tmp_path / "recompute-bad"),
    )
    states = failed.task_states()
    assert states["recompute"] == "failed" and states["rewrite_changelog"] in ("upstream_failed", "skipped")
    assert states["rebuild"] in ("upstream_failed", "skipped")
    [summary] = (tmp_path / "recompute-bad").rglob("summary.md")
    assert "FAILED" in summary.read_text() and "total_cents" in summary.read_text()
    assert worker.store_values() == before  # no rebuild: the stores were not touched
