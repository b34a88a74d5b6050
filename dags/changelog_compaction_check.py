"""
### Changelog compaction check

For every changelog topic of a stream application (`<application_id>-<store>-changelog`):
checks that `cleanup.policy` includes `compact`, reads the whole log to count records, distinct
keys and live keys, and computes the **superseded ratio** `(records - distinct keys) / records`:
the part of the log compaction should have removed, and that a restore replays for nothing.
The task fails, with a report naming each topic and problem, when a policy is wrong or a ratio
is above *max_superseded_ratio*; give *store_key_counts* to also compare the live keys with
the key count each store reports.

**On the embedded broker (Tansu) compaction never runs**: the report says so plainly, the ratios
then measure the full history, and they fail the check only with *fail_on_embedded*.

Connection: `streams_kafka`, see `plugins/streams_ops/hooks/kafka_admin.py`.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import Param, dag
from streams_ops.operators.compaction import ChangelogCompactionCheckOperator


@dag(
    dag_id="streams_changelog_compaction_check",
    schedule="@daily",
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    doc_md=__doc__,
    tags=["streams", "kafka", "state", "checks"],
    default_args={"owner": "streams-platform", "retries": 1, "retry_delay": timedelta(minutes=5)},
    render_template_as_native_obj=True,
    max_active_runs=1,
    params={
        "application_id": Param("demo-payments-app", type="string", minLength=1, title="Application id"),
        "max_superseded_ratio": Param(
            0.5,
            type="number",
            minimum=0,
            maximum=1,
            title="Max superseded ratio",
            description="Fail above this share of superseded records in a changelog.",
        ),
        "fail_on_embedded": Param(
            False,
            type="boolean",
            title="Fail on the embedded broker",
            description="Tansu never compacts; by default its ratios are reported, not failed.",
        ),
        "store_key_counts": Param(
            {},
            type="object",
            title="Store key counts",
            description='Optional {"<store>": <keys>} to compare with the changelog\'s live keys.',
        ),
        "kafka_conn_id": Param("streams_kafka", type="string", title="Kafka connection id"),
    },
)
def streams_changelog_compaction_check():
    ChangelogCompactionCheckOperator(
        task_id="check_changelogs",
        application_id="{{ params.application_id }}",
        max_superseded_ratio="{{ params.max_superseded_ratio }}",
        fail_on_embedded="{{ params.fail_on_embedded }}",
        store_key_counts="{{ params.store_key_counts }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
    )


streams_changelog_compaction_check()
