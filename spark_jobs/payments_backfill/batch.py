"""Several intervals in one Spark session and one read: what a backfill task runs.

:func:`run_backfill_intervals` plans the offsets of the whole span ``[first start, last end)``
once (by timestamp on Apache Kafka, a scan bounded by the true end on Tansu:
:mod:`spark_jobs.kafka_source.by_time`), reads and parses those records once into Spark's
memory, then runs every interval through :func:`~spark_jobs.payments_backfill.main.run_backfill`
on that cached source: count, transform, validate, write, publish, interval by interval, each with
its own report, Parquet partition and publish transaction, exactly as if run alone. A failed suite
does not stop the intervals after it; the caller sees every outcome.

When the intervals tile a grid (contiguous, in order, all of one length but the last, which may
be shorter: what a range cut in chunks is), the batch does not filter the cached records once per
interval. Each record gets its interval's number, and ONE aggregation groups by (interval, user,
window): a window cut by an interval bound stays cut, exactly as when the interval runs alone.
The result (users x windows, small) is collected once; each interval's slice is validated in
pandas with its own report and Data Docs; the intervals whose suite passed are written in ONE
Parquet write (dynamic partition overwrite: one ``interval_id=`` directory each, the others left
alone), then published one transaction per interval. Other interval lists run interval by
interval on the cached records.

Compared with one task (and one JVM) per interval, a week of hourly intervals costs one session
start, one read of the topic and a handful of Spark jobs instead of 168 of each.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.kafka_source import OffsetRange
from spark_jobs.kafka_source.by_time import plan_ranges_for_times
from spark_jobs.payments_backfill.expectations import validate_windowed_spend
from spark_jobs.payments_backfill.main import (
    PARTITION_COLUMN,
    BackfillValidationError,
    _publish,
    interval_id,
    read_ranges,
    reader_of,
    run_backfill,
    to_epoch_ms,
)
from spark_jobs.payments_backfill.transform import (
    HOUR_MS,
    OUTPUT_COLUMNS,
    in_interval,
    parse_payments,
    windowed_spend,
)
from spark_jobs.session import session_or_local
from streams_runtime.kafka.clients import create_admin, partition_counts

__all__ = ["run_backfill_intervals", "tiled"]

INTERVAL = "_interval"


def run_backfill_intervals(
    bootstrap_servers: str,
    topic: str,
    output_dir: str | Path,
    intervals: Sequence[tuple[Any, Any]],
    publish_topic: str | None = None,
    *,
    window_ms: int = HOUR_MS,
    spark: SparkSession | None = None,
) -> dict[str, Any]:
    """Backfill every ``(start, end)`` of ``intervals`` (datetimes, ISO strings or epoch ms).

    :returns: ``{"read": {...}, "intervals": [...]}``; each interval's entry is
        :func:`run_backfill`'s result (``status`` ``passed`` or ``empty``) or, for a failed suite,
        ``{"status": "failed", "failed": [...], "report_json", "report_summary", "data_docs_url"}``.
    """
    bounds = [(to_epoch_ms(start), to_epoch_ms(end)) for start, end in intervals]
    if not bounds:
        raise ValueError("no intervals given")
    span_start, span_end = min(b[0] for b in bounds), max(b[1] for b in bounds)
    if publish_topic and publish_topic not in partition_counts(
        create_admin(bootstrap_servers), [publish_topic]
    ):
        raise ValueError(f"publish topic {publish_topic!r} does not exist; provision it first")
    spark = spark or session_or_local()
    ranges, way = plan_ranges_for_times(bootstrap_servers, topic, span_start, span_end)
    raw = read_ranges(spark, bootstrap_servers, topic, ranges, span_start, span_end, way)
    parsed = in_interval(parse_payments(raw), span_start, span_end)
    grid = tiled(bounds)
    if grid is not None:
        return _on_grid(
            spark,
            parsed,
            ranges,
            way,
            bounds,
            grid,
            bootstrap_servers,
            topic,
            Path(output_dir),
            publish_topic,
            window_ms,
        )
    parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        records = parsed.count()
        outcomes = []
        for start_ms, end_ms in bounds:
            try:
                outcomes.append(
                    run_backfill(
                        bootstrap_servers,
                        topic,
                        output_dir,
                        start_ms,
                        end_ms,
                        publish_topic,
                        window_ms=window_ms,
                        spark=spark,
                        source=(parsed, ranges),
                    )
                )
            except BackfillValidationError as exc:
                outcomes.append(
                    {
                        "status": "failed",
                        "interval_id": interval_id(start_ms, end_ms),
                        "interval_start_ms": start_ms,
                        "interval_end_ms": end_ms,
                        "failed": exc.failed,
                        "report_json": exc.report_json,
                        "report_summary": exc.report_summary,
                        "data_docs_url": exc.data_docs_url,
                    }
                )
    finally:
        parsed.unpersist()
    read = {
        "way": way,
        "reader": reader_of(way),
        "records_in_span": records,
        "offsets": {str(r.partition): [r.start, r.end] for r in ranges},
    }
    return {"read": read, "intervals": outcomes}


def tiled(bounds: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """``(origin, step)`` when interval ``i`` is ``[origin + i*step, origin + (i+1)*step)`` (the
    last may end earlier), else None."""
    origin, step = bounds[0][0], bounds[0][1] - bounds[0][0]
    if step <= 0:
        return None
    for i, (start, end) in enumerate(bounds):
        last = i == len(bounds) - 1
        if start != origin + i * step or not (end == start + step or (last and start < end < start + step)):
            return None
    return origin, step


def _outgoing(rows: Any) -> list[dict[str, Any]]:
    """An interval's result rows (pandas, naive UTC timestamps) as the publish step encodes them."""
    return [
        {
            "user": user,
            "window_start_ms": start.value // 1_000_000,
            "window_end_ms": end.value // 1_000_000,
            "count": count,
            "total_amount": total,
        }
        for user, start, end, count, total in rows[OUTPUT_COLUMNS].itertuples(index=False, name=None)
    ]


