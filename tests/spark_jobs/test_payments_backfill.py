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
from spark_jobs.payments_backfill import main as backfill_main
from spark_jobs.payments_backfill.main import BackfillValidationError, main, run_backfill
from spark_jobs.payments_backfill.publish import PublishError, read_marker
from tests.spark_jobs.conftest import Record, produce
from tests.spark_jobs.test_transactional_publish import by_attempt, read_to_end

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
    spark, bootstrap_servers, make_topic, tmp_path, broker_kind
):
    records = payments()
    topic = make_topic("payments", partitions=3, records=records)
    spend = make_topic("spend", partitions=1)
    out = tmp_path / "spend"
    first, second = (T0, T0 + 2 * H), (T0 + 2 * H, T0 + 4 * H)

    result = run_backfill(bootstrap_servers, topic, out, *first, publish_topic=spend, spark=spark)

    want = expected(records, *first)
    assert result["status"] == "passed"
    # Spark's Kafka connector where the broker answers offsets by time, the Python source on Tansu
    assert result["reader"] == {"kafka": "kafka", "tansu": "kafka_range"}[broker_kind]
    assert result["source_records"] == sum(w[3] for w in want) == 40
    assert result["rows"] == len(want) and result["published"] == len(want)
    assert result["publish_skipped"] is False
    assert result["transactional_id"] == f"spark-backfill.payments_backfill.{spend}.{result['interval_id']}"
    committed = by_attempt(read_to_end(bootstrap_servers, spend, committed=True))
    assert list(committed) == [result["publish_id"]] and len(committed[result["publish_id"]]) == len(want)
    marker = read_marker(Path(result["publish_marker"]))
    assert marker["publish_id"] == result["publish_id"] and marker["records"] == len(want)
    assert marker["source_offsets"] == result["source_offsets"]
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


def published_rows(messages) -> list[tuple]:
    return sorted(
        (p["user"], p["window_start"], p["window_end"], p["count"], Decimal(str(p["total_amount"])))
        for p in (json.loads(m.value()) for m in messages)
    )


def test_should_skip_an_unchanged_rerun_and_publish_a_changed_or_forced_one_in_a_new_transaction(
    spark, bootstrap_servers, make_topic, tmp_path
):
    records = payments()
    topic = make_topic("payments-rerun", partitions=3, records=records)
    spend = make_topic("spend-rerun", partitions=1)
    out, interval = tmp_path / "spend", (T0, T0 + 2 * H)

    first = run_backfill(bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark)
    # new input outside the interval moves the input offsets but not the result: still skipped
    produce(
        bootstrap_servers,
        topic,
        [Record(0, b"user-0", {"payment_id": 500, "user": "user-0", "amount": 5.0}, T0 + 5 * H)],
    )
    rerun = run_backfill(bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark)

    assert rerun["publish_skipped"] is True and rerun["published"] == 0
    assert rerun["publish_id"] == first["publish_id"] and rerun["source_offsets"] != first["source_offsets"]
    assert len(read_to_end(bootstrap_servers, spend, committed=True)) == first["published"]

    forced = run_backfill(
        bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark, force_publish=True
    )
    late = Record(1, b"user-1", {"payment_id": 501, "user": "user-1", "amount": 7.5}, T0 + 60_000)
    produce(bootstrap_servers, topic, [late])
    changed = run_backfill(bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark)

    assert forced["publish_skipped"] is False and forced["published"] == first["published"]
    assert changed["publish_skipped"] is False
    assert len({first["transactional_id"], forced["transactional_id"], changed["transactional_id"]}) == 1
    attempts = by_attempt(read_to_end(bootstrap_servers, spend, committed=True))
    assert list(attempts) == [first["publish_id"], forced["publish_id"], changed["publish_id"]]
    assert sorted(attempts[forced["publish_id"]]) == sorted(attempts[first["publish_id"]])
    messages = read_to_end(bootstrap_servers, spend, committed=True)
    newest = [
        m for m in messages if dict(m.headers())["backfill.publish_id"].decode() == changed["publish_id"]
    ]
    assert published_rows(newest) == expected(records + [late], *interval)
    assert read_marker(Path(changed["publish_marker"]))["publish_id"] == changed["publish_id"]


def test_should_commit_nothing_and_write_no_marker_when_the_publish_fails_midway_then_publish_once(
    spark, bootstrap_servers, make_topic, tmp_path, monkeypatch
):
    """A failure injected after 3 records: the transaction is aborted, the task fails with
    PublishError and no marker; the retried run (same transactional.id) publishes every row once."""
    records = payments()
    topic = make_topic("payments-fail", partitions=3, records=records)
    spend = make_topic("spend-fail", partitions=1)
    out, interval = tmp_path / "spend", (T0, T0 + 2 * H)
    real = backfill_main.publish_transactionally

    def failing_after_three(bootstrap, target, rows, txn_id, **kwargs):
        def rows_then_failure():
            for i, row in enumerate(rows):
                if i == 3:
                    raise OSError("injected: executor lost mid-publish")
                yield row

        return real(bootstrap, target, rows_then_failure(), txn_id, **kwargs)

    monkeypatch.setattr(backfill_main, "publish_transactionally", failing_after_three)
    with pytest.raises(PublishError, match="injected") as failed:
        run_backfill(bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark)
    monkeypatch.setattr(backfill_main, "publish_transactionally", real)

    assert failed.value.aborted and failed.value.sent == 3
    assert not (out / "_published").exists(), "no marker for an aborted publish"
    assert read_to_end(bootstrap_servers, spend, committed=True) == [] or set(
        by_attempt(read_to_end(bootstrap_servers, spend, committed=True))
    ) == {failed.value.publish_id}
    retry = run_backfill(bootstrap_servers, topic, out, *interval, publish_topic=spend, spark=spark)

    assert retry["transactional_id"] == failed.value.transactional_id
    committed = [
        m
        for m in read_to_end(bootstrap_servers, spend, committed=True)
        if dict(m.headers())["backfill.publish_id"].decode() == retry["publish_id"]
    ]
    assert published_rows(committed) == expected(records, *interval)
