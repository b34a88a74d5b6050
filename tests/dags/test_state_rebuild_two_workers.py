"""The state-rebuild DAG across two workers of one application: each rebuilds only its own tasks.

Two KafkaStreams instances (one thread each, the worker's HTTP server on its own loopback port,
bearer token) share the rebuild app's 4 tasks. The DAG is given ONE of them (as the demo's
``streams_worker`` Connection gives one service address): it learns from that worker's view of the
group's assignment which instance runs each task, sends each its own, and reports all four, each
rebuilt once; a single task id goes to whichever worker owns it, whichever worker was asked.
"""

from __future__ import annotations

import json

import pytest

from tests.dags.test_state_rebuild_dag import (  # noqa: F401 - the autouse token connection
    APP,
    DAG_ID,
    STORE,
    TOKEN,
    free_port,
    worker_token_connection,
)

pytestmark = pytest.mark.kafka

PARTITIONS = 4
USERS = [f"user-{i}" for i in range(16)]


@pytest.fixture
def two_workers(bootstrap_servers, unique_name, tmp_path, monkeypatch):
    from streams_runtime import KafkaStreams
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics
    from tests.conditions import wait_committed
    from tests.integration.streams_support import latest_until, wait_running, wait_until

    names = {"input": unique_name("rb2-pay"), "output": unique_name("rb2-tot"), "app": unique_name("rb2-app")}
    create_topics(
        create_admin(bootstrap_servers),
        [TopicSpec(names["input"], PARTITIONS), TopicSpec(names["output"], PARTITIONS)],
    )
    producer = create_producer(bootstrap_servers)
    for i in range(64):
        user = USERS[i % len(USERS)]
        payment = {"payment_id": i, "user": user, "amount": 1 + i % 9}
        producer.produce(
            names["input"], json.dumps(payment).encode(), user.encode(), partition=i % PARTITIONS
        )
    assert producer.flush(30) == 0
    monkeypatch.setenv("REBUILD_TEST_APP", f"{names['input']},{names['output']},{names['app']}")
    from tests.dags.rebuild_app import app

    clients = []
    try:
        for n in range(2):
            topology, config = app()
            config = {
                **config,
                "bootstrap_servers": bootstrap_servers,
                "state_dir": str(tmp_path / f"instance-{n}"),
                "num_stream_threads": 1,
                "application_server": f"127.0.0.1:{free_port()}",
                "application_server_token": TOKEN,
            }
            client = KafkaStreams(topology, config)
            client.start()
            clients.append(client)

        def balanced() -> bool:
            counts = [sum(len(t.active_tasks) for t in c.metadata_for_local_threads()) for c in clients]
            return counts == [2, 2]

        wait_running(*clients, timeout=45)
        wait_until(balanced, 45, "two tasks on each worker")
        totals = latest_until(
            bootstrap_servers,
            names["output"],
            PARTITIONS,
            lambda m: (m.key().decode(), json.loads(m.value())["count"]),
            lambda d: sum(d.values()) == 64 and len(d) == len(USERS),
        )
        assert sum(totals.values()) == 64
        wait_committed(bootstrap_servers, names["app"], names["input"], PARTITIONS)
        yield [f"http://{c.config['application_server']}" for c in clients]
    finally:
        for client in clients:
            client.close()


def test_one_worker_given_every_partition_rebuilt_once_by_its_owner(run_dag, two_workers) -> None:
    first, second = two_workers
    run = run_dag(DAG_ID, application=APP, store=STORE, workers=[first], rebuild_timeout=60)
    assert run.state == "success", run.task_states()
    tasks = run.xcom("report")["tasks"]
    assert sorted(t["task_id"] for t in tasks) == [f"0_{p}" for p in range(PARTITIONS)]  # once each
    assert all(t["ok"] and t["store_key_count"] == t["changelog_live_keys"] == 4 for t in tasks)
    by_worker = {url: sorted(t["task_id"] for t in tasks if t["endpoint"] == url) for url in two_workers}
    assert [len(ids) for ids in by_worker.values()] == [2, 2]

    one = run_dag(DAG_ID, application=APP, store=STORE, workers=[second], tasks=["0_3"])
    assert one.state == "success", one.task_states()
    [row] = one.xcom("rebuild")["tasks"]
    owner = next(url for url, ids in by_worker.items() if "0_3" in ids)
    assert row["task_id"] == "0_3" and row["endpoint"] == owner and row["ok"]
