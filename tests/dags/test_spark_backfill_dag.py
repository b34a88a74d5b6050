"""The Spark backfill DAG end to end: a range cut into mapped hourly intervals, a known answer,
and a seeded bad record that fails the suite and publishes nothing.

Runs the colleague's job (``spark_jobs.payments_backfill.main:run_backfill``) inside ``dag.test()``
on the run's shared local SparkSession (tests/conftest.py's ``spark``).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.history import KEEP_HISTORY

pytestmark = [pytest.mark.spark, pytest.mark.kafka]

DAG_ID = "streams_spark_backfill"
H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
USERS = ["user-0", "user-1", "user-2"]


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


def payments(n: int = 60) -> list[tuple[str, dict, int]]:
    """(user, payment, timestamp ms): one payment every 3 minutes from T0 - 30 min on (3 hours)."""
    rng = random.Random(11)
    return [
        (
            user,
            {"payment_id": i, "user": user, "amount": round(rng.uniform(1, 50), 2)},
            T0 - H // 2 + i * 180_000,
        )
        for i in range(n)
        for user in [rng.choice(USERS)]
    ]


def seed(bootstrap_servers: str, topic: str, records, partitions: int = 2) -> None:
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics

    create_topics(create_admin(bootstrap_servers), [TopicSpec(topic, partitions, config=KEEP_HISTORY)])
    producer = create_producer(bootstrap_servers)
    for i, (user, payment, ts) in enumerate(records):
        producer.produce(
            topic,
            key=str(user).encode(),
            value=json.dumps(payment).encode(),
            timestamp=ts,
            partition=i % partitions,
        )
    assert producer.flush(30) == 0


def known_answer(records, start: int, end: int) -> dict[tuple[str, int], tuple[int, float]]:
    """(user, window start) -> (count, total), by hand."""
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for user, payment, ts in records:
        if start <= ts < end:
            groups[(user, ts - ts % H)].append(payment["amount"])
    return {k: (len(v), round(sum(v), 2)) for k, v in groups.items()}


def end_offsets(bootstrap_servers: str, topic: str) -> int:
    from streams_ops.offsets import EOF_OVERRIDES, true_end_offsets

    from streams_runtime.kafka.clients import create_consumer

    consumer = create_consumer(bootstrap_servers, "backfill-dag-test", EOF_OVERRIDES)
    try:
        return sum(true_end_offsets(consumer, topic, 1).values())
    finally:
        consumer.close()


def read_committed(bootstrap_servers: str, topic: str) -> list:
    """The committed records of ``topic`` (one partition), as a read_committed reader sees them."""
    from tests.spark_jobs.test_transactional_publish import read_to_end

    return read_to_end(bootstrap_servers, topic, committed=True)


def test_backfill_dag_recomputes_each_interval_of_a_range_and_refuses_one_with_a_bad_record(
    spark, run_dag, kafka_conn, bootstrap_servers, unique_name, tmp_path
) -> None:
    """One run over [T0, T0 + 2h) in hourly chunks: hour 1 matches the known answer and is
    published; hour 2 holds a negative payment, so its suite fails and it publishes nothing."""
    from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics

    records = payments()
    bad = ("mallory", {"payment_id": 999, "user": "mallory", "amount": -40.0}, T0 + H + 60_000)
    topic, spend, out = unique_name("pay"), unique_name("spend"), tmp_path / "out"
    seed(bootstrap_servers, topic, [*records, bad])
    create_topics(create_admin(bootstrap_servers), [TopicSpec(spend, 1)])

    run = run_dag(
        DAG_ID,
        range_start=iso(T0),
        range_end=iso(T0 + 2 * H),
        chunk_hours=1,
        topic=topic,
        output_dir=str(out),
        publish="publish",
        publish_topic=spend,
    )

    assert run.state == "failed"
    assert run.task_states() == {
        "output_dir": "success",
        "plan_intervals": "success",
        "backfill[0]": "success",
        "backfill[1]": "failed",
    }
    assert "expect_column_values_to_be_between(column=total_amount" in run.xcom(
        "backfill", map_index=1, key="failure"
    )
    assert run.xcom("backfill", map_index=1, key="data_docs_url").startswith("file://")
    docs = run.xcom("backfill", map_index=0, key="data_docs_url")
    assert docs.startswith("file://") and Path(docs[len("file://") :]).is_file(), docs
    batch, want = run.xcom("backfill", map_index=0), known_answer(records, T0, T0 + H)
    [result] = batch["intervals"]
    assert result["status"] == "passed"
    assert (result["interval_start_ms"], result["interval_end_ms"]) == (T0, T0 + H)
    assert result["source_records"] == sum(count for count, _ in want.values())
    assert result["rows"] == len(want) == result["published"]
    assert end_offsets(bootstrap_servers, spend) == result["rows"] + 1, (
        "only the passing interval published: its rows and one transaction commit marker"
    )
    committed = read_committed(bootstrap_servers, spend)
    assert len(committed) == result["rows"], "read_committed: the interval's rows, once"
    assert {dict(m.headers())["backfill.publish_id"].decode() for m in committed} == {result["publish_id"]}
    assert result["transactional_id"] == f"spark-backfill.payments_backfill.{spend}.{result['interval_id']}"
    assert (out / "_published" / result["interval_id"] / f"{spend}.json").exists(), "the published marker"
    written = {p.name for p in out.iterdir() if p.name.startswith("interval_id=")}
    assert written == {f"interval_id={result['interval_id']}"}, "the failing interval wrote nothing"
    reports = [json.loads(p.read_text()) for p in (out / "_validation").rglob("validation.json")]
    assert sorted(r["success"] for r in reports) == [False, True], "the failed report is left for the user"
    # outputs as assets: the Parquet root, and the topic's own asset through the alias (rows published)
    events = run.asset_events()
    assert [(task, uri) for task, uri, _ in events] == sorted(
        [
            ("backfill[0]", "file:///streams-runtime/backfill/payments_spend"),
            ("backfill[0]", f"kafka://streams_kafka/{spend}"),
        ]
    ), events
    assert all(
        extra["rows"] == result["rows"] and extra["published"] == result["rows"] for _, _, extra in events
    )
    # the same hour again, publishing nothing: an event on the Parquet asset only
    again = run_dag(DAG_ID, range_start=iso(T0), range_end=iso(T0 + H), topic=topic, output_dir=str(out))
    assert again.state == "success"
    assert [(task, uri) for task, uri, _ in again.asset_events()] == [
        ("backfill[0]", "file:///streams-runtime/backfill/payments_spend")
    ]


def test_empty_intervals_are_skipped_and_future_ones_rejected(
    spark, run_dag, kafka_conn, bootstrap_servers, unique_name, tmp_path
) -> None:
    """A range from an hour with no data to the day after tomorrow: the past intervals hold no
    record and are skipped, the one ending in the future is left out of the plan; the run succeeds."""
    import math
    from datetime import timedelta

    topic = unique_name("sparse")
    seed(bootstrap_servers, topic, payments())  # data around T0 only
    start_ms, end = T0 + 5 * H, datetime.now(UTC) + timedelta(days=2)
    chunk = math.ceil((end.timestamp() * 1000 - start_ms) / H / 3)  # three intervals, the last in the future
    run = run_dag(
        DAG_ID,
        range_start=iso(start_ms),
        range_end=end.isoformat(),
        chunk_hours=chunk,
        topic=topic,
        output_dir=str(tmp_path / "out"),
    )
    assert run.state == "success"
    states = run.task_states()
    assert states == {
        "output_dir": "success",
        "plan_intervals": "success",
        "backfill[0]": "skipped",
        "backfill[1]": "skipped",
    }, states
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("interval_id=*"))


def test_a_range_in_the_future_is_rejected_when_planned(run_dag, kafka_conn, unique_name, tmp_path) -> None:
    """Intervals ending after now are left out of the plan; with none left the run skips, not fails."""
    from datetime import timedelta

    start = datetime.now(UTC) + timedelta(days=2)
    run = run_dag(
        DAG_ID,
        range_start=start.isoformat(),
        range_end=(start + timedelta(days=1)).isoformat(),
        topic=unique_name("future"),
        output_dir=str(tmp_path / "out"),
    )
    assert run.state == "success"
    states = run.task_states()
    assert states["plan_intervals"] == "skipped" and states["backfill"] == "skipped", states


def test_a_run_without_a_logical_date_plans_the_last_day_over(airflow_db) -> None:
    """A manual run triggered through the REST API without a logical date has no data interval;
    its plan is the day the UI's form covers (yesterday, UTC), not a TypeError."""
    from datetime import timedelta

    from airflow.dag_processing.dagbag import DagBag

    dag = DagBag(dag_folder=str(Path(__file__).resolve().parents[2] / "dags")).get_dag(DAG_ID)
    plan = dag.get_task("plan_intervals").python_callable
    params = {"range_start": None, "range_end": None, "chunk_hours": 1, "intervals_per_task": 1}
    [batch] = plan(params=params, data_interval_start=None, data_interval_end=None)
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    assert batch["intervals"] == [
        {"interval_start": (midnight - timedelta(days=1)).isoformat(), "interval_end": midnight.isoformat()}
    ]
