"""
### Provision Kafka topics

Creates the topics the stream applications need and verifies the ones that exist.

**What is wanted**: the topics declared in `dags/specs/topics.yaml` (kept in the repo, reviewed
like code) plus the repartition and changelog topics of every topology named there or in the
*topologies* field below (`package.module:attr`). Internal topics get the partition count of
their sub-topology's tasks, as Kafka Streams would create them.

**What is verified**: partition count, replication factor, and every declared config
(cleanup policy, retention, ...), read back with the admin client's `describe_configs`.

**Fail closed**: if any existing topic differs, nothing is created and the task fails with a
report naming each difference. Fix the topic (or the spec) and run again; runs are idempotent.
**Dry run** only reports what would be created and what differs.

Connection: `streams_kafka` (extra `bootstrap_servers`), see `plugins/streams_ops/hooks/kafka_admin.py`.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import Param, dag
from streams_ops.operators.provisioning import ProvisionTopicsOperator


@dag(
    dag_id="streams_provision_topics",
    schedule=None,
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    doc_md=__doc__,
    tags=["streams", "kafka", "provisioning"],
    default_args={"owner": "streams-platform", "retries": 1, "retry_delay": timedelta(seconds=30)},
    render_template_as_native_obj=True,
    max_active_runs=1,
    params={
        "spec_file": Param(
            "specs/topics.yaml",
            type="string",
            title="Spec file",
            description="YAML or JSON topic spec; relative paths are relative to the DAGs folder.",
        ),
        "topologies": Param(
            [],
            type="array",
            items={"type": "string"},
            title="Extra topologies",
            description="package.module:attr of topologies whose internal topics to provision.",
        ),
        "dry_run": Param(False, type="boolean", title="Dry run", description="Only report; change nothing."),
        "kafka_conn_id": Param("streams_kafka", type="string", title="Kafka connection id"),
    },
)
def streams_provision_topics():
    ProvisionTopicsOperator(
        task_id="provision_topics",
        spec_file="{{ params.spec_file }}",
        topologies="{{ params.topologies }}",
        dry_run="{{ params.dry_run }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
    )


streams_provision_topics()
