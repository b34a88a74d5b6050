"""The Great Expectations suite that gates the payments backfill, and its report.

Owner: :func:`spark_jobs.payments_backfill.main.run_backfill` (and, per interval, the batch of
:mod:`spark_jobs.payments_backfill.batch`) calls :func:`validate_windowed_spend` on the transformed
result before anything is written or published. Each call builds an ephemeral GX context (nothing
on disk but the report this module writes), a pandas data source over the result, and the suite
of :func:`build_suite`. The result is small (users x windows of one interval), so it is validated
in the driver's memory: GX on a Spark DataFrame runs a dozen small Spark jobs per interval (20-28 s
each on a loaded 2-core machine), on pandas the whole suite takes a fraction of a second.

==========================================  =====================================================
expectation                                 why
==========================================  =====================================================
``user``, ``window_start`` not null         the key of a windowed aggregate is always known
``(user, window_start)`` unique             one row per key and window, as a windowed store holds
``count`` sums to the source record count   every record in the interval is counted exactly once
``count`` >= 1, not null                    a window exists only because a payment fell in it
``total_amount`` >= 0, not null             payments are not negative; a missing amount is null
row count >= 1                              an interval with no data is an error, not a success
==========================================  =====================================================

The report goes to ``report_dir``: ``validation.json`` (GX's result plus the run's metadata),
``summary.md`` (one line per expectation, for humans and the Airflow task log) and GX's Data Docs
(``data_docs/index.html`` and the validation's own page, built by a checkpoint's
``UpdateDataDocsAction`` for this run). All are rewritten on every run of the interval and left in
place when the suite fails. GX logs at WARNING unless ``STREAMS_GX_LOG_LEVEL`` says otherwise.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
GX_LOG_LEVEL = os.environ.get("STREAMS_GX_LOG_LEVEL", "WARNING").upper()
# GX logs ~200 INFO lines while importing (some of its modules set their loggers to INFO): the
# import runs with INFO switched off, then every GX logger is set to GX_LOG_LEVEL.
logging.disable(logging.INFO if logging.getLevelName(GX_LOG_LEVEL) > logging.INFO else logging.NOTSET)
try:
    import great_expectations as gx  # noqa: E402 -- analytics are switched off before the import
    import great_expectations.expectations as gxe  # noqa: E402
    from great_expectations.checkpoint import UpdateDataDocsAction  # noqa: E402
    from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: E402
finally:
    logging.disable(logging.NOTSET)
import pandas as pd  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402

__all__ = [
    "REPORT_JSON",
    "REPORT_SUMMARY",
    "SUITE_NAME",
    "ValidationReport",
    "build_suite",
    "validate_windowed_spend",
]

SUITE_NAME = "payments_windowed_spend"
REPORT_JSON = "validation.json"
REPORT_SUMMARY = "summary.md"
DATA_DOCS = "data_docs"


def quiet_gx() -> None:
    """Every ``great_expectations`` logger at ``STREAMS_GX_LOG_LEVEL`` (default WARNING)."""
    for name in ["great_expectations", *logging.root.manager.loggerDict]:
        if name.startswith("great_expectations"):
            logging.getLogger(name).setLevel(GX_LOG_LEVEL)


quiet_gx()


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of one validation: whether it passed, what failed, and where the report is."""

    success: bool
    failed: list[str]
    statistics: dict[str, Any]
    report_json: Path
    report_summary: Path
    results: list[dict[str, Any]] = field(default_factory=list, repr=False)
    data_docs_url: str | None = None


def build_suite(source_count: int) -> gx.ExpectationSuite:
    """The suite of the module docstring, for a result computed from ``source_count`` records."""
    suite = gx.ExpectationSuite(name=SUITE_NAME)
    for column in ("user", "window_start", "count", "total_amount"):
        suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=column))
    suite.add_expectation(gxe.ExpectCompoundColumnsToBeUnique(column_list=["user", "window_start"]))
    suite.add_expectation(
        gxe.ExpectColumnSumToBeBetween(column="count", min_value=source_count, max_value=source_count)
    )
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="count", min_value=1))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="total_amount", min_value=0))
    suite.add_expectation(gxe.ExpectTableRowCountToBeBetween(min_value=1))
    return suite


