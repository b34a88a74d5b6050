"""Entry point of the payments backfill: :func:`run_backfill` and its command line.

Called by the Airflow backfill DAG (imported inside the task, never at the DAG's top level), by
the CLI below, and by the tests. Borrows a SparkSession (the active one, or a local one it
creates); owns the consumer of the read, the producer of the publish and the report files.

Steps of :func:`run_backfill`, in order -- nothing leaves the job before the suite passed:

  1. resolve the interval ``[start, end)`` and its id; check the publish topic exists (fail fast);
  2. plan the offset ranges once and pin them, so every Spark action reads the same snapshot:
     by timestamp where the broker answers ``offsets_for_times`` (Apache Kafka), else the whole
     partition up to its true end, the records outside the interval dropped on the executors
     (:mod:`spark_jobs.kafka_source.by_time`); a batch of intervals passes its ``source`` (read
     once, :mod:`spark_jobs.payments_backfill.batch`) and skips this step;
  3. parse the payments in the interval and count them (the source count); an interval without
     a record ends here with ``status: "empty"`` (nothing validated, written or published);
  4. compute the per-user windowed spend;
  5. validate it with the Great Expectations suite and write the report; a failure raises
     :class:`BackfillValidationError` here, so nothing is written and nothing is published;
  6. write Parquet under ``<output_dir>/interval_id=<id>/``, overwriting only that partition
     (dynamic partition overwrite): re-running an interval replaces it and leaves the others;
  7. publish the rows to ``publish_topic``, if given, in ONE Kafka transaction whose
     ``transactional.id`` is stable per (job, topic, interval), then write the interval's
     "published" marker (:mod:`spark_jobs.payments_backfill.publish`).

Publishing is transactional: readers of ``publish_topic`` must use ``isolation.level=
read_committed`` and then see an interval's rows all at once or not at all; a retried attempt
fences the one before it. Re-running an interval whose result is unchanged publishes nothing (the
marker under ``<output_dir>/_published/`` holds the digest of what was committed); a changed result
is published whole in a new transaction (keyed consumers keep the latest row per
``(user, window_start)``); ``force_publish=True`` publishes again regardless. The rules, and the
one window left (a crash between the commit and the marker), are in the publish module.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.kafka_source import FORMAT, OffsetRange, pinned_offsets
from spark_jobs.kafka_source.by_time import BY_TIMESTAMP, SCAN, plan_ranges_for_times
from spark_jobs.kafka_source.connector import KAFKA_FORMAT, connector_loaded, read_by_timestamp
from spark_jobs.payments_backfill.expectations import ValidationReport, validate_windowed_spend
from spark_jobs.payments_backfill.publish import (
    publish_transactionally,
    published_marker,
    read_marker,
    records_digest,
    transactional_id,
    write_marker,
)
from spark_jobs.payments_backfill.transform import HOUR_MS, in_interval, parse_payments, windowed_spend
from spark_jobs.session import connector_jars, session_or_local
from streams_runtime.kafka.clients import create_admin, partition_counts

__all__ = ["BackfillValidationError", "interval_id", "main", "run_backfill", "to_epoch_ms"]

PARTITION_COLUMN = "interval_id"

log = logging.getLogger(__name__)


class BackfillValidationError(RuntimeError):
    """The expectation suite failed: nothing was written or published; the report is on disk."""

    def __init__(self, report: ValidationReport) -> None:
        super().__init__(
            f"validation failed ({len(report.failed)} expectations): {'; '.join(report.failed)}; "
            f"report: {report.report_summary}"
        )
        self.failed = report.failed
        self.report_json = str(report.report_json)
        self.report_summary = str(report.report_summary)
        self.data_docs_url = report.data_docs_url


def to_epoch_ms(value: datetime | str | int) -> int:
    """Epoch milliseconds of a datetime (naive means UTC), an ISO-8601 string, or an int (ms)."""
    if isinstance(value, bool):
        raise TypeError(f"not a time: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        raise TypeError(f"expected a datetime, an ISO string or epoch ms, got {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)


def interval_id(start_ms: int, end_ms: int) -> str:
    """``20240101T000000Z_20240101T010000Z``: the Parquet partition value and report folder name."""

    def fmt(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y%m%dT%H%M%SZ")

    return f"{fmt(start_ms)}_{fmt(end_ms)}"


JOB = "payments_backfill"


def _encode(rows: list[Any]) -> list[tuple[bytes, bytes]]:
    """Each result row keyed by user, value JSON with epoch-ms window bounds."""
    encoded = []
    for row in rows:
        value = {
            "user": row["user"],
            "window_start": int(row["window_start_ms"]),
            "window_end": int(row["window_end_ms"]),
            "count": int(row["count"]),
            "total_amount": float(row["total_amount"]),
        }
        encoded.append((row["user"].encode(), json.dumps(value).encode()))
    return encoded


def _publish(
    bootstrap_servers: str,
    topic: str,
    rows: list[Any],
    output_dir: Path,
    ident: str,
    source_offsets: dict[str, Any],
    force: bool,
) -> dict[str, Any]:
    """Step 7: skip when the marker holds this exact result, else one transaction, then the marker."""
    records = _encode(rows)
    marker_path = published_marker(output_dir, ident, topic)
    txn_id = transactional_id(JOB, topic, ident)
    digest = records_digest(records)
    marker = read_marker(marker_path)
    if not force and marker is not None and marker.get("digest") == digest:
        log.info(
            "interval %s already published to %s (publish %s, %d records): skipped",
            ident,
            topic,
            marker.get("publish_id"),
            marker.get("records", 0),
        )
        return {
            "published": 0,
            "publish_skipped": True,
            "transactional_id": txn_id,
            "publish_id": marker.get("publish_id"),
            "publish_marker": str(marker_path),
        }
    result = publish_transactionally(
        bootstrap_servers,
        topic,
        records,
        txn_id,
        headers={"backfill.job": JOB, "backfill.interval_id": ident},
    )
    write_marker(marker_path, result, topic, ident, source_offsets)
    return {
        "published": result.records,
        "publish_skipped": False,
        "transactional_id": txn_id,
        "publish_id": result.publish_id,
        "publish_marker": str(marker_path),
    }


def read_ranges(
    spark: SparkSession,
    bootstrap_servers: str,
    topic: str,
    ranges: list[OffsetRange],
    start_ms: int,
    end_ms: int,
    way: str = SCAN,
) -> DataFrame:
    """The raw records of the pinned ``ranges`` with a timestamp in ``[start_ms, end_ms)``.

    ``way`` is how the ranges were planned (:mod:`spark_jobs.kafka_source.by_time`): planned by
    timestamp (Apache Kafka), Spark's own Kafka connector reads them
    (:mod:`spark_jobs.kafka_source.connector`); a bounded scan (Tansu, which has no ListOffsets
    by time) goes through the ``kafka_range`` Python source
    (docs/decisions/0011-spark-kafka-connector.md).

    :raises RuntimeError: planned by timestamp on a session without the connector's jars (the
        message names the setup command).
    """
    if way == BY_TIMESTAMP:
        if not connector_loaded(spark):
            _, why = connector_jars()
            raise RuntimeError(
                why
                or "the active Spark session was created without Spark's Kafka connector in "
                "spark.jars; create it with spark_jobs.session.local_session"
            )
        return read_by_timestamp(spark, bootstrap_servers, topic, ranges, start_ms, end_ms)
    starting, ending = pinned_offsets(ranges)
    return (
        spark.read.format(FORMAT)
        .option("bootstrap_servers", bootstrap_servers)
        .option("topic", topic)
        .option("starting_offsets", starting)
        .option("ending_offsets", ending)
        .option("starting_timestamp", str(start_ms))
        .option("ending_timestamp", str(end_ms))
        .load()
    )


def reader_of(way: str) -> str:
    """Which source reads ranges planned ``way``: ``kafka`` (Spark's connector) or ``kafka_range``."""
    return KAFKA_FORMAT if way == BY_TIMESTAMP else FORMAT


class _StepClock:
    """Seconds spent per step, for the log and the result (what a slow backfill spent its time on)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.monotonic()

    def lap(self, step: str) -> None:
        now = time.monotonic()
        self.timings[step] = round(now - self._last, 3)
        self._last = now
        log.info("backfill step %s took %.2fs", step, self.timings[step])


def run_backfill(
    bootstrap_servers: str,
    topic: str,
    output_dir: str | Path,
    interval_start: datetime | str | int,
    interval_end: datetime | str | int,
    publish_topic: str | None = None,
    report_dir: str | Path | None = None,
    *,
    window_ms: int = HOUR_MS,
    spark: SparkSession | None = None,
    force_publish: bool = False,
    source: tuple[DataFrame, list[OffsetRange]] | None = None,
) -> dict[str, Any]:
    """Recompute, validate, write and (optionally) publish one interval (steps in the module docstring).

    :param interval_start: inclusive start on the record timestamp: datetime, ISO string or epoch ms.
    :param interval_end: exclusive end, same forms.
    :param publish_topic: an existing topic to publish the result to once the suite passed.
    :param report_dir: where the validation report goes; default ``<output_dir>/_validation/<id>``.
    :param window_ms: the tumbling window size.
    :param spark: the session to use; default the active one, else a new local one.
    :param force_publish: publish even when the marker says this exact result is on the topic.
    :param source: parsed payments already read (covering the interval) and the ranges they came
        from; given by a batch of intervals sharing one read.
    :returns: a JSON-friendly summary of the run (counts, paths, validation and publish outcome).
    :raises BackfillValidationError: when the suite failed (the report is on disk).
    :raises PublishError: the publish transaction failed and was aborted (``PublishFencedError``: a
        newer attempt of the same interval took over); the Parquet output is written, no marker.
    :raises ValueError: for an empty or inverted interval, or a missing topic.
    """
    clock = _StepClock()
    # Step 1
    start_ms, end_ms = to_epoch_ms(interval_start), to_epoch_ms(interval_end)
    if end_ms <= start_ms:
        raise ValueError(f"empty interval: start {interval_start} is not before end {interval_end}")
    ident = interval_id(start_ms, end_ms)
    output_dir = Path(output_dir)
    report_dir = Path(report_dir) if report_dir is not None else output_dir / "_validation" / ident
    if publish_topic and publish_topic not in partition_counts(
        create_admin(bootstrap_servers), [publish_topic]
    ):
        raise ValueError(f"publish topic {publish_topic!r} does not exist; provision it first")
    spark = spark or session_or_local()
    clock.lap("1-session")
    # Step 2
    if source is None:
        ranges, way = plan_ranges_for_times(bootstrap_servers, topic, start_ms, end_ms)
        reader = reader_of(way)
        parsed = parse_payments(read_ranges(spark, bootstrap_servers, topic, ranges, start_ms, end_ms, way))
    else:
        parsed, ranges = source
        reader = "batch"
    # Step 3
    payments: DataFrame = in_interval(parsed, start_ms, end_ms).cache()
    result: DataFrame | None = None
    try:
        source_count = payments.count()
        clock.lap("2,3-read")
        if source_count == 0:
            return {
                "status": "empty",
                "reader": reader,
                "topic": topic,
                "interval_id": ident,
                "interval_start_ms": start_ms,
                "interval_end_ms": end_ms,
                "source_records": 0,
                "source_offsets": {str(r.partition): [r.start, r.end] for r in ranges},
                "timings_s": clock.timings,
            }
        # Step 4
        result = windowed_spend(payments, window_ms).cache()
        rows = result.count()
        clock.lap("4-transform")
        # Step 5
        run_meta = {
            "topic": topic,
            "interval_id": ident,
            "interval_start_ms": start_ms,
            "interval_end_ms": end_ms,
            "window_ms": window_ms,
            "source_records": source_count,
            "result_rows": rows,
            "source_offsets": {str(r.partition): [r.start, r.end] for r in ranges},
        }
        report = validate_windowed_spend(result, source_count, report_dir, run_meta)
        clock.lap("5-validate")
        if not report.success:
            raise BackfillValidationError(report)
        # Step 6
        (
            result.withColumn(PARTITION_COLUMN, F.lit(ident))
            .write.mode("overwrite")
            .option("partitionOverwriteMode", "dynamic")
            .partitionBy(PARTITION_COLUMN)
            .parquet(str(output_dir))
        )
        clock.lap("6-write")
        # Step 7
        publish: dict[str, Any] = {"published": 0, "publish_skipped": False}
        if publish_topic:
            outgoing = result.select(
                "user",
                F.unix_millis("window_start").alias("window_start_ms"),
                F.unix_millis("window_end").alias("window_end_ms"),
                "count",
                "total_amount",
            ).collect()
            publish = _publish(
                bootstrap_servers,
                publish_topic,
                outgoing,
                output_dir,
                ident,
                run_meta["source_offsets"],
                force_publish,
            )
        clock.lap("7-publish")
    finally:
        payments.unpersist()
        if result is not None:
            result.unpersist()
    return {
        "status": "passed",
        "reader": reader,
        **run_meta,
        "rows": rows,
        "output_path": str(output_dir / f"{PARTITION_COLUMN}={ident}"),
        "report_json": str(report.report_json),
        "report_summary": str(report.report_summary),
        "data_docs_url": report.data_docs_url,
        "publish_topic": publish_topic,
        **publish,
        "timings_s": clock.timings,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI: run one interval, print the result as JSON; exit 0 passed, 2 validation failed."""
    parser = argparse.ArgumentParser(
        prog="python -m spark_jobs.payments_backfill.main", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--interval-start", required=True, help="ISO-8601 (UTC if no offset) or epoch ms")
    parser.add_argument("--interval-end", required=True, help="exclusive; ISO-8601 or epoch ms")
    parser.add_argument("--publish-topic")
    parser.add_argument("--report-dir")
    parser.add_argument("--window-ms", type=int, default=HOUR_MS)
    parser.add_argument(
        "--force-publish",
        action="store_true",
        help="publish even when the interval's marker says this result is on the topic",
    )
    args = parser.parse_args(argv)

    def when(text: str) -> int | str:
        return int(text) if text.isdigit() else text

    try:
        result = run_backfill(
            args.bootstrap_servers,
            args.topic,
            args.output_dir,
            when(args.interval_start),
            when(args.interval_end),
            publish_topic=args.publish_topic,
            report_dir=args.report_dir,
            window_ms=args.window_ms,
            force_publish=args.force_publish,
        )
    except BackfillValidationError as exc:
        print(
            json.dumps(
                {
                    "status": "failed",
                    "failed": exc.failed,
                    "report_json": exc.report_json,
                    "report_summary": exc.report_summary,
                    "data_docs_url": exc.data_docs_url,
                },
                indent=2,
            )
        )
        return 2
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
