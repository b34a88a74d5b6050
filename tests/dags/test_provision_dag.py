"""The topic provisioning DAG end to end: ``dag.test()`` against the session broker."""

from __future__ import annotations

import pytest

from tests.dags import sample_topology

pytestmark = pytest.mark.kafka

DAG_ID = "streams_provision_topics"


def write_spec(path, topics: list[dict], topologies: list[str] = ()) -> str:
    import yaml

    path.write_text(
        yaml.safe_dump(
            {"defaults": {"replication_factor": 1}, "topics": topics, "topologies": list(topologies)}
        )
    )
    return str(path)


def test_should_create_then_verify_topics_and_fail_on_a_seeded_mismatch(
    run_dag, kafka_conn, bootstrap_servers, unique_name, tmp_path
) -> None:
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics, partition_counts

    payments = unique_name("payments")
    spec = write_spec(
        tmp_path / "topics.yaml",
        [
            {
                "name": payments,
                "partitions": 3,
                "config": {"cleanup.policy": "delete", "retention.ms": "60000"},
            },
            {"name": sample_topology.INPUT, "partitions": 2},
            {"name": sample_topology.OUTPUT, "partitions": 2},
        ],
    )
    topologies = ["tests.dags.sample_topology:build"]
    admin = create_admin(bootstrap_servers)

    # a dry run reports and changes nothing
    dry = run_dag(DAG_ID, spec_file=spec, topologies=topologies, dry_run=True)
    assert dry.state == "success"
    assert {c["status"] for c in dry.xcom("provision_topics")["checks"]} == {"would create"}
    assert payments not in partition_counts(admin, [payments])

    # the first run creates everything, the spec's topics and the topology's internal ones
    first = run_dag(DAG_ID, spec_file=spec, topologies=topologies)
    assert first.state == "success", first.task_states()
    statuses = {c["name"]: c["status"] for c in first.xcom("provision_topics")["checks"]}
    assert statuses[payments] == "created"
    assert statuses[sample_topology.CHANGELOG] == "created"
    assert partition_counts(admin, [sample_topology.REPARTITION]) == {sample_topology.REPARTITION: 2}

    # the second run verifies and changes nothing
    second = run_dag(DAG_ID, spec_file=spec, topologies=topologies)
    assert second.state == "success"
    assert {c["status"] for c in second.xcom("provision_topics")["checks"]} == {"ok"}

    # a topic that exists with another shape fails the run (closed: the missing one is not created)
    seeded, never = unique_name("seeded"), unique_name("never")
    create_topics(admin, [TopicSpec(seeded, 1)])
    bad = write_spec(
        tmp_path / "bad.yaml", [{"name": seeded, "partitions": 4}, {"name": never, "partitions": 1}]
    )
    failed = run_dag(DAG_ID, spec_file=bad)
    assert failed.state == "failed"
    assert failed.task_states() == {"provision_topics": "failed"}
    assert never not in partition_counts(admin, [never])


def test_a_dry_run_with_the_default_params_reports_on_the_repo_spec(run_dag, kafka_conn) -> None:
    run = run_dag(DAG_ID, dry_run=True)
    assert run.state == "success", run.task_states()
    names = {c["name"] for c in run.xcom("provision_topics")["checks"]}
    assert {"demo-payments", "demo-payments-app-payment-totals-changelog"} <= names
