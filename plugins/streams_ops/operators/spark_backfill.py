"""SparkBackfillOperator: run a Spark backfill job for one interval, validated before it publishes.

The job is the entry point of ``spark_jobs/`` (default: ``spark_jobs.payments_backfill.main:run_backfill``,
whose contract is in the module docstring there). It is imported inside ``execute`` only, so parsing
a DAG never imports ``pyspark`` or ``great_expectations``. The job reads the interval's records
from Kafka (the cluster of ``kafka_conn_id``), recomputes, validates with its Great Expectations
suite, writes Parquet idempotently and publishes only when the suite passed.

A failed suite fails the task without retries (the same data fails the same way) and logs where
the validation report was left.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

DEFAULT_ENTRY_POINT = "spark_jobs.payments_backfill.main:run_backfill"


class SparkBackfillOperator(BaseOperator):
    """Backfill ``[interval_start, interval_end)`` of ``topic`` with a Spark job.

    :param topic: the input topic.
    :param output_dir: Parquet root; the job writes one partition directory per interval.
    :param interval_start: start (inclusive) as a datetime, ISO string or epoch ms.
    :param interval_end: end (exclusive), same forms.
    :param publish_topic: where validated rows go; ``None``/empty publishes nothing.
    :param report_dir: where the validation report goes (the job's default when empty).
    :param window_ms: the tumbling window of the recomputed aggregation.
    :param entry_point: ``package.module:function`` of the job.
    :param kafka_conn_id: the Connection of the cluster (see ``KafkaAdminHook``).
    :returns: the job's result dict (pushed to XCom).
    """

    template_fields: Sequence[str] = (
        "topic",
        "output_dir",
        "interval_start",
        "interval_end",
        "publish_topic",
        "report_dir",
        "window_ms",
        "kafka_conn_id",
    )
    ui_color = "#fbe9d9"

    def __init__(
        self,
        *,
        topic: str,
        output_dir: str,
        interval_start: Any = "{{ data_interval_start }}",
        interval_end: Any = "{{ data_interval_end }}",
        publish_topic: str | None = None,
        report_dir: str | None = None,
        window_ms: Any = 3_600_000,
        entry_point: str = DEFAULT_ENTRY_POINT,
        kafka_conn_id: str = "streams_kafka",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.topic = topic
        self.output_dir = output_dir
        self.interval_start = interval_start
        self.interval_end = interval_end
        self.publish_topic = publish_topic
        self.report_dir = report_dir
        self.window_ms = window_ms
        self.entry_point = entry_point
        self.kafka_conn_id = kafka_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops.hooks.kafka_admin import KafkaAdminHook

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this interpreter
        module_name, _, function = self.entry_point.partition(":")
        module = importlib.import_module(module_name)
        run = getattr(module, function)
        validation_error = getattr(module, "BackfillValidationError", None)
        bootstrap = KafkaAdminHook(kafka_conn_id=self.kafka_conn_id).bootstrap_servers
        self.log.info(
            "backfill %s [%s, %s) from %s -> %s (publish: %s)",
            self.topic,
            self.interval_start,
            self.interval_end,
            bootstrap,
            self.output_dir,
            self.publish_topic or "no",
        )
        try:
            result = run(
                bootstrap_servers=bootstrap,
                topic=self.topic,
                output_dir=self.output_dir,
                interval_start=self.interval_start,
                interval_end=self.interval_end,
                publish_topic=self.publish_topic or None,
                report_dir=self.report_dir or None,
                window_ms=int(self.window_ms),
            )
        except Exception as exc:
            if validation_error is None or not isinstance(exc, validation_error):
                raise
            summary = getattr(exc, "report_summary", "")
            where = getattr(exc, "report_json", None)
            self.log.error("validation failed, nothing written or published; report: %s\n%s", where, summary)
            raise AirflowFailException(
                f"backfill validation failed ({', '.join(getattr(exc, 'failed', []) or [])}); "
                f"nothing was published; report at {where}"
            ) from exc
        self.log.info("backfill passed: %s", result.get("report_summary", result))
        return result
