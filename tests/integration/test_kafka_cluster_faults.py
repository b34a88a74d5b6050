"""Broker failures on a 3-node Apache Kafka cluster (replication factor 3, ``min.insync.replicas=2``),
in the spirit of Apache Kafka's own system tests ``streams_broker_bounce_test.py`` and
``streams_broker_down_resilience_test.py``.

The chaos scenario of ``chaos_support.py`` (three instances, per-key counts and an id copy, input
at 400 records/s) runs on its own 3-node cluster while the cluster fails under it:

* bounce: a clean bounce of the leader of an input partition (controlled shutdown, restart), a
  ``kill -9`` of the active controller (restarted 3 s later), a ``kill -9`` of the leader of an
  output partition (restarted at once); each fault returns once every partition's replicas are
  back in sync (:func:`wait_in_sync`), so the next one is a single fault;
* down: every node killed with ``kill -9`` and kept down for 15 s (7.5 session timeouts of the
  2 s test profile), then all restarted; the input is held back while the cluster is down.

The instances must survive or recover by themselves (no instance is restarted by the test and
none exits), nothing may be lost, and under exactly-once every count is exact. The input and
output topics are replicated as the internal ones are (replication factor 3): with a single
replica, the partition of a killed leader has no leader, and Apache Kafka's transaction
coordinator then skips that partition's abort marker ("Couldn't find leader endpoint ... likely
deleted already"), so the aborted records of a zombie later read as committed (the run that
found it: docs/decisions/0009-two-brokers.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from streams_runtime.brokers import ApacheKafkaCluster
from streams_runtime.kafka.clients import KafkaException, create_admin
from tests.conditions import wait_until
from tests.integration.chaos_support import Fleet, run_chaos

pytestmark = pytest.mark.kafka_only

DOWN_S = 15.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafkaCluster]:
    with ApacheKafkaCluster(nodes=3, data_dir=tmp_path_factory.mktemp("kafka-3")) as started:
        yield started


def leader_of(cluster: ApacheKafkaCluster, topic: str, partition: int) -> int:
    """The node leading ``partition`` of ``topic`` (asked again for up to 30 s while the metadata
    request fails: a CI run's admin client got a broker transport failure from a busy cluster)."""
    deadline = time.monotonic() + 30.0
    while True:
        try:
            metadata = create_admin(cluster.bootstrap_servers).list_topics(timeout=10)
            return int(metadata.topics[topic].partitions[partition].leader)
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def wait_in_sync(cluster: ApacheKafkaCluster, timeout_s: float = 120.0) -> None:
    """Wait until every partition has a leader and all its replicas in sync: what a rolling bounce
    waits for between nodes. A node that has started is not yet back in the in-sync replicas;
    killing the next one then can take a partition's only in-sync replica with it, and with the
    partition leaderless Apache Kafka's transaction coordinator skips its abort markers ("Couldn't
    find leader endpoint ... likely deleted already"), so an aborted transaction's records later
    read as committed. That is two overlapping faults, more than replication factor 3 with
    ``min.insync.replicas=2`` survives; the scenario is one fault at a time."""
    admin = create_admin(cluster.bootstrap_servers)

    def in_sync() -> bool:
        try:
            topics = admin.list_topics(timeout=10).topics.values()
        except KafkaException:
            return False
        partitions = [p for topic in topics for p in topic.partitions.values()]
        return all(p.leader >= 0 and len(p.isrs) == len(p.replicas) for p in partitions)

    wait_until(in_sync, timeout_s, "every partition's replicas back in sync", interval=0.5)


def _bounce(cluster: ApacheKafkaCluster, pick: Callable[[Fleet], int], hard: bool, down_s: float = 0.0):
    def fault(fleet: Fleet) -> None:
        node = pick(fleet)
        if hard:
            cluster.kill_node(node)
        else:
            cluster.stop_node(node)
        time.sleep(down_s)
        cluster.start_node(node)
        back = time.monotonic()
        wait_in_sync(cluster)
        print(
            f"\n{'killed' if hard else 'bounced'} node {node}, back after {down_s:.0f} s, "
            f"in sync {time.monotonic() - back:.1f} s later"
        )

    return fault


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_instances_ride_out_bounced_and_killed_leaders_and_controller(
    cluster, unique_name, tmp_path, guarantee, record_property
):
    def controller(fleet: Fleet) -> int:
        node = cluster.active_controller()
        assert node is not None, "no active controller in the nodes' logs"
        return node

    faults = [
        (8.0, _bounce(cluster, lambda fleet: leader_of(cluster, fleet.source, 0), hard=False)),
        (20.0, _bounce(cluster, controller, hard=True, down_s=3.0)),
        (32.0, _bounce(cluster, lambda fleet: leader_of(cluster, fleet.counts, 0), hard=True)),
    ]
    result = run_chaos(
        cluster.bootstrap_servers,
        unique_name,
        tmp_path,
        guarantee,
        faults,
        42.0,
        settle_s=120.0,
        replication_factor=3,
    )
    record_property("scenario", result.summary("broker bounce"))
    assert result.fleet.kills == []  # no instance was restarted by the test
    assert result.alive_at_end, result.fleet.logs()


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_instances_recover_by_themselves_after_every_broker_was_down(
    cluster, unique_name, tmp_path, guarantee, record_property
):
    def all_down(fleet: Fleet) -> None:
        fleet.input_paused.set()
        ids = [node.node_id for node in cluster.nodes]
        for node in ids:
            cluster.kill_node(node)
        time.sleep(DOWN_S)
        started = time.monotonic()
        cluster.start_node(*ids)
        fleet.input_paused.clear()
        print(f"\nevery node down for {DOWN_S:.0f} s, back in {time.monotonic() - started:.1f} s")

    result = run_chaos(
        cluster.bootstrap_servers,
        unique_name,
        tmp_path,
        guarantee,
        [(8.0, all_down)],
        45.0,
        settle_s=120.0,
        replication_factor=3,
    )
    record_property("scenario", result.summary("all brokers down"))
    assert result.fleet.kills == []
    assert result.alive_at_end, result.fleet.logs()
