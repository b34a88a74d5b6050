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

**"Run Backfill" covers UTC days that are over.** The schedule is daily (UTC) with data
intervals, and Airflow backfills complete data intervals only: a day is backfillable from the next
00:00 UTC. Picking today in the dialog (alone or as the last day) creates no run for today: the
dialog says "No runs matching selected criteria" when today is the only day. Its default "Missing
Runs" also leaves out a day that already has a run: unpausing the DAG starts the scheduled run of
yesterday, so for a day already run pick "All Runs". For the hours of today already over, use
Trigger with *Range start* and *Range end* (and *chunk_hours* 1): hours not yet over are rejected.

**One run at a time** (`max_active_runs=1`): a scheduled, a manual (which covers the same day:
yesterday) and a backfill run of the same day would otherwise write that day's Parquet directory
and publish under its `transactional.id` at the same time, overwriting and fencing each other.
Within a run, mapped tasks still run two at a time (the pool's slots).

**Running a range**: Airflow's own backfill is the way: the UI's "Run Backfill" on this DAG, or
`airflow backfill create --dag-id streams_spark_backfill --from-date 2026-01-01 --to-date
2026-01-07` (one run per daily data interval, each one mapped task). A manual trigger can also
set *range_start* and *range_end*; the range is cut into *chunk_hours* intervals, and every
*intervals_per_task* of them are one mapped task (named by its span in the UI) that backfills
them in one Spark session from one read of the topic; each interval is still validated, written
and published on its own, so its output is the same whichever way it ran. Mapped tasks run two
at a time (the pool's slots).
`scripts/trigger_backfill.py` does the latter through the REST API and prints each failing
task's reason.

**Outcomes per interval**: no input record: the task is **skipped** with that message; a failed
suite: the task **fails**, its log lists the failing expectations and the report path, and its
"Data Docs" link opens the report; intervals ending in the future are **rejected** when planned
(left out, logged). **Scheduled**: daily, `catchup=False`, so unpausing starts at most the run for
the last complete day, which is skipped when that day has no data instead of failing.

Spark tasks run in the pool `streams_spark` (create it: `airflow pools set streams_spark 2
"Spark sessions"`; the demo does) with an execution timeout; failures go to the pluggable
notifier of `streams_ops.notifications.failure`. Outputs are assets: the Parquet root
(`streams.payments_spend.parquet`, an event per successful task) and the publish topic, through
the alias `streams.payments_spend.published`: a task that published rows adds an event to the
topic's asset (`kafka://<kafka_conn_id>/<topic>`, the Kafka provider's URI scheme), one that
published nothing adds none. Each event's extra names the interval(s), rows, path and Data Docs.

The job is `spark_jobs.payments_backfill.main:run_backfill`; Spark is imported by the task only.
Connection: `streams_kafka` (the Kafka provider's `kafka` type, extra `bootstrap.servers`).
"""

from __future__ import annotations

from datetime import UTC, timedelta

import pendulum
from airflow.sdk import Asset, AssetAlias, CronDataIntervalTimetable, Param, dag, task
from streams_ops.notifications.failure import failure_callbacks
from streams_ops.operators.spark_backfill_batch import SparkBackfillBatchOperator

MAX_INTERVALS = 400
PUBLISH_TOPIC = "demo-payments-spend-backfill"
PARQUET_ASSET = Asset(
    name="streams.payments_spend.parquet", uri="file:///streams-runtime/backfill/payments_spend"
)
PUBLISHED_ALIAS = AssetAlias(name="streams.payments_spend.published")


@dag(
    dag_id="streams_spark_backfill",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    description="Daily (UTC) Spark backfill; Run Backfill covers days already over (see the docs)",
    doc_md=__doc__,
    tags=["streams", "spark", "backfill", "great-expectations"],
    default_args={
        "owner": "streams-platform",
        "retries": 1,
        "retry_delay": timedelta(minutes=2),
        "on_failure_callback": failure_callbacks(),
    },
    render_template_as_native_obj=True,
    # two runs of one day at once (scheduled, manual, backfill) would overwrite each other's Parquet
    # and fence each other's publish transaction: one run at a time (see the doc above)
    max_active_runs=1,
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
        "intervals_per_task": Param(
            1,
            type="integer",
            minimum=1,
            maximum=MAX_INTERVALS,
            title="Intervals per task",
            description="Range runs: intervals one task backfills in one Spark session and one read.",
        ),
        "topic": Param("demo-payments", type="string", minLength=1, title="Input topic"),
        "output_dir": Param(
            None,
            type=["null", "string"],
            title="Parquet output root",
            description="Empty: <STREAMS_RUNTIME_HOME>/backfill/payments_spend.",
        ),
        "publish": Param(
            "none",
            type="string",
            enum=["none", "publish"],
            values_display={
                "none": "none: validate and write Parquet, publish nothing",
                "publish": "publish the validated rows to the publish topic",
            },
            title="Publish",
        ),
        "publish_topic": Param(PUBLISH_TOPIC, type="string", minLength=1, title="Publish topic"),
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
        elif data_interval_start is None or data_interval_end is None:
            # a manual run triggered without a logical date (the REST API's default) has no data
            # interval: the day the UI's form would cover, the last UTC day that is over
            stop = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
            begin, step = stop - timedelta(days=1), timedelta(days=1)
            print(f"no data interval (a run without a logical date): the last day over, [{begin}, {stop})")
        else:
            begin, stop = data_interval_start, data_interval_end
            step = stop - begin
        if not begin < stop:
            raise ValueError(f"empty interval: [{begin}, {stop})")
        if (stop - begin) / step > MAX_INTERVALS:
            raise ValueError(f"more than {MAX_INTERVALS} intervals; raise chunk_hours or shorten the range")
        now = datetime.now(UTC)
        intervals, rejected, cursor = [], [], begin
        while cursor < stop:
            upper = min(cursor + step, stop)
            item = {"interval_start": cursor.isoformat(), "interval_end": upper.isoformat()}
            (rejected if upper > now else intervals).append(item)
            cursor = upper
        for item in rejected:
            print(f"REJECTED [{item['interval_start']}, {item['interval_end']}): ends in the future")
        if not intervals:
            from airflow.sdk.exceptions import AirflowSkipException

            raise AirflowSkipException(f"all {len(rejected)} interval(s) end in the future: nothing to do")
        size = int(params.get("intervals_per_task") or 1)
        batches = [
            {
                "intervals": intervals[i : i + size],
                "interval_start": intervals[i]["interval_start"],
                "interval_end": intervals[min(i + size, len(intervals)) - 1]["interval_end"],
            }
            for i in range(0, len(intervals), size)
        ]
        print(
            f"planned {len(intervals)} interval(s) in {len(batches)} task(s), "
            f"rejected {len(rejected)} in the future"
        )
        return batches

    @task
    def output_dir(params=None) -> str:
        """The Parquet root: the Param, or the runtime home's ``backfill/payments_spend``."""
        if params.get("output_dir"):
            return params["output_dir"]
        from streams_runtime.brokers import runtime_home

        return str(runtime_home() / "backfill" / "payments_spend")

    SparkBackfillBatchOperator.partial(
        task_id="backfill",
        topic="{{ params.topic }}",
        output_dir=output_dir(),
        publish_topic="{{ params.publish_topic if params.publish == 'publish' else 'none' }}",
        window_ms="{{ params.window_ms }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
        pool="streams_spark",
        execution_timeout=timedelta(hours=1),
        max_active_tis_per_dagrun=2,
        map_index_template="{{ task.interval_start }} to {{ task.interval_end }}",
        outlets=[PARQUET_ASSET, PUBLISHED_ALIAS],
    ).expand_kwargs(plan_intervals())


streams_spark_backfill()
