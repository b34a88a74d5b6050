"""Topic provisioning logic (plugins/streams_ops/provisioning.py), without Airflow.

Broker-free tests for the diff and the wanted topics; ``kafka`` tests against the session broker
for create -> verify -> fail closed.
"""

from __future__ import annotations

import json

import pytest
from streams_ops.provisioning import (
    ExistingTopic,
    ProvisioningError,
    WantedTopic,
    collect_wanted,
    diff_topic,
    load_spec,
    load_topology,
    merge_wanted,
    provision,
    spec_topics,
    topology_topics,
)

from tests.dags import sample_topology

SAMPLE = "tests.dags.sample_topology:build"


def test_should_name_every_difference_of_an_existing_topic() -> None:
    wanted = WantedTopic("t", 3, 1, {"cleanup.policy": "compact", "retention.ms": "-1"})
    existing = ExistingTopic("t", 2, 3, {"cleanup.policy": "delete"})
    assert diff_topic(wanted, existing) == [
        "partitions: expected 3, found 2",
        "replication factor: expected 1, found 3",
        "cleanup.policy: expected compact, found delete",
        "retention.ms: expected -1, found 604800000 (broker default)",
    ]


def test_should_accept_equal_topics_and_cleanup_policies_in_any_order() -> None:
    wanted = WantedTopic("t", 3, 1, {"cleanup.policy": "compact,delete", "cleanup.policy_x": "1"})
    existing = ExistingTopic("t", 3, 1, {"cleanup.policy": "delete, compact", "cleanup.policy_x": "1"})
    assert diff_topic(wanted, existing) == []
    # a config the broker does not report is compared with Kafka's default
    assert diff_topic(WantedTopic("t", 3, 1, {"cleanup.policy": "delete"}), ExistingTopic("t", 3, 1)) == []


def test_should_read_specs_from_yaml_and_json(tmp_path) -> None:
    (tmp_path / "s.yaml").write_text(
        "defaults: {replication_factor: 1}\n"
        "topics:\n  - {name: a, partitions: 2, config: {retention.ms: 1000}}\n"
    )
    (tmp_path / "s.json").write_text(json.dumps({"topics": [{"name": "b", "partitions": 1}]}))
    assert spec_topics(load_spec(tmp_path / "s.yaml")) == [WantedTopic("a", 2, 1, {"retention.ms": "1000"})]
    assert spec_topics(load_spec(tmp_path / "s.json"))[0].name == "b"
    with pytest.raises(ProvisioningError, match="needs 'name' and 'partitions'"):
        spec_topics({"topics": [{"name": "c"}]})


def test_should_derive_internal_topic_partitions_from_the_task_counts() -> None:
    topology = load_topology(SAMPLE)
    topics = {t.name: t for t in topology_topics(topology, "sample", {sample_topology.INPUT: 4})}
    assert set(topics) == {sample_topology.REPARTITION, sample_topology.CHANGELOG}
    assert topics[sample_topology.REPARTITION].partitions == 4
    assert topics[sample_topology.CHANGELOG].partitions == 4
    assert topics[sample_topology.CHANGELOG].config["cleanup.policy"] == "compact"
    assert topics[sample_topology.REPARTITION].config["cleanup.policy"] == "delete"


def test_should_refuse_a_topology_whose_source_partitions_are_unknown() -> None:
    with pytest.raises(ProvisioningError, match="neither declared in the spec nor present"):
        topology_topics(load_topology(SAMPLE), "sample", {})


def test_should_refuse_the_same_topic_wanted_in_two_shapes() -> None:
    with pytest.raises(ProvisioningError, match="wanted twice, differently"):
        merge_wanted([WantedTopic("t", 1, origin="a"), WantedTopic("t", 2, origin="b")])


# ---- against the broker -------------------------------------------------------------------------------


@pytest.fixture
def admin(bootstrap_servers: str):
    from streams_runtime.kafka.clients import create_admin

    return create_admin(bootstrap_servers)


