"""A week of hourly backfill intervals end to end through Airflow: batched next to one JVM per interval.

A topic of N payments (default 5,040,000: 30,000 an hour for 168 hours, 4 partitions, timestamps
spread evenly over 2025-03-03T00:00Z .. +7 days) is produced to the embedded broker (or
``$BOOTSTRAP_SERVERS``) by the bench's own loop (confluent-kafka, lz4, large batches, progress
printed). Then ``airflow standalone`` starts (as the demo starts it) and runs
``streams_spark_backfill`` in one or both modes, each a manual run over a range with
``chunk_hours=1`` and ``publish=none``:

1. **batched** (this design): the whole week, ``intervals_per_task`` hourly intervals per mapped
   task (default 84: two tasks, the ``streams_spark`` pool's two slots), each task one Spark
   session and one read of the topic, one aggregation over its intervals, each interval validated
   on its own. The run must succeed with all 168 intervals passed.
2. **per-interval** (the design before): ``intervals_per_task=1``, so every interval is its own
   task: its own Spark JVM and its own read of the topic (on the embedded broker, which has no
   ``offsets_for_times``, the whole topic up to its true end), two at a time. Run over the first
   ``--old-hours`` hours of the week (default 4; 0 = all 168) and, if fewer than 168, projected
   to 168 as ``wall(sample) * 168 / sample``: every hour holds the same number of records, so
   each interval's task costs the same.

Wall time runs from the trigger to the run's end (Airflow's scheduling included); records/s =
input records covered / wall time. Both modes read the same topic and write Parquet to their own
directories.

Run:  .venv/bin/python bench/backfill_throughput.py [--records 5040000] [--mode both]
      [--intervals-per-task 84] [--old-hours 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from streams_runtime.brokers import EmbeddedBroker
from streams_runtime.demo.airflow_standalone import BACKFILL_DAG_ID, AirflowClient, AirflowStandalone
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics

START = datetime(2025, 3, 3, tzinfo=UTC)
HOURS = 168


def produce(servers: str, topic: str, records: int, partitions: int, hours: int) -> float:
    """The payments, evenly spread over ``hours``; prints progress; returns the seconds it took."""
    producer = Producer(
        {
            "bootstrap.servers": servers,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "batch.num.messages": 50_000,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "acks": "1",
        }
    )
    failed: list[str] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None and len(failed) < 5:
            failed.append(str(err))

    start_ms, span_ms = int(START.timestamp() * 1000), hours * 3_600_000
    users = [f"user-{u}".encode() for u in range(1000)]
    began = last = time.perf_counter()
    step = max(records // 20, 1)
    for i in range(records):
        user = users[i % 1000]
        value = b'{"payment_id": %d, "user": "%s", "amount": %.2f}' % (i, user, (i % 9973) / 100)
        timestamp = start_ms + (i * span_ms) // records
        try:
            producer.produce(
                topic, value, user, partition=i % partitions, timestamp=timestamp, on_delivery=delivered
            )
        except BufferError:
            producer.poll(0.1)
            producer.produce(
                topic, value, user, partition=i % partitions, timestamp=timestamp, on_delivery=delivered
            )
        if i % 20_000 == 0:
            producer.poll(0)
        if (i + 1) % step == 0:
            now = time.perf_counter()
            print(
                f"  produced {i + 1:>10,} / {records:,}  ({step / (now - last):,.0f} records/s)",
                flush=True,
            )
            last = now
    if producer.flush(300):
        raise RuntimeError("records left undelivered after 300 s")
    if failed:
        raise RuntimeError(f"delivery failed: {failed}")
    return time.perf_counter() - began


def run_range(
    client: AirflowClient, topic: str, out: Path, hours: int, per_task: int, label: str
) -> tuple[float, dict[str, str]]:
    """One manual run over ``[START, START + hours)`` in hourly intervals; wall seconds and task states."""
    conf = {
        "range_start": START.isoformat(),
        "range_end": (START + timedelta(hours=hours)).isoformat(),
        "chunk_hours": 1,
        "intervals_per_task": per_task,
        "topic": topic,
        "output_dir": str(out),
        "publish": "none",
    }
    began = time.perf_counter()
    run_id = client.trigger(BACKFILL_DAG_ID, conf)
    last, deadline = "", time.monotonic() + 4 * 3600
    while True:  # poll the run and its tasks, print each change of progress
        state = client.run_state(BACKFILL_DAG_ID, run_id)
        states = [
            s for t, s in client.task_states(BACKFILL_DAG_ID, run_id).items() if t.startswith("backfill")
        ]
        done = sum(s in ("success", "failed", "skipped", "upstream_failed") for s in states)
        now = f"{state}: {done} of {len(states)} backfill task(s) done"
        if now != last:
            print(f"  [{label}] {time.perf_counter() - began:7.1f} s  {now}", flush=True)
            last = now
        if state in ("success", "failed") or time.monotonic() > deadline:
            break
        time.sleep(2.0)
    wall = time.perf_counter() - began
    tasks = client.task_states(BACKFILL_DAG_ID, run_id)
    if state != "success" or any(s != "success" for t, s in tasks.items()):
        raise RuntimeError(f"{label} run {run_id} ended {state}: {tasks}")
    passed = len(list(out.glob("interval_id=*")))
    if passed != hours:
        raise RuntimeError(f"{label}: {passed} interval directories written, expected {hours}")
    return wall, tasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=5_040_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--mode", choices=["both", "batched", "per-interval"], default="both")
    parser.add_argument("--intervals-per-task", type=int, default=84)
    parser.add_argument("--old-hours", type=int, default=4, help="per-interval mode: hours run (0: all 168)")
    args = parser.parse_args()
    old_hours = args.old_hours or HOURS
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    configured = os.environ.get("BOOTSTRAP_SERVERS")
    with (
        nullcontext(configured) if configured else EmbeddedBroker() as broker,
        tempfile.TemporaryDirectory(prefix="bench-backfill-") as tmp,
    ):
        servers = configured or broker.bootstrap_servers
        home = Path(tmp)
        topic = f"bench-backfill-{int(time.time())}"
        create_topics(create_admin(servers), [TopicSpec(topic, args.partitions)])
        print(
            f"producing {args.records:,} payments over {HOURS} hours to {topic} "
            f"({args.partitions} partitions)"
        )
        took = produce(servers, topic, args.records, args.partitions, HOURS)
        print(f"produced {args.records:,} records in {took:.1f} s ({args.records / took:,.0f} records/s)")

        standalone = AirflowStandalone(
            servers,
            home=home / "airflow",
            log_file=home / "airflow.log",
            # no scheduled run next to the measured ones (unpausing would start one for yesterday)
            extra_env={"STREAMS_RUNTIME_HOME": str(home), "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False"},
        )
        rows = []
        with standalone:
            began = time.perf_counter()
            client = standalone.wait_ready(timeout=300)
            client.wait_for_dag(BACKFILL_DAG_ID)
            client.unpause(BACKFILL_DAG_ID)
            print(f"airflow standalone ready in {time.perf_counter() - began:.1f} s at {standalone.url}")
            if args.mode in ("both", "batched"):
                wall, tasks = run_range(
                    client, topic, home / "batched", HOURS, args.intervals_per_task, "batched"
                )
                n = sum(1 for t in tasks if t.startswith("backfill"))
                rows.append(
                    (f"batched: {args.intervals_per_task} intervals per task, {n} task(s)", HOURS, wall, wall)
                )
                print(
                    f"batched: {HOURS} intervals in {wall:.1f} s ({args.records / wall:,.0f} records/s)",
                    flush=True,
                )
            if args.mode in ("both", "per-interval"):
                wall, _ = run_range(client, topic, home / "per_interval", old_hours, 1, "per-interval")
                rows.append(
                    (
                        f"one JVM per interval: {old_hours} of {HOURS} run",
                        old_hours,
                        wall,
                        wall * HOURS / old_hours,
                    )
                )
                print(f"one JVM per interval: {old_hours} interval(s) in {wall:.1f} s", flush=True)
    per_hour = args.records / HOURS
    print(
        f"\n{args.records:,} records, {HOURS} hourly intervals ({per_hour:,.0f} per interval), "
        "through Airflow:"
    )
    print(f"{'mode':<48} {'ran':>5} {'wall s':>9} {'168 intervals s':>16} {'records/s':>10}")
    for label, ran, wall, full in rows:
        note = "" if ran == HOURS else " (projected)"
        print(f"{label:<48} {ran:>5} {wall:>9.1f} {full:>16.1f} {args.records / full:>10,.0f}{note}")
    if len(rows) == 2:
        print(f"speed-up of batched over one JVM per interval: {rows[1][3] / rows[0][3]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
