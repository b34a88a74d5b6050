"""
### Spark backfill of per-user windowed spend

Recomputes, with Spark, what the stream application computes (spend per user per tumbling
window) from the input topic's records, validates the result with a Great Expectations suite,
writes Parquet (one directory per interval, overwritten when the interval is re-run), and
publishes the rows to *publish_topic* only when the suite passed, in one Kafka transaction per
interval (`transactional.id` `spark-backfill.payments_backfill.<topic>.<interval>`, so a retried
task fences the attempt before it). **Readers of *publish_topic* must use
`isolation.level=read_committed`**: they see an interval's rows all at once or not at all. A failed
publish aborts its transaction and fails the task; the retry publishes the interval whole. A re-run
of an interval whose result did not change publishes nothing (the marker
`_published/<interval>/<topic>.json` under the output directory says it is on the topic); a
changed result is published again in full, in a new transaction. A failed suite fails the task,
publishes nothing, and leaves the validation report under the output directory
(`_validation/<interval>/`), whose path the task log prints.

**Scheduled**: one run per daily data interval `[data_interval_start, data_interval_end)`.
**Triggered for a range**: set *range_start* and *range_end* (ISO date-times); the range is cut
into *chunk_hours* intervals, one mapped task each, so every interval's output is the same
whether it was backfilled by a schedule or by a range.

The job is `spark_jobs.payments_backfill.main:run_backfill`; Spark is imported by the task only.
Connection: `streams_kafka`, see `plugins/streams_ops/hooks/kafka_admin.py`.
"""

from __future__ import annotations

from datetime import UTC, timedelta

import pendulum
from airflow.sdk import CronDataIntervalTimetable, Param, dag, task
from streams_ops.operators.spark_backfill import SparkBackfillOperator

MAX_INTERVALS = 400


@dag(
    dag_id="streams_spark_backfill",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    doc_md=__doc__,
    tags=["streams", "spark", "backfill", "great-expectations"],
    default_args={"owner": "streams-platform", "retries": 1, "retry_delay": timedelta(minutes=2)},
    render_template_as_native_obj=True,
    max_active_runs=2,
    params={
        "range_start": Param(
            None,
            type=["null", "string"],
            format="date-time",
            title="Range start",
            description="With range end: backfill this range instead of the run's data interval.",
        ),
        "range_end": Param(None, type=["null", "string"], format="date-time", title="Range end (exclusive)"),
        "chunk_hours": Param(24, type="integer", minimum=1, title="Hours per interval (range runs)"),
        "topic": Param("demo-payments", type="string", minLength=1, title="Input topic"),
        "output_dir": Param(
            "",
            type="string",
            title="Parquet output root",
            description="Empty: <STREAMS_RUNTIME_HOME>/backfill/payments_spend.",
        ),
        "publish_topic": Param(
            "",
            type="string",
            title="Publish topic",
            description="Empty: validate and write, publish nothing.",
        ),
        "window_ms": Param(3_600_000, type="integer", minimum=1000, title="Window size (ms)"),
        "kafka_conn_id": Param("streams_kafka", type="string", title="Kafka connection id"),
    },
)
def streams_spark_backfill():
    @task
    def plan_intervals(params=None, data_interval_start=None, data_interval_end=None) -> list[dict]:
        """The intervals to backfill: the data interval, or the Params' range cut in chunks."""
        from datetime import datetime

        def parse(value: str) -> datetime:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

        start, end = params.get("range_start"), params.get("range_end")
        if bool(start) != bool(end):
            raise ValueError("give both range_start and range_end, or neither")
        if start:
            begin, stop, step = parse(start), parse(end), timedelta(hours=int(params["chunk_hours"]))
        else:
            begin, stop = data_interval_start, data_interval_end
            step = stop - begin
        if not begin < stop:
            raise ValueError(f"empty interval: [{begin}, {stop})")
        if (stop - begin) / step > MAX_INTERVALS:
            raise ValueError(f"more than {MAX_INTERVALS} intervals; raise chunk_hours or shorten the range")
        intervals, cursor = [], begin
        while cursor < stop:
            upper = min(cursor + step, stop)
            intervals.append({"interval_start": cursor.isoformat(), "interval_end": upper.isoformat()})
            cursor = upper
        return intervals

    @task
    def output_dir(params=None) -> str:
        """The Parquet root: the Param, or the runtime home's ``backfill/payments_spend``."""
        if params.get("output_dir"):
            return params["output_dir"]
        from streams_runtime.kafka.broker import runtime_home

        return str(runtime_home() / "backfill" / "payments_spend")

    SparkBackfillOperator.partial(
        task_id="backfill",
        topic="{{ params.topic }}",
        output_dir=output_dir(),
        publish_topic="{{ params.publish_topic }}",
        window_ms="{{ params.window_ms }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
        max_active_tis_per_dagrun=1,
    ).expand_kwargs(plan_intervals())


streams_spark_backfill()
