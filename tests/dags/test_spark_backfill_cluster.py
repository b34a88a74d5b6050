"""The backfill DAG on a Spark standalone cluster: a master and two workers started by
``scripts/spark_cluster.sh`` for this module, the master named by the ``streams_spark`` Airflow
connection, Apache Kafka read through Spark's own connector.

The DAG runs in a process of its own (``dag.test()`` there), as an Airflow task would: no Spark
session is active in it, so the task creates one on the cluster, ships the job's code to the
executors and stops the session when the job returns. The test checks the validated, published
result, that both workers ran executors of the application, and that the master lists it as
finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dags.test_spark_backfill_dag import (
    DAG_ID,
    T0,
    H,
    iso,
    known_answer,
    payments,
    read_committed,
    seed,
)
from tests.ports import free_port

pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.kafka_only]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "spark_cluster.sh"


def master_json(ui: str) -> dict:
    with urllib.request.urlopen(f"{ui}/json/", timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A master and two workers for this module; a failure to start fails the tests (an error)."""
    home = tmp_path_factory.mktemp("spark-cluster")
    port, ui_port = free_port(), free_port()
    env = {
        **os.environ,
        "SPARK_CLUSTER_DIR": str(home),
        "SPARK_MASTER_PORT": str(port),
        "SPARK_MASTER_WEBUI_PORT": str(ui_port),
        "PYTHON": sys.executable,
        # ~20 s on an idle machine; minutes when other JVMs crowd its two cores
        "START_TIMEOUT": "240",
    }
    started = subprocess.run(
        ["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=300
    )
    if started.returncode != 0:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=env, capture_output=True, timeout=60)
        pytest.fail(f"the Spark cluster did not start:\n{started.stdout}\n{started.stderr}")
    try:
        yield {"master": f"spark://127.0.0.1:{port}", "ui": f"http://127.0.0.1:{ui_port}", "home": str(home)}
    finally:
        stopped = subprocess.run(
            ["bash", str(SCRIPT), "stop"], env=env, capture_output=True, text=True, timeout=90
        )
        assert stopped.returncode == 0, stopped.stderr


RUN = """
import faulthandler, json, sys
faulthandler.dump_traceback_later(540)  # a run that hangs leaves its threads' stacks in its log
from airflow.dag_processing.dagbag import DagBag
from tests.dags.conftest import DAGS, DagRunResult
dag = DagBag(dag_folder=str(DAGS)).get_dag(sys.argv[1])
run = DagRunResult(dag.test(run_conf=json.loads(sys.argv[2])))
backfill = run.xcom("backfill", map_index=0)
failure = run.xcom("backfill", map_index=0, key="failure")
outcome = {"state": run.state, "tasks": run.task_states(), "backfill": backfill, "failure": failure}
print("RESULT " + json.dumps(outcome))
"""


def test_backfill_dag_runs_on_the_spark_cluster_and_publishes_the_validated_result(
    spark_cluster, airflow_db, airflow_env, bootstrap_servers, unique_name, tmp_path
) -> None:
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics

    records = payments()
    topic, spend, out = unique_name("pay-cluster"), unique_name("spend-cluster"), tmp_path / "out"
    seed(bootstrap_servers, topic, records)
    create_topics(create_admin(bootstrap_servers), [TopicSpec(spend, 1)])
    conf = {
        "range_start": iso(T0),
        "range_end": iso(T0 + H),
        "chunk_hours": 1,
        "topic": topic,
        "output_dir": str(out),
        "publish": "publish",
        "publish_topic": spend,
    }
    env = {
        **os.environ,
        **airflow_env,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "plugins")]),
        "PYSPARK_PYTHON": sys.executable,
        "AIRFLOW_CONN_STREAMS_KAFKA": json.dumps(
            {"conn_type": "kafka", "extra": {"bootstrap_servers": bootstrap_servers}}
        ),
        "AIRFLOW_CONN_STREAMS_SPARK": json.dumps(
            {
                "conn_type": "spark",
                "host": "spark://127.0.0.1",
                "port": int(spark_cluster["master"].rsplit(":", 1)[1]),
            }
        ),
    }
    log = tmp_path / "dag-run.log"
    with log.open("w") as sink:  # the run's log survives a timeout, for its diagnosis
        done = subprocess.run(
            [sys.executable, "-c", RUN, DAG_ID, json.dumps(conf)],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            timeout=600,
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, f"{done.stdout[-3000:]}\n{log.read_text()[-3000:]}"
    run = json.loads(lines[-1][len("RESULT ") :])
    assert run["state"] == "success", run
    assert run["tasks"] == {"output_dir": "success", "plan_intervals": "success", "backfill[0]": "success"}
    [result] = run["backfill"]["intervals"]
    want = known_answer(records, T0, T0 + H)
    assert run["backfill"]["read"]["reader"] == "kafka", "Apache Kafka is read through Spark's connector"
    assert result["status"] == "passed"
    assert result["source_records"] == sum(count for count, _ in want.values())
    assert result["rows"] == len(want) == result["published"]
    assert len(read_committed(bootstrap_servers, spend)) == result["rows"], "published once, committed"
    assert (out / f"interval_id={result['interval_id']}").is_dir()

    # the master ran it: one finished application, named after the task, with executors on both workers
    state = master_json(spark_cluster["ui"])
    apps = [a for a in state["completedapps"] if a["name"] == f"{DAG_ID}.backfill[0]"]
    assert [a["state"] for a in apps] == ["FINISHED"], state["completedapps"]
    app_id = apps[0]["id"]
    ran_on = [w for w in Path(spark_cluster["home"]).glob("work-*") if (w / app_id).is_dir()]
    assert len(ran_on) == 2, f"executors of {app_id} ran on {ran_on}"
    assert not state["activeapps"]
