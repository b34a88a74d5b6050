"""SparkBackfillBatchOperator: several intervals in one task run, one Spark session and one read.

The job is ``spark_jobs.payments_backfill.batch:run_backfill_intervals`` (imported in ``execute``
only). Every interval is validated, written and published on its own, as
:class:`~streams_ops.operators.spark_backfill.SparkBackfillOperator` does for one; the task's
outcome sums them up:

- every interval without input: the task is **skipped** (message says so);
- any failed suite: the task **fails** after all intervals ran; the log lists each failing
  interval's expectations, report and Data Docs; XCom ``failure`` holds the reasons;
- otherwise it returns every interval's result; empty intervals are listed as skipped.

The "Data Docs" link opens the first failing interval's report, else the last passing one's.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from streams_ops.links.data_docs import push_data_docs
from streams_ops.operators.spark_backfill import SparkBackfillOperator, publish_target

BATCH_ENTRY_POINT = "spark_jobs.payments_backfill.batch:run_backfill_intervals"


def _label(outcome: dict[str, Any]) -> str:
    from datetime import UTC, datetime

    def fmt(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    return f"[{fmt(outcome['interval_start_ms'])}, {fmt(outcome['interval_end_ms'])})"


class SparkBackfillBatchOperator(SparkBackfillOperator):
    """Backfill every ``{"interval_start", "interval_end"}`` of ``intervals`` in one Spark session.

    :param intervals: the intervals (ISO strings, datetimes or epoch ms); ``interval_start`` and
        ``interval_end`` then name the whole span (for the UI's map index label).
    Other parameters as :class:`SparkBackfillOperator`'s.
    """

    template_fields: Sequence[str] = (*SparkBackfillOperator.template_fields, "intervals")

    def __init__(self, *, intervals: Any = None, entry_point: str = BATCH_ENTRY_POINT, **kwargs: Any) -> None:
        super().__init__(entry_point=entry_point, **kwargs)
        self.intervals = intervals

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops.hooks.kafka_admin import KafkaAdminHook

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        module_name, _, function = self.entry_point.partition(":")
        run = getattr(importlib.import_module(module_name), function)
        intervals = self.intervals or [
            {"interval_start": self.interval_start, "interval_end": self.interval_end}
        ]
        bootstrap = KafkaAdminHook(kafka_conn_id=self.kafka_conn_id).bootstrap_servers
        publish = publish_target(self.publish_topic)
        self.log.info(
            "backfill %s: %d interval(s) [%s, %s) in one Spark session -> %s (publish: %s)",
            self.topic,
            len(intervals),
            intervals[0]["interval_start"],
            intervals[-1]["interval_end"],
            self.output_dir,
            publish or "none",
        )
        ti = context["ti"]
        try:
            with self.spark_session(context) as spark:
                result = run(
                    bootstrap,
                    self.topic,
                    self.output_dir,
                    [(i["interval_start"], i["interval_end"]) for i in intervals],
                    publish,
                    window_ms=int(self.window_ms),
                    spark=spark,
                )
        except Exception as exc:
            ti.xcom_push(key="failure", value=f"{type(exc).__name__}: {exc}")
            raise
        outcomes = result["intervals"]
        read = result["read"]
        self.log.info(
            "read %d records of the span once (%s, source %s); seconds per step: %s",
            read["records_in_span"],
            read["way"].replace("_", " "),
            read.get("reader"),
            read.get("timings_s", "n/a"),
        )
        for outcome in outcomes:
            self.log.info(
                "%s: %s%s",
                _label(outcome),
                outcome["status"],
                f", {outcome.get('rows')} rows from {outcome.get('source_records')} records"
                if outcome["status"] == "passed"
                else "",
            )
        failed = [o for o in outcomes if o["status"] == "failed"]
        passed = [o for o in outcomes if o["status"] == "passed"]
        docs = (failed or passed[-1:] or [{}])[0].get("data_docs_url")
        if docs:
            push_data_docs(ti, self.log, docs)
        if failed:
            self._fail(ti, failed)
        if not passed:
            message = (
                f"no input records in {len(outcomes)} interval(s) of {self.topic} "
                f"[{intervals[0]['interval_start']}, {intervals[-1]['interval_end']}): skipped "
                "(nothing validated, written or published)"
            )
            self.log.warning("%s", message)
            raise AirflowSkipException(message)
        self._asset_events(
            context,
            {
                **passed[-1],
                "interval_id": f"{passed[0]['interval_id']}..{passed[-1]['interval_id']}",
                "rows": sum(o["rows"] for o in passed),
                "source_records": sum(o["source_records"] for o in passed),
                "published": sum(o.get("published", 0) for o in passed),
            },
        )
        return {
            "read": read,
            "intervals": outcomes,
            "passed": len(passed),
            "skipped_empty": len(outcomes) - len(passed),
            "source_records": sum(o["source_records"] for o in passed),
            "rows": sum(o["rows"] for o in passed),
            "data_docs_url": docs,
        }

    def _fail(self, ti: Any, failed: list[dict[str, Any]]) -> None:
        reasons = []
        for outcome in failed:
            try:
                with open(outcome["report_summary"]) as handle:
                    summary = handle.read()
            except OSError:
                summary = "(no summary file)"
            self.log.error(
                "validation FAILED for %s, nothing written or published.\nfailing expectations:\n  %s\n"
                "report: %s\nData Docs: %s\n%s",
                _label(outcome),
                "\n  ".join(outcome["failed"]),
                outcome["report_json"],
                outcome["data_docs_url"],
                summary,
            )
            reasons.append(
                f"{_label(outcome)} validation failed: {'; '.join(outcome['failed'])}; "
                f"report {outcome['report_json']}; Data Docs {outcome['data_docs_url']}"
            )
        ti.xcom_push(key="failure", value=" | ".join(reasons))
        raise AirflowFailException(f"backfill {' | '.join(reasons)}; those intervals published nothing")
