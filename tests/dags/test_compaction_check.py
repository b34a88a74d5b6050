"""Changelog compaction check: the module against the broker, and the DAG end to end."""

from __future__ import annotations

import time

import pytest
from streams_ops.compaction import EMBEDDED_NOTE, EOF_OVERRIDES, check_changelogs

pytestmark = pytest.mark.kafka

DAG_ID = "streams_changelog_compaction_check"
FAST_COMPACTION = {
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
    "delete.retention.ms": "100",
}


@pytest.fixture
def seeded_app(bootstrap_servers: str, unique_name):
    """An application with one compacted changelog: 10 keys x 5 updates, then 2 keys deleted.

    52 records, 10 distinct keys (8 live, 2 tombstones), 42 superseded (80.8%).
    """
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics

    def seed(policy: str = "compact", compact_soon: bool = False) -> str:
        """``compact_soon``: topic settings under which Apache Kafka compacts within seconds (a
        segment rolls after 100 ms, any dirty share is worth cleaning, tombstones kept 100 ms); a
        record per partition written after the seed rolls the seed's segment, so it can be
        compacted (the active segment never is)."""
        app = unique_name("cc-app")
        topic = f"{app}-counts-changelog"
        config = {"cleanup.policy": policy}
        if compact_soon:
            config.update(FAST_COMPACTION)
        create_topics(create_admin(bootstrap_servers), [TopicSpec(topic, 2, config=config)])
        producer = create_producer(bootstrap_servers)
        for update in range(5):
            for key in range(10):
                producer.produce(topic, key=f"k{key}".encode(), value=str(update).encode())
        for key in (3, 7):
            producer.produce(topic, key=f"k{key}".encode(), value=None)
        assert producer.flush(10) == 0
        if compact_soon:
            time.sleep(0.5)
            for partition in (0, 1):
                producer.produce(topic, key=f"roll-{partition}".encode(), value=b"1", partition=partition)
            assert producer.flush(10) == 0
        return app

    return seed


def clients(bootstrap_servers: str, app: str):
    from streams_runtime.kafka.clients import create_admin, create_consumer

    return create_admin(bootstrap_servers), create_consumer(bootstrap_servers, f"{app}-check", EOF_OVERRIDES)


def test_should_measure_superseded_records_and_live_keys(bootstrap_servers, seeded_app) -> None:
    app = seeded_app()
    admin, consumer = clients(bootstrap_servers, app)
    try:
        report = check_changelogs(
            admin, consumer, app, threshold=0.5, embedded=False, store_key_counts={"counts": 9}
        )
    finally:
        consumer.close()
    [stats] = report.topics
    assert (stats.records, stats.distinct_keys, stats.live_keys, stats.tombstones) == (52, 10, 8, 2)
    assert stats.superseded == 42 and stats.cleanup_policy == "compact"
    assert report.failed  # a broker that compacts should not keep 80% superseded records
    assert any("compaction is not keeping up" in p for p in stats.problems)
    assert any("the store holds 9 keys but the changelog has 8 live keys" in p for p in stats.problems)
    assert "superseded 42 = 80.8%" in report.render()


def test_should_say_plainly_that_the_embedded_broker_never_compacts(bootstrap_servers, seeded_app) -> None:
    app = seeded_app()
    admin, consumer = clients(bootstrap_servers, app)
    try:
        report = check_changelogs(admin, consumer, app, threshold=0.5, embedded=True)
    finally:
        consumer.close()
    assert not report.failed
    assert report.render().splitlines()[1] == f"NOTE: {EMBEDDED_NOTE}"
    assert "NEVER compacts" in report.render()


@pytest.mark.tansu_only
def test_dag_reports_passes_on_tansu_and_fails_above_threshold_or_on_a_delete_policy(
    run_dag, kafka_conn, seeded_app
) -> None:
    app = seeded_app()
    passed = run_dag(DAG_ID, application_id=app)
    assert passed.state == "success", passed.task_states()
    report = passed.xcom("check_changelogs")
    assert report["embedded_broker"] is True and report["failed"] is False
    assert "never compacts" in report["notes"][0].lower()
    assert report["topics"][0]["superseded_ratio"] == pytest.approx(42 / 52, abs=1e-4)

    failed = run_dag(DAG_ID, application_id=app, fail_on_embedded=True)
    assert failed.task_states() == {"check_changelogs": "failed"}

    deleting = run_dag(DAG_ID, application_id=seeded_app(policy="delete"), max_superseded_ratio=1.0)
    assert deleting.task_states() == {"check_changelogs": "failed"}


@pytest.mark.kafka_only
def test_dag_passes_once_apache_kafka_has_compacted_the_changelog(run_dag, kafka_conn, seeded_app) -> None:
    """The same seed as above fails the check while uncompacted (the module test); here Apache
    Kafka compacts it within seconds and the DAG passes, with nothing about an embedded broker."""
    app = seeded_app(compact_soon=True)

    def compacted() -> dict | None:
        run = run_dag(DAG_ID, application_id=app)
        return run.xcom("check_changelogs") if run.state == "success" else None

    deadline = time.monotonic() + 60
    while (report := compacted()) is None:
        assert time.monotonic() < deadline, "Apache Kafka did not compact the changelog within 60 s"
        time.sleep(2)
    assert report["embedded_broker"] is False and report["failed"] is False and not report["notes"]
    [topic] = report["topics"]
    # what compaction keeps: the latest of each of the 10 seeded keys (the 2 tombstones until
    # delete.retention.ms has passed and the cleaner ran again) and the 2 records that rolled
    assert topic["live_keys"] == 8 + 2, topic
    assert topic["superseded_ratio"] < 0.5, topic

    deleting = run_dag(DAG_ID, application_id=seeded_app(policy="delete"), max_superseded_ratio=1.0)
    assert deleting.task_states() == {"check_changelogs": "failed"}