def _describe(config: Mapping[str, Any]) -> str:
    kwargs = {k: v for k, v in config.get("kwargs", {}).items() if k != "batch_id"}
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    return f"{config.get('type')}({args})"


def _observed(result: Mapping[str, Any]) -> str:
    if "observed_value" in result:
        return f"observed {result['observed_value']}"
    if "unexpected_count" in result:
        sample = result.get("partial_unexpected_list") or []
        return f"{result['unexpected_count']} unexpected of {result.get('element_count')} (e.g. {sample[:3]})"
    return ""


def _write_report(
    report_dir: Path,
    success: bool,
    results: list[dict[str, Any]],
    statistics: dict[str, Any],
    run_meta: Mapping[str, Any],
) -> tuple[Path, Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = report_dir / REPORT_JSON, report_dir / REPORT_SUMMARY
    document = {
        "suite": SUITE_NAME,
        "success": success,
        "run": dict(run_meta),
        "statistics": statistics,
        "results": results,
    }
    json_path.write_text(json.dumps(document, indent=2, default=str) + "\n")
    lines = [
        f"# Validation of `{SUITE_NAME}`: {'PASSED' if success else 'FAILED'}",
        "",
        *(f"- {key}: `{value}`" for key, value in run_meta.items()),
        f"- expectations: {statistics.get('successful_expectations')} of "
        f"{statistics.get('evaluated_expectations')} passed",
        "",
        "| result | expectation | observed |",
        "| --- | --- | --- |",
    ]
    for item in results:
        mark = "pass" if item.get("success") else "**FAIL**"
        observed = _observed(item.get("result") or {}).replace("|", "\\|")
        lines.append(f"| {mark} | `{_describe(item.get('expectation_config') or {})}` | {observed} |")
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path


def validate_windowed_spend(
    result: DataFrame | pd.DataFrame,
    source_count: int,
    report_dir: str | Path,
    run_meta: Mapping[str, Any] | None = None,
) -> ValidationReport:
    """Run the suite on ``result`` (a :func:`~spark_jobs.payments_backfill.transform.windowed_spend`
    DataFrame, collected to pandas here, or that frame already in pandas) and write the report;
    never raises on a failed expectation, the caller decides.

    :param source_count: the number of source records the result was computed from.
    :param report_dir: where ``validation.json`` and ``summary.md`` go (created if missing).
    :param run_meta: what to record about the run (topic, interval, offsets, ...), JSON-friendly.
    """
    frame = result if isinstance(result, pd.DataFrame) else result.toPandas()
    quiet_gx()  # loggers GX created lazily since the import
    context = gx.get_context(mode="ephemeral")
    quiet_gx()
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    docs_dir = Path(report_dir) / DATA_DOCS
    context.add_data_docs_site(
        site_name="run",
        site_config={
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        },
    )
    batch_definition = (
        context.data_sources.add_pandas(name="pandas")
        .add_dataframe_asset(name="windowed_spend")
        .add_batch_definition_whole_dataframe(name="result")
    )
    suite = context.suites.add(build_suite(source_count))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=SUITE_NAME, data=batch_definition, suite=suite)
    )
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(
            name=SUITE_NAME,
            validation_definitions=[definition],
            actions=[UpdateDataDocsAction(name="data_docs", site_names=["run"])],
            result_format="SUMMARY",
        )
    )
    run = checkpoint.run(batch_parameters={"dataframe": frame})
    [outcome] = run.run_results.values()
    document = outcome.to_json_dict()
    results = list(document.get("results", []))
    statistics = dict(document.get("statistics", {}))
    success = bool(document.get("success"))
    json_path, md_path = _write_report(Path(report_dir), success, results, statistics, run_meta or {})
    failed = [_describe(r.get("expectation_config") or {}) for r in results if not r.get("success")]
    pages = sorted((docs_dir / "validations").rglob("*.html"), key=lambda p: p.stat().st_mtime)
    page = pages[-1] if pages else docs_dir / "index.html"
    return ValidationReport(success, failed, statistics, json_path, md_path, results, page.as_uri())
