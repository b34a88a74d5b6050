"""SparkBackfillOperator: run a Spark backfill job for one interval, validated before it publishes.

The job is the entry point of ``spark_jobs/`` (default: ``spark_jobs.payments_backfill.main:run_backfill``,
whose contract is in the module docstring there). It is imported inside ``execute`` only, so parsing
a DAG never imports ``pyspark`` or ``great_expectations``. The job reads the interval's records
from Kafka (the cluster of ``kafka_conn_id``), recomputes, validates with its Great Expectations
suite, writes Parquet idempotently and publishes only when the suite passed.

Outcomes, as the task shows them:

- an interval without input records is **skipped** (``AirflowSkipException``, the message says
  so): nothing validated, written or published;
- a failed suite **fails** the task without retries (the same data fails the same way); the log
  lists the failing expectations and the report's path, the "Data Docs" link opens the report,
  and XCom ``failure`` holds the reason (what ``scripts/trigger_backfill.py`` prints);
- a passed suite returns the job's result; the link opens the run's Data Docs and every outlet
  asset gets an event whose extra names the interval, the Parquet path and the Data Docs URL;
  an asset alias outlet stands for the published topic and gets an event on the topic's asset
  only when rows were published.

``publish_topic`` ``None``, empty or ``"none"`` publishes nothing.

Where Spark runs: the master of the ``spark_conn_id`` connection
(:class:`~streams_ops.hooks.spark.SparkMasterHook`: a standalone cluster ``spark://host:port``),
``local[*]`` in the task's process when that connection does not exist. The task creates the
session (:func:`spark_jobs.session.job_session`, which ships the job's code to a cluster's
executors) and stops it when the job returns, so the cluster lists the application as finished; a
session already active in the process (a test's) is borrowed instead and left running.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from streams_ops.links.data_docs import DataDocsLink, push_data_docs

DEFAULT_ENTRY_POINT = "spark_jobs.payments_backfill.main:run_backfill"
NO_PUBLISH = ("", "none")


def publish_target(value: Any) -> str | None:
    """The topic to publish to, or ``None`` for "publish nothing" (``None``, ``""``, ``"none"``)."""
    text = "" if value is None else str(value).strip()
    return None if text.lower() in NO_PUBLISH else text


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
    :param spark_conn_id: the Connection of the Spark master (see ``SparkMasterHook``); absent,
        the job runs on ``local[*]``.
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
        "spark_conn_id",
    )
    ui_color = "#fbe9d9"
    operator_extra_links = (DataDocsLink(),)

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
        spark_conn_id: str = "streams_spark",
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
        self.spark_conn_id = spark_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops.hooks.kafka_admin import KafkaAdminHook

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this interpreter
        module_name, _, function = self.entry_point.partition(":")
        module = importlib.import_module(module_name)
        run = getattr(module, function)
        validation_error = getattr(module, "BackfillValidationError", None)
        bootstrap = KafkaAdminHook(kafka_conn_id=self.kafka_conn_id).bootstrap_servers
        publish = publish_target(self.publish_topic)
        self.log.info(
            "backfill %s [%s, %s) from %s -> %s (publish: %s)",
            self.topic,
            self.interval_start,
            self.interval_end,
            bootstrap,
            self.output_dir,
            publish or "none",
        )
        ti = context["ti"]
        try:
            with self.spark_session(context) as spark:
                result = run(
                    bootstrap_servers=bootstrap,
                    topic=self.topic,
                    output_dir=self.output_dir,
                    interval_start=self.interval_start,
                    interval_end=self.interval_end,
                    publish_topic=publish,
                    report_dir=self.report_dir or None,
                    window_ms=int(self.window_ms),
                    spark=spark,
                )
        except Exception as exc:
            if validation_error is None or not isinstance(exc, validation_error):
                ti.xcom_push(key="failure", value=f"{type(exc).__name__}: {exc}")
                raise
            self._fail_validation(ti, exc)
        if result.get("status") == "empty":
            message = (
                f"interval [{self.interval_start}, {self.interval_end}) of {self.topic} has no input "
                "records: skipped (nothing validated, written or published)"
            )
            self.log.warning("%s", message)
            raise AirflowSkipException(message)
        if result.get("data_docs_url"):
            push_data_docs(ti, self.log, result["data_docs_url"])
        self._asset_events(context, result)
        self.log.info(
            "backfill passed: %s rows from %s records -> %s; Data Docs %s",
            result.get("rows"),
            result.get("source_records"),
            result.get("output_path"),
            result.get("data_docs_url"),
        )
        return result

    def spark_session(self, context: Any) -> Any:
        """The task's Spark session on the master of ``spark_conn_id`` (a context manager)."""
        from spark_jobs.session import job_session
        from streams_ops.hooks.spark import SparkMasterHook

        master = SparkMasterHook(spark_conn_id=self.spark_conn_id).master
        ti = context["ti"]
        app = f"{ti.dag_id}.{ti.task_id}" + (f"[{ti.map_index}]" if getattr(ti, "map_index", -1) >= 0 else "")
        self.log.info("Spark master %s (connection %s), application %s", master, self.spark_conn_id, app)
        return job_session(master, app_name=app)

    def _fail_validation(self, ti: Any, exc: Exception) -> None:
        failed = list(getattr(exc, "failed", []) or [])
        where = getattr(exc, "report_json", None)
        docs = getattr(exc, "data_docs_url", None)
        summary_path = getattr(exc, "report_summary", "")
        try:
            with open(summary_path) as handle:
                summary = handle.read()
        except OSError:
            summary = "(no summary file)"
        self.log.error(
            "validation FAILED, nothing written or published.\nfailing expectations:\n  %s\n"
            "report: %s\nData Docs: %s\n%s",
            "\n  ".join(failed),
            where,
            docs,
            summary,
        )
        reason = f"validation failed: {'; '.join(failed)}; report {where}; Data Docs {docs}"
        if docs:
            push_data_docs(ti, self.log, docs)
        ti.xcom_push(key="failure", value=reason)
        raise AirflowFailException(f"backfill {reason}; nothing was published") from exc

    def _asset_events(self, context: Any, result: dict[str, Any]) -> None:
        """Every asset outlet gets an event naming the interval, its Parquet path and its Data Docs;
        an asset alias outlet (the published topic) gets one on the topic's own asset
        (``kafka://<kafka_conn_id>/<topic>``) only when rows were published."""
        from airflow.sdk import Asset, AssetAlias

        events = context.get("outlet_events")
        if events is None:
            return
        extra = {
            k: result.get(k)
            for k in ("interval_id", "rows", "source_records", "output_path", "data_docs_url", "published")
        }
        topic = publish_target(self.publish_topic)
        for outlet in self.outlets or []:
            if not isinstance(outlet, AssetAlias):
                events[outlet].extra = extra
            elif topic and result.get("published"):
                asset = Asset(name=f"kafka.{topic}", uri=f"kafka://{self.kafka_conn_id}/{topic}")
                events[outlet].add(asset, extra=extra)