def _on_grid(
    spark: SparkSession,
    parsed: DataFrame,
    ranges: list[OffsetRange],
    way: str,
    bounds: Sequence[tuple[int, int]],
    grid: tuple[int, int],
    bootstrap_servers: str,
    topic: str,
    output_dir: Path,
    publish_topic: str | None,
    window_ms: int,
) -> dict[str, Any]:
    """The grid path of the module docstring: one aggregation, one collect, one write."""
    origin, step = grid
    began = time.monotonic()
    timings: dict[str, float] = {}

    def lap(step_name: str) -> None:
        nonlocal began
        now = time.monotonic()
        timings[step_name] = round(now - began, 3)
        began = now

    numbered = parsed.withColumn(
        INTERVAL, F.floor((F.unix_millis("timestamp") - F.lit(origin)) / F.lit(step)).cast("int")
    ).persist(StorageLevel.MEMORY_AND_DISK)
    result = windowed_spend(numbered, window_ms, keys=[INTERVAL]).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = {int(row[0]): int(row[1]) for row in numbered.groupBy(INTERVAL).count().collect()}
        lap("read_s")
        frame = result.toPandas()
        numbered.unpersist()
        lap("aggregate_s")
        slices = {
            int(k): part.drop(columns=INTERVAL).reset_index(drop=True) for k, part in frame.groupby(INTERVAL)
        }
        offsets = {str(r.partition): [r.start, r.end] for r in ranges}
        outcomes: list[dict[str, Any]] = []
        passed: dict[int, tuple[dict[str, Any], Any]] = {}
        for k, (start_ms, end_ms) in enumerate(bounds):
            ident = interval_id(start_ms, end_ms)
            run_meta = {
                "topic": topic,
                "interval_id": ident,
                "interval_start_ms": start_ms,
                "interval_end_ms": end_ms,
                "window_ms": window_ms,
                "source_records": counts.get(k, 0),
                "result_rows": 0,
                "source_offsets": offsets,
            }
            if not counts.get(k):
                outcomes.append({"status": "empty", **run_meta})
                continue
            rows = slices.get(k, frame.iloc[0:0].drop(columns=INTERVAL))
            run_meta["result_rows"] = len(rows)
            report = validate_windowed_spend(rows, counts[k], output_dir / "_validation" / ident, run_meta)
            outcome = {
                **run_meta,
                "report_json": str(report.report_json),
                "report_summary": str(report.report_summary),
                "data_docs_url": report.data_docs_url,
            }
            if report.success:
                outcome.update(
                    status="passed",
                    rows=len(rows),
                    publish_topic=publish_topic,
                    output_path=str(output_dir / f"{PARTITION_COLUMN}={ident}"),
                )
                passed[k] = (outcome, rows)
            else:
                outcome.update(status="failed", failed=report.failed)
            outcomes.append(outcome)
        lap("validate_s")
        if passed:
            ids = spark.createDataFrame(
                [(k, outcome["interval_id"]) for k, (outcome, _) in passed.items()],
                f"{INTERVAL} int, {PARTITION_COLUMN} string",
            )
            (
                result.join(F.broadcast(ids), INTERVAL)
                .select(*OUTPUT_COLUMNS, PARTITION_COLUMN)
                .sortWithinPartitions(PARTITION_COLUMN, "user", "window_start")
                .write.mode("overwrite")
                .option("partitionOverwriteMode", "dynamic")
                .partitionBy(PARTITION_COLUMN)
                .parquet(str(output_dir))
            )
        lap("write_s")
        for outcome, rows in passed.values():
            publish: dict[str, Any] = {"published": 0, "publish_skipped": False}
            if publish_topic:
                publish = _publish(
                    bootstrap_servers,
                    publish_topic,
                    _outgoing(rows),
                    output_dir,
                    outcome["interval_id"],
                    offsets,
                    False,
                )
            outcome.update(publish)
        lap("publish_s")
    finally:
        numbered.unpersist()
        result.unpersist()
    read = {
        "way": way,
        "reader": reader_of(way),
        "records_in_span": sum(counts.values()),
        "offsets": offsets,
        "timings_s": timings,
    }
    return {"read": read, "intervals": outcomes}