@pytest.mark.kafka
def test_should_create_missing_topics_then_verify_them_idempotently(admin, unique_name) -> None:
    name = unique_name("orders")
    spec = {
        "topics": [
            {
                "name": name,
                "partitions": 3,
                "config": {"cleanup.policy": "delete", "retention.ms": "3600000"},
            },
            {"name": sample_topology.INPUT, "partitions": 2},
            {"name": sample_topology.OUTPUT, "partitions": 2},
        ],
        "topologies": [SAMPLE],
    }
    wanted = collect_wanted(admin, spec)
    first = provision(admin, wanted)
    statuses = {c.name: c.status for c in first.checks}
    # the sample topology's topics are shared by the session (another test may have made them)
    assert statuses == {
        name: "created",
        **{
            t: statuses[t] if statuses[t] == "ok" else "created"
            for t in (
                sample_topology.INPUT,
                sample_topology.OUTPUT,
                sample_topology.REPARTITION,
                sample_topology.CHANGELOG,
            )
        },
    }
    second = provision(admin, collect_wanted(admin, spec))
    assert second.created == [] and second.mismatches == []
    assert {c.status for c in second.checks} == {"ok"}


@pytest.mark.kafka
def test_should_fail_closed_naming_each_difference_of_a_seeded_mismatch(admin, unique_name) -> None:
    from streams_runtime.kafka.clients import TopicSpec, create_topics, partition_counts

    seeded, missing = unique_name("seeded"), unique_name("missing")
    create_topics(admin, [TopicSpec(seeded, 2, config={"cleanup.policy": "delete"})])
    wanted = [
        WantedTopic(seeded, 3, 1, {"cleanup.policy": "compact"}, origin="spec"),
        WantedTopic(missing, 1, origin="spec"),
    ]
    dry = provision(admin, wanted, dry_run=True)
    assert [c.status for c in dry.checks if c.name == missing] == ["would create"]
    with pytest.raises(ProvisioningError) as failure:
        provision(admin, wanted)
    text = str(failure.value)
    assert f"mismatch     {seeded}" in text
    assert "partitions: expected 3, found 2" in text
    assert "cleanup.policy: expected compact, found delete" in text
    assert missing not in partition_counts(admin, [missing])  # fail closed: nothing created


def test_the_repo_spec_declares_valid_topics_and_the_demo_topology() -> None:
    from tests.dags.conftest import DAGS

    spec = load_spec(DAGS / "specs" / "topics.yaml")
    declared = {t.name: t for t in spec_topics(spec)}
    assert declared["demo-payments"].config["cleanup.policy"] == "delete"
    for path in spec["topologies"]:
        topology = load_topology(path)
        internal = topology_topics(topology, path, {n: t.partitions for n, t in declared.items()})
        assert all(t.name.startswith(f"{topology.application_id}-") for t in internal)


def test_should_derive_the_foreign_key_join_topics_from_the_topology() -> None:
    """The subscription topic follows the foreign table's partitions, the response topic the left
    table's; the subscription store gets a compacted changelog."""
    from tests.dags import fk_join_topology as fk

    topology = load_topology("tests.dags.fk_join_topology:build")
    topics = {t.name: t for t in topology_topics(topology, "fk", {fk.ORDERS: 4, fk.CUSTOMERS: 2})}
    registration = f"{fk.PREFIX}-subscription-registration-topic"
    response = f"{fk.PREFIX}-subscription-response-topic"
    store_changelog = f"{fk.PREFIX}-subscription-store-changelog"
    assert {registration, response, store_changelog} <= set(topics)
    assert topics[registration].partitions == 2
    assert topics[response].partitions == 4
    assert topics[store_changelog].partitions == 2
    assert topics[store_changelog].config["cleanup.policy"] == "compact"
    assert topics[registration].config["cleanup.policy"] == "delete"
    assert topics[f"{fk.APPLICATION_ID}-orders-changelog"].partitions == 4
