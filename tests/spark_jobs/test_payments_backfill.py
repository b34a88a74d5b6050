"""The payments backfill end to end against the embedded broker and the shared SparkSession."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from spark_jobs.kafka_source import FORMAT, plan_ranges
from spark_jobs.payments_backfill.main import BackfillValidationError, main, run_backfill
from tests.spark_jobs.conftest import Record

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
USERS = ["user-0", "user-1", "user-2", "user-3"]


def payments(n: int = 160, seed: int = 7) -> list[Record]:
    """Payments every 3 minutes from ``T0 - 1h`` on (8 hours), keyed by user, 3 partitions."""
    rng = random.Random(seed)
    records = []
    for i in range(n):
        user = rng.choice(USERS)
        value = {"payment_id": i, "user": user, "amount": round(rng.uniform(1, 100), 2)}
        records.append(Record(USERS.index(user) % 3, user.encode(), value, T0 - H + i * 180_000))
    return records


def expected(records: list[Record], start: int, end: int) -> list[tuple]:
    """The known answer, computed by hand in Python: (user, window_start, window_end, count, total)."""
    groups: dict[tuple[str, int], list[Decimal]] = defaultdict(list)
    for r in records:
        if start <= r.timestamp < end:
            groups[(r.value["user"], r.timestamp - r.timestamp % H)].append(Decimal(str(r.value["amount"])))
    return sorted((u, w, w + H, len(a), sum(a, Decimal("0.00"))) for (u, w), a in groups.items())


def as_tuples(df) -> list[tuple]:
    cols = ["user", F.unix_millis("window_start"), F.unix_millis("window_end"), "count", "total_amount"]
    return sorted(tuple(row) for row in df.select(*cols).collect())


def read_published(spark, bootstrap_servers: str, topic: str) -> list[dict]:
    df = (
        spark.read.format(FORMAT).option("bootstrap_servers", bootstrap_servers).option("topic", topic).load()
    )
    return [json.loads(row["value"]) for row in df.select("value").collect()]


def test_should_backfill_an_interval_to_parquet_publish_it_and_overwrite_it_on_rerun(
    spark, bootstrap_servers, make_topic, tmp_path
):
    records = payments()
    topic = make_topic("payments", partitions=3, records=records)
    spend = make_topic("spend", partitions=1)
    out = tmp_path / "spend"
    first, second = (T0, T0 + 2 * H), (T0 + 2 * H, T0 + 4 * H)

    result = run_backfill(bootstrap_servers, topic, out, *first, publish_topic=spend, spark=spark)

    want = expected(records, *first)
    assert result["status"] == "passed"
    assert result["source_records"] == sum(w[3] for w in want) == 40
    assert result["rows"] == len(want) and result["published"] == len(want)
    assert as_tuples(spark.read.parquet(result["output_path"])) == want
    published = read_published(spark, bootstrap_servers, spend)
    assert (
        sorted(
            (p["user"], p["window_start"], p["window_end"], p["count"], Decimal(str(p["total_amount"])))
            for p in published
        )
        == want
    )
    report = json.loads(Path(result["report_json"]).read_text())
    assert report["success"] is True and report["run"]["source_records"] == 40
    assert "PASSED" in Path(result["report_summary"]).read_text()

    other = run_backfill(
        bootstrap_servers, topic, out, "2024-01-01T02:00:00Z", "2024-01-01T04:00:00+00:00", spark=spark
    )
    again = run_backfill(bootstrap_servers, topic, str(out), *first, spark=spark)

    assert other["interval_id"] == "20240101T020000Z_20240101T040000Z"
    assert again["rows"] == result["rows"] and again["output_path"] == result["output_path"]
    everything = spark.read.parquet(str(out))
    per_interval = dict(everything.groupBy("interval_id").count().collect())
    assert per_interval == {
        result["interval_id"]: len(want),
        other["interval_id"]: len(expected(records, *second)),
    }
    assert as_tuples(everything.where(F.col("interval_id") == result["interval_id"])) == want
    assert len(read_published(spark, bootstrap_servers, spend)) == len(want), (
        "runs without publish_topic published nothing"
    )
    assert Path(other["report_json"]).exists() and Path(again["report_json"]).exists(), (
        "reports survive overwrites"
    )


def test_should_fail_the_suite_on_bad_records_publish_nothing_and_leave_the_report(
    spark, bootstrap_servers, make_topic, tmp_path, capsys
):
    bad = [
        Record(0, b"nobody", {"payment_id": 900, "user": None, "amount": 10}, T0 + 60_000),
        Record(1, b"mallory", {"payment_id": 901, "user": "mallory", "amount": -50}, T0 + 120_000),
    ]
    topic = make_topic("payments-bad", partitions=3, records=payments() + bad)
    spend = make_topic("spend-bad", partitions=1)
    out, reports = tmp_path / "spend", tmp_path / "reports"
    argv = ["--bootstrap-servers", bootstrap_servers, "--topic", topic, "--output-dir", str(out)]
    argv += ["--interval-start", "2024-01-01T00:00:00Z", "--interval-end", str(T0 + 2 * H)]
    argv += ["--publish-topic", spend, "--report-dir", str(reports)]

    code = main(argv)

    printed = json.loads(capsys.readouterr().out)
    assert code == 2 and printed["status"] == "failed"
    assert any("not_be_null(column=user)" in f for f in printed["failed"]), printed["failed"]
    assert any("between(column=total_amount" in f for f in printed["failed"]), printed["failed"]
    report = json.loads((reports / "validation.json").read_text())
    assert report["success"] is False and report["run"]["source_records"] == 42
    assert "FAILED" in (reports / "summary.md").read_text()
    assert [r.end for r in plan_ranges(bootstrap_servers, spend)] == [0], "nothing was published"
    assert not out.exists(), "nothing was written"


def test_should_refuse_a_missing_publish_topic_or_an_empty_interval_before_reading(
    bootstrap_servers, unique_name, tmp_path
):
    with pytest.raises(ValueError, match="does not exist"):
        run_backfill(bootstrap_servers, "any", tmp_path, T0, T0 + H, publish_topic=unique_name("nowhere"))
    with pytest.raises(ValueError, match="empty interval"):
        run_backfill(bootstrap_servers, "any", tmp_path, T0 + H, T0)
    assert issubclass(BackfillValidationError, RuntimeError)  # what the Airflow operator catches
