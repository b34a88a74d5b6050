"""
### State rebuild of a stream application's store

Rebuilds a state store of a running stream application, task by task, through the workers' admin
endpoint. Any one worker given is asked which instance of the group runs each of the store's
tasks (`GET /admin/stores/{store}/instances`, from the group's assignment); each instance then
rebuilds its own (`POST /admin/stores/{store}/rebuild`), so every partition is rebuilt exactly
once, and a partition that was not (an instance down, a task moved) fails the run by name. Each
owning task is committed and closed, its
local state directory wiped, the task re-created so it **restores from the changelog**, and once
restored (before it processes again) the store's key count is compared with the changelog's
distinct live keys, read to the partition's true end. The task fails with a per-task report on any
mismatch; the report is also the run's XCom (`rebuild`, and `report` on success).

**Modes**
- `restore`: local state is suspect (disk trouble, a bad deploy): rebuild it from the changelog.
- `recompute`: the stream logic was wrong, so the changelog is wrong too. The store is recomputed
  with Spark from the input topic up to the application's committed offsets
  (`recompute_job`, default: the demo app's `payment-totals` store), validated by its Great
  Expectations suite (report under the output directory), and **only when it passed** the
  changelog is rewritten (a new record for every recomputed key, a tombstone for every key that
  no longer exists), then the stores are rebuilt from it as in `restore` mode; each task's
  restored key count must also equal the recomputed keys of its partition. Stop the input while
  recomputing: if the tasks processed records between the recomputation and their rebuild, the
  run fails and says so (run it again). Outputs already emitted downstream are not re-emitted.

**Params**: *application* is `package.module:function` (the worker's `--app`) or a bare
application id (restore mode only); *workers* lists worker endpoints (`http://host:port`) or
Airflow Connection ids of them, asked in turn until one answers (one is enough; the instances are
reached at their advertised `application_server`); *tasks* limits the rebuild to some task ids
(`0_1`). The workers'
`application_server_token` is never a Param (it would land in the run's conf): endpoints given as
URLs take it from the password of the Connection *token_conn_id* (type `streams_worker`, default
`streams_worker`; none: no token), Connection ids carry their own.

**Gate**: in recompute mode a `ConsumerLagSensor` (deferrable) first waits until the
application's consumer group lags at most *max_input_lag* records on its input topic (default 0),
so the recomputation reads to offsets the application has really committed.

**Asset**: the rewritten changelog is an output. Its topic depends on the application, so the
`rewrite_changelog` task's outlet is the alias `streams.state_rebuild.rewritten_changelog`; each
rewrite adds an event to the topic's own asset (`kafka://<kafka_conn_id>/<changelog topic>`, the
Kafka provider's URI scheme) with the records written and tombstones per partition.

Failures go to the pluggable notifier of `streams_ops.notifications.failure`; the Spark
recomputation runs in the pool `streams_spark` with an execution timeout.

Connections: `streams_kafka` (recompute mode), see `plugins/streams_ops/hooks/kafka_admin.py`;
worker Connections, see `plugins/streams_ops/hooks/streams_worker.py`.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import Asset, AssetAlias, Param, dag, task
from streams_ops.notifications.failure import failure_callbacks
from streams_ops.operators.state_rebuild import RebuildStateStoreOperator
from streams_ops.sensors.consumer_lag import ConsumerLagSensor

DEFAULT_RECOMPUTE_JOB = "spark_jobs.payments_backfill.store_recompute:recompute_payment_totals"
CHANGELOG_ALIAS = AssetAlias(name="streams.state_rebuild.rewritten_changelog")


@dag(
    dag_id="streams_state_rebuild",
    schedule=None,
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    doc_md=__doc__,
    tags=["streams", "state", "rebuild", "spark"],
    default_args={
        "owner": "streams-platform",
        "retries": 1,
        "retry_delay": timedelta(seconds=30),
        "on_failure_callback": failure_callbacks(),
    },
    render_template_as_native_obj=True,
    max_active_runs=1,
    params={
        "application": Param(
            "streams_runtime.demo.app:app",
            type="string",
            minLength=1,
            title="Application",
            description="package.module:function returning (topology, config), or an application id.",
        ),
        "store": Param("payment-totals", type="string", minLength=1, title="State store"),
        "mode": Param(
            "restore",
            type="string",
            enum=["restore", "recompute"],
            title="Mode",
            description="restore: from the changelog; recompute: rewrite the changelog from Spark first.",
        ),
        "workers": Param(
            ["streams_worker"],
            type="array",
            items={"type": "string"},
            minItems=1,
            title="Workers",
            description=(
                "Connection ids (type streams_worker) or URLs of workers to ask for the group's "
                "instances; one is enough."
            ),
        ),
        "tasks": Param(
            [],
            type="array",
            items={"type": "string"},
            title="Tasks",
            description='Only these task ids (e.g. "0_1"); empty: every task owning the store.',
        ),
        "token_conn_id": Param(
            "streams_worker",
            type=["null", "string"],
            title="Token connection",
            description="Connection whose password is the workers' token (for endpoints given as URLs).",
        ),
        "rebuild_timeout": Param(300, type="integer", minimum=1, title="Restore timeout per worker (s)"),
        "max_input_lag": Param(
            0,
            type="integer",
            minimum=0,
            title="Input lag allowed before recomputing",
            description="Recompute mode waits (deferred) until the app's lag on its input is this low.",
        ),
        "recompute_job": Param(DEFAULT_RECOMPUTE_JOB, type="string", title="Recompute job (recompute mode)"),
        "output_dir": Param(
            None,
            type=["null", "string"],
            title="Recompute output directory",
            description="Empty: <STREAMS_RUNTIME_HOME>/state_rebuild/<application id>/<store>.",
        ),
        "kafka_conn_id": Param("streams_kafka", type="string", title="Kafka connection id"),
    },
)
def streams_state_rebuild():
    @task
    def resolve(params=None) -> dict:
        """The application's store: its changelog topic and source topics (checks the store exists)."""
        from airflow.sdk.exceptions import AirflowFailException
        from streams_ops.state_rebuild import StateRebuildError, resolve_application

        try:
            info = resolve_application(params["application"], params["store"]).as_dict()
        except StateRebuildError as exc:
            raise AirflowFailException(str(exc)) from exc
        if params["mode"] == "recompute" and len(info["source_topics"]) != 1:
            raise AirflowFailException(
                f"recompute mode needs an application given as module:function whose store reads exactly one "
                f"topic; {params['application']} gives source topics {info['source_topics']}"
            )
        return {**info, "mode": params["mode"]}

    @task.branch
    def choose_mode(info: dict) -> str:
        return "wait_for_input_consumed" if info["mode"] == "recompute" else "restore_only"

    @task
    def restore_only() -> str:
        return "restore mode: the changelog is used as it is"

    @task(pool="streams_spark", execution_timeout=timedelta(hours=2))
    def recompute(info: dict, params=None, run_id=None) -> dict:
        """Spark recomputation up to the committed input offsets, validated by its suite."""
        import importlib
        import os
        import sys
        from pathlib import Path

        from airflow.sdk.exceptions import AirflowFailException
        from streams_ops.hooks.kafka_admin import KafkaAdminHook
        from streams_ops.state_rebuild import EOF_OVERRIDES, committed_offsets

        from streams_runtime.kafka.clients import partition_counts

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        hook = KafkaAdminHook(kafka_conn_id=params["kafka_conn_id"])
        [topic] = info["source_topics"]
        partitions = partition_counts(hook.get_admin_client(), [topic])[topic]
        consumer = hook.get_consumer(info["application_id"], EOF_OVERRIDES)  # never subscribes: no join
        try:
            ending = committed_offsets(consumer, topic, partitions)
        finally:
            consumer.close()
        if params["output_dir"]:
            output = Path(params["output_dir"])
        else:
            from streams_runtime.brokers import runtime_home

            output = runtime_home() / "state_rebuild" / info["application_id"] / info["store"]
        output = output / str(run_id).replace(":", "_").replace("+", "_")
        module_name, _, function = params["recompute_job"].partition(":")
        module = importlib.import_module(module_name)
        try:
            result = getattr(module, function)(hook.bootstrap_servers, topic, output, ending_offsets=ending)
        except Exception as exc:
            if type(exc).__name__ != "StoreRecomputeValidationError":
                raise
            raise AirflowFailException(
                f"recomputation failed its suite; the changelog was NOT rewritten: {exc}"
            ) from exc
        result["input_offsets"] = {f"{topic}:{p}": o for p, o in result["input_offsets"].items()}
        print(
            f"recomputed {result['rows']} keys from {result['source_records']} records; "
            f"validation passed ({result['report_summary']})"
        )
        return result

    @task(outlets=[CHANGELOG_ALIAS])
    def rewrite_changelog(info: dict, recomputed: dict, params=None, outlet_events=None) -> dict:
        """Write every recomputed key and a tombstone for every vanished key to the changelog."""
        from streams_ops.hooks.kafka_admin import KafkaAdminHook
        from streams_ops.state_rebuild import EOF_OVERRIDES, read_rows
        from streams_ops.state_rebuild import rewrite_changelog as rewrite

        from streams_runtime.kafka.clients import partition_counts
        from streams_runtime.serdes import Serdes

        hook = KafkaAdminHook(kafka_conn_id=params["kafka_conn_id"])
        topic = info["changelog_topic"]
        partitions = partition_counts(hook.get_admin_client(), [topic])[topic]
        key_serde, value_serde = Serdes.String(), Serdes.Json()
        rows = read_rows(
            recomputed["rows_path"],
            lambda k: key_serde.serialize(topic, k),
            lambda v: value_serde.serialize(topic, v),
        )
        consumer = hook.get_consumer(f"{info['application_id']}-state-rebuild", EOF_OVERRIDES)
        try:
            stats = rewrite(hook.get_producer(), consumer, topic, partitions, rows)
        finally:
            consumer.close()
        for partition, counts in sorted(stats.items()):
            print(f"{topic}-{partition}: {counts}")
        result = {"changelog_topic": topic, "partitions": {str(p): s for p, s in stats.items()}}
        outlet_events[CHANGELOG_ALIAS].add(
            Asset(name=f"kafka.{topic}", uri=f"kafka://{params['kafka_conn_id']}/{topic}"),
            extra={**result, "application_id": info["application_id"]},
        )
        return result

    rebuild = RebuildStateStoreOperator(
        task_id="rebuild",
        store="{{ params.store }}",
        workers="{{ params.workers }}",
        tasks="{{ params.tasks }}",
        token_conn_id="{{ params.token_conn_id }}",
        rebuild_timeout="{{ params.rebuild_timeout }}",
        input_offsets="{{ (ti.xcom_pull(task_ids='recompute') or {}).get('input_offsets') }}",
        recomputed_keys="{{ (ti.xcom_pull(task_ids='recompute') or {}).get('keys_per_partition') }}",
        trigger_rule="none_failed_min_one_success",
    )

    @task
    def report(info: dict, rebuilt: dict, ti=None) -> dict:
        """What was done, per task (the run's summary XCom)."""
        recomputed = ti.xcom_pull(task_ids="recompute")
        rewritten = ti.xcom_pull(task_ids="rewrite_changelog")
        summary = {
            **info,
            "recompute": None
            if not recomputed
            else {
                k: recomputed[k]
                for k in ("source_records", "rows", "keys_per_partition", "input_offsets", "report_summary")
            },
            "changelog_rewrite": rewritten,
            "tasks": [
                {
                    k: r.get(k)
                    for k in (
                        "task_id",
                        "endpoint",
                        "changelog_partition",
                        "records_restored",
                        "store_key_count",
                        "changelog_live_keys",
                        "ok",
                        "problems",
                    )
                }
                for r in rebuilt["tasks"]
            ],
        }
        for row in summary["tasks"]:
            print(
                f"task {row['task_id']} on {row['endpoint']}: "
                f"{'rewritten changelog, ' if rewritten else ''}wiped and restored {row['records_restored']} "
                f"records, {row['store_key_count']} keys = {row['changelog_live_keys']} live changelog keys"
            )
        return summary

    info = resolve()
    branch = choose_mode(info)
    restore_path = restore_only()
    recomputed = recompute(info)
    rewritten = rewrite_changelog(info, recomputed)
    # recompute mode: the application must have consumed its input first (its committed offsets are
    # where the recomputation reads to, and records still in flight would be processed twice)
    caught_up = ConsumerLagSensor(
        task_id="wait_for_input_consumed",
        group_id="{{ ti.xcom_pull(task_ids='resolve')['application_id'] }}",
        topic="{{ ti.xcom_pull(task_ids='resolve')['source_topics'][0] }}",
        max_lag="{{ params.max_input_lag }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
        poke_interval=5,
        timeout=900,
    )
    branch >> [caught_up, restore_path]
    caught_up >> recomputed
    [rewritten, restore_path] >> rebuild
    report(info, rebuild.output)


streams_state_rebuild()
