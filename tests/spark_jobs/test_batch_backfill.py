"""Several intervals in one Spark session and one read (the backfill task's job), and the offset
planning by time it uses."""

from __future__ import annotations

import pytest

from spark_jobs.kafka_source import plan_ranges
from spark_jobs.kafka_source.by_time import BY_TIMESTAMP, SCAN, plan_ranges_for_times
from spark_jobs.payments_backfill.batch import run_backfill_intervals, tiled
from spark_jobs.payments_backfill.main import run_backfill
from tests.spark_jobs.conftest import Record
from tests.spark_jobs.test_payments_backfill import (
    T0,
    H,
    as_tuples,
    expected,
    payments,
    published_rows,
)
from tests.spark_jobs.test_transactional_publish import read_to_end

pytestmark = [pytest.mark.spark, pytest.mark.kafka]


def test_a_batch_gives_each_interval_what_running_it_alone_gives(
    spark, make_topic, bootstrap_servers, tmp_path
) -> None:
    records = payments()  # T0 - 1h .. T0 + 7h
    bad = Record(0, b"mallory", {"payment_id": 999, "user": "mallory", "amount": -5.0}, T0 + 2 * H + 1)
    topic = make_topic("batch", 3, [*records, bad])
    intervals = [(T0 + i * H, T0 + (i + 1) * H) for i in range(3)] + [(T0 + 20 * H, T0 + 21 * H)]

    batch = run_backfill_intervals(bootstrap_servers, topic, tmp_path / "batch", intervals, spark=spark)

    statuses = [o["status"] for o in batch["intervals"]]
    assert statuses == ["passed", "passed", "failed", "empty"], statuses
    assert (batch["read"]["way"], batch["read"]["reader"]) in ((SCAN, "kafka_range"), (BY_TIMESTAMP, "kafka"))
    assert batch["read"]["records_in_span"] == sum(T0 <= r.timestamp < T0 + 21 * H for r in records) + 1
    failed = batch["intervals"][2]
    assert any("total_amount" in f for f in failed["failed"]) and failed["data_docs_url"].startswith(
        "file://"
    )
    for (start, end), outcome in zip(intervals[:2], batch["intervals"], strict=False):
        written = spark.read.parquet(outcome["output_path"])
        assert as_tuples(written) == expected(records, start, end)
    alone = run_backfill(bootstrap_servers, topic, tmp_path / "alone", *intervals[0], spark=spark)
    first = batch["intervals"][0]
    assert (first["rows"], first["source_records"]) == (alone["rows"], alone["source_records"])


def test_a_range_cut_in_chunks_is_aggregated_once_and_matches_each_interval_alone(
    spark, make_topic, bootstrap_servers, tmp_path
) -> None:
    """Contiguous intervals (a range cut in chunks, the last one shorter): the one-aggregation path.
    90-minute intervals cut hourly windows in two, as running each interval alone does."""
    records = payments()  # T0 - 1h .. T0 + 7h
    bad = Record(1, b"mallory", {"payment_id": 999, "user": "mallory", "amount": -5.0}, T0 + 3 * H + 1)
    topic = make_topic("grid", 3, [*records, bad])
    spend = make_topic("grid-spend", 1)
    step = 90 * 60_000
    intervals = [(T0 + i * step, T0 + (i + 1) * step) for i in range(6)] + [
        (T0 + 6 * step, T0 + 6 * step + H)
    ]
    assert tiled(intervals) == (T0, step) and tiled([intervals[0], intervals[2]]) is None

    batch = run_backfill_intervals(bootstrap_servers, topic, tmp_path / "grid", intervals, spend, spark=spark)

    statuses = [o["status"] for o in batch["intervals"]]
    assert statuses == ["passed", "passed", "failed", "passed", "passed", "empty", "empty"], statuses
    assert set(batch["read"]["timings_s"]) == {"read_s", "aggregate_s", "validate_s", "write_s", "publish_s"}
    failed = batch["intervals"][2]
    assert (
        any("total_amount" in f for f in failed["failed"])
        and "FAILED" in open(failed["report_summary"]).read()
    )
    published = {}
    for (start, end), outcome in zip(intervals, batch["intervals"], strict=True):
        if outcome["status"] != "passed":
            continue
        want = expected(records, start, end)
        assert outcome["source_records"] == sum(w[3] for w in want)
        assert as_tuples(spark.read.parquet(outcome["output_path"])) == want
        assert outcome["published"] == len(want) and outcome["data_docs_url"].startswith("file://")
        published[outcome["interval_id"]] = want
    written = {p.name.split("=", 1)[1] for p in (tmp_path / "grid").glob("interval_id=*")}
    assert written == set(published), "only intervals whose suite passed are written"
    committed = read_to_end(bootstrap_servers, spend, committed=True)
    assert published_rows(committed) == sorted(row for rows in published.values() for row in rows)
    # the same interval alone: same rows, and its publish is skipped (the batch's marker holds them)
    alone = run_backfill(bootstrap_servers, topic, tmp_path / "grid", *intervals[1], spend, spark=spark)
    assert alone["rows"] == batch["intervals"][1]["rows"] and alone["publish_skipped"] is True


def test_planning_by_time_reads_only_the_span_where_the_broker_can(make_topic, bootstrap_servers) -> None:
    """Apache Kafka: offsets_for_times skips what comes before the range and, given a maximum
    lateness, what comes after it; Tansu: the whole partition to its true end."""
    records = payments()
    topic = make_topic("bytime", 3, records)
    whole = plan_ranges(bootstrap_servers, topic)
    planned, way = plan_ranges_for_times(bootstrap_servers, topic, T0 + H, T0 + 2 * H)
    bounded, _ = plan_ranges_for_times(bootstrap_servers, topic, T0 + H, T0 + 2 * H, max_lateness_ms=0)
    assert sum(r.size for r in whole) == len(records)
    if way == SCAN:
        assert planned == whole and bounded == whole
    else:
        before = sum(r.timestamp < T0 + H for r in records)  # timestamps rise within each partition
        assert sum(r.size for r in planned) == len(records) - before
        assert [r.end for r in planned] == [r.end for r in whole], "read on to the end: late records"
        inside = sum(T0 + H <= r.timestamp < T0 + 2 * H for r in records)
        assert sum(r.size for r in bounded) == inside
