"""Spark's own Kafka connector (``format("kafka")``) as the backfills use it on Apache Kafka:
exactly the interval's records, late ones included, and no failure when a partition that held
nothing of the interval when planned gets a record before Spark reads
(:mod:`spark_jobs.kafka_source.connector`, docs/decisions/0011-spark-kafka-connector.md)."""

from __future__ import annotations

import pytest

from spark_jobs.kafka_source.by_time import BY_TIMESTAMP, plan_ranges_for_times
from spark_jobs.kafka_source.connector import connector_loaded, read_by_timestamp
from spark_jobs.payments_backfill.main import read_ranges
from tests.spark_jobs.conftest import Record, produce

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.kafka_only]

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def pay(i: int) -> dict:
    return {"payment_id": i, "user": f"user-{i % 3}", "amount": 1.0 + i}


def test_the_connector_reads_exactly_the_interval_late_records_included(
    spark, make_topic, bootstrap_servers
) -> None:
    records = [
        Record(0, b"a", pay(0), T0 - 1),  # before the interval
        Record(0, b"a", pay(1), T0),  # its first millisecond
        Record(0, b"a", pay(2), T0 + H),  # the end is exclusive
        Record(0, b"a", pay(3), T0 + 10),  # late: after a record past the end, still in the interval
        Record(1, b"b", pay(4), T0 - 5),  # partition 1: nothing in the interval when planned
        Record(2, b"c", pay(5), T0 + H - 1),  # its last millisecond
    ]
    topic = make_topic("connector", 3, records)
    ranges, way = plan_ranges_for_times(bootstrap_servers, topic, T0, T0 + H)
    assert way == BY_TIMESTAMP and connector_loaded(spark)
    assert [(r.partition, r.start, r.end) for r in ranges] == [(0, 1, 4), (1, 1, 1), (2, 0, 1)]
    # after planning, partition 1 gets a record of the interval: Spark must not start it past its end
    produce(bootstrap_servers, topic, [Record(1, b"b", pay(6), T0 + 30)])

    df = read_ranges(spark, bootstrap_servers, topic, ranges, T0, T0 + H, way)

    assert "kafka" in df._jdf.queryExecution().analyzed().toString().lower()  # the JVM source read
    rows = sorted((r.partition, r.offset, r.key) for r in df.collect())
    assert rows == [(0, 1, b"a"), (0, 3, b"a"), (2, 0, b"c")]
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp>"
    )


def test_nothing_to_read_is_an_empty_frame_without_a_read(spark, make_topic, bootstrap_servers) -> None:
    topic = make_topic("connector-empty", 2, [Record(0, b"a", pay(0), T0 - 1)])
    ranges, _ = plan_ranges_for_times(bootstrap_servers, topic, T0, T0 + H)
    assert all(r.size == 0 for r in ranges)
    assert read_by_timestamp(spark, bootstrap_servers, topic, ranges, T0, T0 + H).count() == 0


def test_a_missing_connector_names_the_setup_command(tmp_path, monkeypatch) -> None:
    from spark_jobs.session import CONNECTOR_ENV, connector_jars

    monkeypatch.setenv(CONNECTOR_ENV, str(tmp_path))
    jars, why = connector_jars()
    assert jars == [] and "make setup-spark-kafka" in why and CONNECTOR_ENV in why
