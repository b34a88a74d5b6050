"""The backfill's pure transform on a tiny hand-computed dataset: the exact known answer."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

from spark_jobs.kafka_source import SPARK_SCHEMA
from spark_jobs.payments_backfill.transform import OUTPUT_COLUMNS, in_interval, parse_payments, windowed_spend

pytestmark = pytest.mark.spark

H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def kafka_rows(spark, payments: list[tuple[int, object]]):
    """(timestamp ms, value) pairs -> a DataFrame shaped like the data source's output."""
    rows = []
    for offset, (ts, value) in enumerate(payments):
        raw = value if isinstance(value, bytes) else json.dumps(value).encode()
        rows.append((None, raw, "payments", 0, offset, at(ts)))
    return spark.createDataFrame(rows, SPARK_SCHEMA)


def as_millis(result):
    """Window bounds as epoch ms (collected timestamps would be naive local times)."""
    return result.select(
        "user", F.unix_millis("window_start"), F.unix_millis("window_end"), "count", "total_amount"
    )


def pay(pid: int, user: str | None, amount) -> dict:
    return {"payment_id": pid, "user": user, "amount": amount}


def test_should_compute_per_user_tumbling_window_spend_exactly(spark):
    raw = kafka_rows(
        spark,
        [
            (T0 + 0, pay(1, "alice", 0.10)),
            (T0 + 59 * 60_000, pay(2, "alice", 0.20)),  # same hour: 0.10 + 0.20 is exactly 0.30
            (T0 + H - 1, pay(3, "bob", 5)),  # the last millisecond of the first window
            (T0 + H, pay(4, "bob", 7.25)),  # a window's end is exclusive: the next window
            (T0 + H + 1, pay(5, "alice", 99.99)),
            (T0 + 3 * H + 5, pay(6, "carol", 1.5)),  # outside the interval below
            (T0 - 1, pay(7, "alice", 1000)),  # before the interval
        ],
    )

    result = windowed_spend(in_interval(parse_payments(raw), T0, T0 + 2 * H), size_ms=H)
    got = [tuple(row) for row in as_millis(result).collect()]

    assert result.columns == OUTPUT_COLUMNS
    assert got == [
        ("alice", T0, T0 + H, 2, Decimal("0.30")),
        ("alice", T0 + H, T0 + 2 * H, 1, Decimal("99.99")),
        ("bob", T0, T0 + H, 1, Decimal("5.00")),
        ("bob", T0 + H, T0 + 2 * H, 1, Decimal("7.25")),
    ]


def test_should_keep_bad_records_visible_as_nulls_for_the_suite(spark):
    raw = kafka_rows(
        spark,
        [
            (T0, pay(1, None, 3)),  # no user
            (T0, b"not json"),  # unreadable: every field null
            (T0, pay(2, "dave", None)),  # no amount: the total is unknown, not smaller
            (T0, pay(3, "dave", 4)),
        ],
    )

    rows = windowed_spend(parse_payments(raw)).collect()
    got = sorted((row["user"] or "", row["count"], row["total_amount"]) for row in rows)

    assert got == [("", 2, None), ("dave", 2, None)]


def test_should_refuse_a_non_positive_window(spark):
    with pytest.raises(ValueError, match="window size must be positive"):
        windowed_spend(parse_payments(kafka_rows(spark, [])), size_ms=0)
