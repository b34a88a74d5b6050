"""The ``kafka_range`` data source against the embedded broker: exact counts, checksums, edges."""

from __future__ import annotations

import json
import zlib

import pytest
from pyspark.sql import functions as F

from spark_jobs.kafka_source import FORMAT, plan_ranges
from tests.spark_jobs.conftest import Record

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

BASE_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
PER_PARTITION = {0: 700, 1: 450, 2: 1}  # partition 3 stays empty


def _records() -> list[Record]:
    records = []
    for partition, n in PER_PARTITION.items():
        for i in range(n):
            records.append(
                Record(partition, f"k{partition}-{i}".encode(), f"v{partition}-{i}".encode(), BASE_MS + i)
            )
    return records


def _load(spark, bootstrap_servers: str, topic: str, **options: str):
    reader = spark.read.format(FORMAT).option("bootstrap_servers", bootstrap_servers).option("topic", topic)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def test_should_plan_true_end_offsets_one_range_per_partition(bootstrap_servers, make_topic):
    topic = make_topic("source-plan", partitions=4, records=_records())

    ranges = plan_ranges(bootstrap_servers, topic)

    assert [(r.partition, r.start, r.end) for r in ranges] == [(0, 0, 700), (1, 0, 450), (2, 0, 1), (3, 0, 0)]


def test_should_read_every_record_of_a_multi_partition_topic_exactly_once(
    spark, bootstrap_servers, make_topic
):
    records = _records()
    topic = make_topic("source-all", partitions=4, records=records)

    df = _load(spark, bootstrap_servers, topic)
    summary = (
        df.groupBy("partition")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.countDistinct("offset").alias("distinct_offsets"),
            F.min("offset").alias("first"),
            F.max("offset").alias("last"),
            F.sum(F.crc32("value")).alias("value_crc"),
            F.sum(F.crc32("key")).alias("key_crc"),
            F.min(F.unix_millis("timestamp")).alias("first_ts"),
            F.countDistinct("topic").alias("topics"),
        )
        .orderBy("partition")
        .collect()
    )

    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp>"
    )
    by_partition = {row["partition"]: row for row in summary}
    assert set(by_partition) == {0, 1, 2}, "the empty partition 3 yields no rows"
    for partition, n in PER_PARTITION.items():
        row = by_partition[partition]
        mine = [r for r in records if r.partition == partition]
        assert (row["n"], row["distinct_offsets"], row["first"], row["last"]) == (n, n, 0, n - 1)
        assert row["value_crc"] == sum(zlib.crc32(r.value) for r in mine)
        assert row["key_crc"] == sum(zlib.crc32(r.key) for r in mine)
        assert row["first_ts"] == BASE_MS and row["topics"] == 1


def test_should_read_explicit_ranges_and_nothing_beyond_the_end(spark, bootstrap_servers, make_topic):
    topic = make_topic("source-ranges", partitions=4, records=_records())

    df = _load(
        spark,
        bootstrap_servers,
        topic,
        # 0: inside; 1: starts beyond the end; 2: ends beyond the end; 3: empty partition, any range
        starting_offsets=json.dumps({"0": 100, "1": 5_000, "2": 0, "3": 0}),
        ending_offsets=json.dumps({"0": 110, "1": 9_000, "2": 1_000, "3": 50}),
    )
    got = sorted((row["partition"], row["offset"]) for row in df.select("partition", "offset").collect())

    assert got == [(0, o) for o in range(100, 110)] + [(2, 0)]


def test_should_keep_only_records_in_the_timestamp_range(spark, bootstrap_servers, make_topic):
    topic = make_topic("source-time", partitions=4, records=_records())

    df = _load(
        spark,
        bootstrap_servers,
        topic,
        starting_timestamp=str(BASE_MS + 10),
        ending_timestamp=str(BASE_MS + 20),
    )
    counts = dict(df.groupBy("partition").count().collect())

    assert counts == {0: 10, 1: 10}


def test_should_refuse_a_missing_topic_and_bad_options(spark, bootstrap_servers, unique_name):
    with pytest.raises(ValueError, match="does not exist"):
        plan_ranges(bootstrap_servers, unique_name("missing"))
    with pytest.raises(Exception, match="starting_offsets: not JSON"):
        _load(spark, bootstrap_servers, "any", starting_offsets="{0: 1").count()
