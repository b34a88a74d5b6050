"""Recompute the demo app's ``payment-totals`` store with Spark, validated before it is used.

The state-rebuild DAG's *recompute* mode calls :func:`recompute_payment_totals` when the stream
logic was wrong: the store's content is recomputed from the input topic, checked by the Great
Expectations suite below, and only then (by the DAG) written to the store's changelog, from which
the workers rebuild their stores. What the demo app (``streams_runtime.demo.app``) keeps per user,
per task (= input partition: the store's sub-topology reads ``demo-payments`` directly, no
repartition), is ``{"count": payments, "total_cents": sum of round(amount * 100)}``.

Steps of :func:`recompute_payment_totals`:

  1. plan one offset range per input partition, ending at ``ending_offsets`` (the application's
     committed offsets: the recomputed store covers exactly the input the application processed)
     or at the true end;
  2. parse the payments and count them (the source count);
  3. aggregate per ``(partition, user)``: :func:`user_totals`;
  4. validate with the suite (keys not null and unique, counts summing to the source count,
     count >= 1, total_cents >= 0, rows >= 1) and write the report; a failure raises
     :class:`StoreRecomputeValidationError` and nothing is written;
  5. write the rows as JSON lines ``{"partition", "key", "value"}`` to ``<output_dir>/rows.jsonl``
     (overwritten on every run), ready for the changelog rewrite.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

import great_expectations as gx  # noqa: E402 -- analytics are switched off before the import
import great_expectations.expectations as gxe  # noqa: E402
from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from spark_jobs.kafka_source import FORMAT, pinned_offsets, plan_ranges  # noqa: E402
from spark_jobs.payments_backfill.transform import parse_payments  # noqa: E402
from spark_jobs.session import session_or_local  # noqa: E402

__all__ = [
    "ROWS_FILE",
    "SUITE_NAME",
    "StoreRecomputeValidationError",
    "recompute_payment_totals",
    "user_totals",
]

SUITE_NAME = "payment_totals_store"
ROWS_FILE = "rows.jsonl"


class StoreRecomputeValidationError(RuntimeError):
    """The suite failed: no rows were written; the report is on disk."""

    def __init__(self, failed: list[str], report_json: Path, report_summary: Path) -> None:
        super().__init__(
            f"validation failed ({len(failed)} expectations): {'; '.join(failed)}; report: {report_summary}"
        )
        self.failed = failed
        self.report_json = str(report_json)
        self.report_summary = str(report_summary)


def user_totals(payments: DataFrame) -> DataFrame:
    """Per input partition and user: ``count`` and ``total_cents`` (long), as the store keeps them.

    A payment without an amount makes the user's total null (the suite fails it), never smaller.
    """
    cents = (F.col("amount") * F.lit(100)).cast("long")
    return (
        payments.groupBy("partition", "user")
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.when(F.count("amount") == F.count(F.lit(1)), F.sum(cents)).alias("total_cents"),
        )
        .orderBy("partition", "user")
    )


def build_suite(source_count: int) -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=SUITE_NAME)
    for column in ("partition", "user", "count", "total_cents"):
        suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=column))
    suite.add_expectation(gxe.ExpectColumnValuesToBeUnique(column="user"))  # one owner task per key
    suite.add_expectation(
        gxe.ExpectColumnSumToBeBetween(column="count", min_value=source_count, max_value=source_count)
    )
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="count", min_value=1))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="total_cents", min_value=0))
    suite.add_expectation(gxe.ExpectTableRowCountToBeBetween(min_value=1))
    return suite


def _describe(config: Mapping[str, Any]) -> str:
    kwargs = {k: v for k, v in config.get("kwargs", {}).items() if k != "batch_id"}
    return f"{config.get('type')}({', '.join(f'{k}={v}' for k, v in kwargs.items())})"


def validate(
    result: DataFrame, source_count: int, report_dir: Path, run_meta: Mapping[str, Any]
) -> tuple[bool, list[str], Path, Path]:
    """Run the suite on ``result``; write ``validation.json`` and ``summary.md`` to ``report_dir``."""
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_spark(name="spark")
        .add_dataframe_asset(name="payment_totals")
        .add_batch_definition_whole_dataframe(name="result")
        .get_batch(batch_parameters={"dataframe": result})
    )
    document = batch.validate(context.suites.add(build_suite(source_count))).to_json_dict()
    results = list(document.get("results", []))
    success = bool(document.get("success"))
    failed = [_describe(r.get("expectation_config") or {}) for r in results if not r.get("success")]
    report_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = report_dir / "validation.json", report_dir / "summary.md"
    json_path.write_text(
        json.dumps(
            {"suite": SUITE_NAME, "success": success, "run": dict(run_meta), "results": results},
            indent=2,
            default=str,
        )
        + "\n"
    )
    lines = [f"# Validation of `{SUITE_NAME}`: {'PASSED' if success else 'FAILED'}", ""]
    lines += [f"- {k}: `{v}`" for k, v in run_meta.items()]
    lines += ["", "| result | expectation |", "| --- | --- |"]
    lines += [
        f"| {'pass' if r.get('success') else '**FAIL**'} | `{_describe(r.get('expectation_config') or {})}` |"
        for r in results
    ]
    md_path.write_text("\n".join(lines) + "\n")
    return success, failed, json_path, md_path


def recompute_payment_totals(
    bootstrap_servers: str,
    topic: str,
    output_dir: str | Path,
    *,
    ending_offsets: Mapping[int, int] | None = None,
    report_dir: str | Path | None = None,
    spark: SparkSession | None = None,
) -> dict[str, Any]:
    """Steps 1-5 of the module docstring.

    :param ending_offsets: ``{partition: exclusive end}``; default the true end of every partition.
    :returns: ``{"status", "source_records", "rows", "rows_path", "input_offsets", "report_json",
        "report_summary", "keys_per_partition"}``.
    :raises StoreRecomputeValidationError: when the suite failed (nothing written, report on disk).
    """
    output_dir = Path(output_dir)
    report_dir = Path(report_dir) if report_dir is not None else output_dir / "_validation"
    spark = spark or session_or_local()
    # Step 1
    ranges = plan_ranges(
        bootstrap_servers, topic, ending={int(p): int(o) for p, o in (ending_offsets or {}).items()}
    )
    starting, ending = pinned_offsets(ranges)
    raw = (
        spark.read.format(FORMAT)
        .option("bootstrap_servers", bootstrap_servers)
        .option("topic", topic)
        .option("starting_offsets", starting)
        .option("ending_offsets", ending)
        .load()
    )
    # Step 2
    payments = parse_payments(raw).cache()
    try:
        source_count = payments.count()
        # Step 3
        result = user_totals(payments).cache()
        rows = result.collect()
        # Step 4
        run_meta = {
            "topic": topic,
            "source_records": source_count,
            "result_rows": len(rows),
            "input_offsets": {str(r.partition): [r.start, r.end] for r in ranges},
        }
        success, failed, json_path, md_path = validate(result, source_count, report_dir, run_meta)
        result.unpersist()
    finally:
        payments.unpersist()
    if not success:
        raise StoreRecomputeValidationError(failed, json_path, md_path)
    # Step 5
    output_dir.mkdir(parents=True, exist_ok=True)
    rows_path = output_dir / ROWS_FILE
    tmp = rows_path.with_suffix(".tmp")
    per_partition: dict[str, int] = {}
    with open(tmp, "w", encoding="utf-8") as out:
        for row in rows:
            value = {"count": int(row["count"]), "total_cents": int(row["total_cents"])}
            out.write(
                json.dumps({"partition": int(row["partition"]), "key": row["user"], "value": value}) + "\n"
            )
            per_partition[str(row["partition"])] = per_partition.get(str(row["partition"]), 0) + 1
    os.replace(tmp, rows_path)
    return {
        "status": "passed",
        "source_records": source_count,
        "rows": len(rows),
        "rows_path": str(rows_path),
        "keys_per_partition": per_partition,
        "input_offsets": {str(r.partition): r.end for r in ranges},
        "report_json": str(json_path),
        "report_summary": str(md_path),
    }
