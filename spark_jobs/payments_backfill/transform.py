"""Pure DataFrame functions of the payments backfill: what the stream application computes.

The input is the demo's topic of payments keyed by user (``streams_runtime.demo.app``), each value
the JSON ``{"payment_id": int, "user": str, "amount": number}``. The stream application keeps each
user's count and total of every payment so far (``group_by_key().aggregate(...)``, no windows).
The backfill recomputes that spend per user and tumbling window of record time, as Kafka Streams'
``groupByKey().windowedBy(TimeWindows.ofSizeWithNoGrace(size)).aggregate(...)`` would: windows
are aligned to the epoch, half-open ``[start, start + size)``, a record at ``t`` falls in the one
window with ``start = t - t mod size``. Summed over an interval's windows, a user's counts and
totals are what the stream's count and total for that user grew by through the interval's records.

This module recomputes that from the raw records. No I/O and no session state: every function maps
DataFrames to DataFrames, so a test checks it on a hand-made input and the job composes them as
``windowed_spend(in_interval(parse_payments(raw), start, end), size)``.

Amounts are parsed as ``decimal(18, 2)`` (cents are exact, sums do not depend on the order Spark
adds them in). A value that is not JSON, or lacks a field, keeps its row with nulls: the
expectation suite, not the transform, decides whether that is acceptable -- so bad records fail
the run instead of silently vanishing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType, LongType, StringType, StructField, StructType

__all__ = [
    "AMOUNT_TYPE",
    "HOUR_MS",
    "OUTPUT_COLUMNS",
    "PAYMENT_SCHEMA",
    "in_interval",
    "parse_payments",
    "window_start_ms",
    "windowed_spend",
]

HOUR_MS = 3_600_000

#: Cents exact; Spark sums ``decimal(18, 2)`` into ``decimal(28, 2)``, room for 10**10 maximal payments.
AMOUNT_TYPE = DecimalType(18, 2)

#: The JSON value of a payment record.
PAYMENT_SCHEMA = StructType(
    [
        StructField("payment_id", LongType()),
        StructField("user", StringType()),
        StructField("amount", AMOUNT_TYPE),
    ]
)

#: Columns of :func:`windowed_spend`'s result, in order.
OUTPUT_COLUMNS = ["user", "window_start", "window_end", "count", "total_amount"]


def parse_payments(records: DataFrame) -> DataFrame:
    """Kafka rows (``key, value, ..., timestamp``) -> payments.

    :returns: ``payment_id, user, amount, timestamp, partition, offset`` -- one row per input row;
        ``timestamp`` is the record timestamp (event time, as the stream application uses it).
    """
    payment = F.from_json(F.col("value").cast("string"), PAYMENT_SCHEMA)
    return records.select(
        payment["payment_id"].alias("payment_id"),
        payment["user"].alias("user"),
        payment["amount"].alias("amount"),
        F.col("timestamp"),
        F.col("partition"),
        F.col("offset"),
    )


def in_interval(df: DataFrame, start_ms: int, end_ms: int, column: str = "timestamp") -> DataFrame:
    """Rows whose ``column`` (a timestamp) lies in ``[start_ms, end_ms)`` epoch milliseconds."""
    millis = F.unix_millis(F.col(column))
    return df.where((millis >= F.lit(start_ms)) & (millis < F.lit(end_ms)))


def window_start_ms(timestamp: Column, size_ms: int) -> Column:
    """Epoch-aligned start (ms) of the tumbling window of ``size_ms`` holding ``timestamp``."""
    millis = F.unix_millis(timestamp)
    return millis - F.pmod(millis, F.lit(size_ms))


def windowed_spend(payments: DataFrame, size_ms: int = HOUR_MS, keys: Sequence[str] = ()) -> DataFrame:
    """Per user and tumbling window: how many payments and how much they add up to.

    :param payments: rows with ``user``, ``amount`` and ``timestamp`` (see :func:`parse_payments`).
    :param size_ms: the window size in milliseconds (one hour by default).
    :param keys: columns of ``payments`` to group by before the user (a batch of intervals groups
        by its interval number, so a window cut by an interval bound stays cut, as when each
        interval runs alone); they lead the result's columns.
    :returns: ``user, window_start, window_end, count, total_amount`` (timestamps, UTC), sorted by
        user and window start; ``count`` is a long and ``total_amount`` a ``decimal(28, 2)``, null
        when any payment of the group has no amount.
    :raises ValueError: for a window size that is not positive.
    """
    if size_ms <= 0:
        raise ValueError(f"window size must be positive, got {size_ms} ms")
    start = window_start_ms(F.col("timestamp"), size_ms)
    return (
        payments.withColumn("_window_start_ms", start)
        .groupBy(*keys, "user", "_window_start_ms")
        .agg(
            F.count(F.lit(1)).alias("count"),
            # a payment without an amount makes the whole total unknown (null), never smaller
            F.when(F.count("amount") == F.count(F.lit(1)), F.sum("amount")).alias("total_amount"),
        )
        .select(
            *keys,
            F.col("user"),
            F.timestamp_millis(F.col("_window_start_ms")).alias("window_start"),
            F.timestamp_millis(F.col("_window_start_ms") + F.lit(size_ms)).alias("window_end"),
            F.col("count"),
            F.col("total_amount"),
        )
        .orderBy(*keys, "user", "window_start")
    )
