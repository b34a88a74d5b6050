"""A week of hourly backfill intervals end to end through Airflow, next to one JVM per interval.

A topic of N payments (default 5,040,000: 30,000 an hour for 168 hours, 4 partitions, timestamps
spread evenly over 2025-03-03T00:00Z .. +7 days) is produced to the embedded broker (or
``$BOOTSTRAP_SERVERS``). Then:

1. **this design, through Airflow**: ``airflow standalone`` (as the demo starts it) and one manual
   run of ``streams_spark_backfill`` over the week, ``chunk_hours=1``, ``intervals_per_task``
   (default 24): 7 mapped tasks, two at a time in the ``streams_spark`` pool, each backfilling
   its 24 intervals in one Spark session from one read of the topic. Wall time from the trigger
   to the run's end; records/s = input records / wall time. The run must succeed with 168
   intervals passed.
2. **one JVM per interval** (the design before): the job's command line, one process (one Spark
   JVM, one read of the topic) per interval, run for ``--old-sample`` intervals (default 6) and
   extrapolated to 168 -- running all 168 would take most of an hour on this machine.

Both read the same topic and write Parquet to their own directories; neither publishes.

Run:  .venv/bin/python bench/backfill_throughput.py [--records 5040000] [--intervals-per-task 24]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streams_runtime.demo.airflow_standalone import BACKFILL_DAG_ID, AirflowStandalone
from streams_runtime.kafka.broker import EmbeddedBroker
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics

START = datetime(2025, 3, 3, tzinfo=UTC)
HOURS = 168


def produce(servers: str, topic: str, records: int, partitions: int) -> None:
    producer = create_producer(servers, {"linger.ms": 20, "batch.num.messages": 10_000})
    start_ms, span_ms = int(START.timestamp() * 1000), HOURS * 3_600_000
    for i in range(records):
        user = f"user-{i % 1000}"
        value = json.dumps({"payment_id": i, "user": user, "amount": round((i % 9973) / 100, 2)}).encode()
        timestamp = start_ms + (i * span_ms) // records
        while True:
            try:
                producer.produce(topic, value, user.encode(), partition=i % partitions, timestamp=timestamp)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300):
        raise RuntimeError("records left undelivered after 300 s")


def through_airflow(servers: str, topic: str, out: Path, per_task: int, home: Path) -> tuple[float, dict]:
    standalone = AirflowStandalone(
        servers,
        home=home / "airflow",
        log_file=home / "airflow.log",
        extra_env={"STREAMS_RUNTIME_HOME": str(home)},
    )
    with standalone:
        client = standalone.wait_ready(timeout=240)
        client.wait_for_dag(BACKFILL_DAG_ID)
        client.unpause(BACKFILL_DAG_ID)
        conf = {
            "range_start": START.isoformat(),
            "range_end": (START + timedelta(hours=HOURS)).isoformat(),
            "chunk_hours": 1,
            "intervals_per_task": per_task,
            "topic": topic,
            "output_dir": str(out),
            "publish": "none",
        }
        started = time.perf_counter()
        run_id = client.trigger(BACKFILL_DAG_ID, conf)
        state = client.wait_for_run(BACKFILL_DAG_ID, run_id, timeout=7200)
        wall = time.perf_counter() - started
        tasks = client.task_states(BACKFILL_DAG_ID, run_id)
        if state != "success":
            raise RuntimeError(f"run {run_id} ended {state}: {tasks}; log {standalone.log_file}")
    return wall, tasks


def one_jvm_per_interval(servers: str, topic: str, out: Path, sample: int) -> list[float]:
    times = []
    for hour in range(sample):
        start = START + timedelta(hours=hour * (HOURS // sample))
        command = [
            sys.executable,
            "-m",
            "spark_jobs.payments_backfill.main",
            "--bootstrap-servers",
            servers,
            "--topic",
            topic,
            "--output-dir",
            str(out),
            "--interval-start",
            start.isoformat(),
            "--interval-end",
            (start + timedelta(hours=1)).isoformat(),
        ]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        times.append(time.perf_counter() - began)
        if done.returncode != 0:
            raise RuntimeError(f"interval {start}: exit {done.returncode}\n{done.stderr[-2000:]}")
        result = json.loads(done.stdout[done.stdout.index("{") :])
        print(f"  one JVM: {result['interval_id']} {result['source_records']} records in {times[-1]:.1f} s")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=5_040_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--intervals-per-task", type=int, default=24)
    parser.add_argument("--old-sample", type=int, default=6)
    args = parser.parse_args()
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
        began = time.perf_counter()
        produce(servers, topic, args.records, args.partitions)
        print(f"produced {args.records:,} records over {HOURS} hours in {time.perf_counter() - began:.1f} s")

        wall, tasks = through_airflow(servers, topic, home / "new", args.intervals_per_task, home)
        passed = sum(1 for t, s in tasks.items() if t.startswith("backfill[") and s == "success")
        print(
            f"this design through Airflow: {HOURS} intervals in {passed} task(s) "
            f"of {args.intervals_per_task}, "
            f"{wall:.1f} s wall, {args.records / wall:,.0f} records/s"
        )
        times = one_jvm_per_interval(servers, topic, home / "old", args.old_sample)
        per = sum(times) / len(times)
        old_wall = per * HOURS
        print(
            f"one JVM per interval: {per:.1f} s per interval over {len(times)} sampled, "
            f"{old_wall:.0f} s for {HOURS} (extrapolated), {args.records / old_wall:,.0f} records/s"
        )
        print(f"speed-up: {old_wall / wall:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
