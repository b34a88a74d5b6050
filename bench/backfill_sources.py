"""The backfill's two Kafka sources on the same data on Apache Kafka: Spark's own connector
(``format("kafka")``, what the backfill reads Apache Kafka with) and the ``kafka_range`` Python
data source (what it reads Tansu with), docs/decisions/0011-spark-kafka-connector.md.

A topic of N payments (default 200k, 4 partitions) stamped evenly over 24 hours is produced to a
throwaway Apache Kafka broker (or ``$BOOTSTRAP_SERVERS``). Each source then reads, in one local
Spark session, exactly as the backfill does (offsets planned by timestamp and pinned, then
:func:`spark_jobs.payments_backfill.main.read_ranges`, the payments parsed and filtered to the
interval, counted and summed):

1. the whole day as one interval: records/s (the read's throughput);
2. one-hour intervals, one after another: seconds per interval (a backfill's usual unit).

Every read's count is checked against what was produced. Each figure is the best of
``--repeats`` runs, the sources taking turns, after one warm-up read per source (Python workers
and JVM classes loaded).

Run:  .venv/bin/python bench/backfill_sources.py [--records 200000] [--hours 6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import nullcontext

from streams_runtime.brokers import local_broker
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics

DAY_MS = 24 * 3_600_000
H = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
SOURCES = (
    ("connector", "offsets_for_times"),
    ("kafka_range", "bounded_scan"),
)  # name, the way read_ranges is told


def produce(bootstrap_servers: str, topic: str, records: int, partitions: int) -> None:
    """``records`` payments round-robin over the partitions, stamped evenly over one day from T0."""
    producer = create_producer(bootstrap_servers, {"linger.ms": 20, "batch.num.messages": 10_000})
    for i in range(records):
        user = f"user-{i % 1000}"
        value = json.dumps({"payment_id": i, "user": user, "amount": round((i % 9973) / 100, 2)}).encode()
        while True:
            try:
                producer.produce(
                    topic,
                    key=user.encode(),
                    value=value,
                    partition=i % partitions,
                    timestamp=T0 + i * DAY_MS // records,
                )
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records left undelivered after 120 s")


def expected(records: int, start_ms: int, end_ms: int) -> int:
    return sum(1 for i in range(records) if start_ms <= T0 + i * DAY_MS // records < end_ms)


def read_interval(spark, bootstrap_servers: str, topic: str, way: str, start_ms: int, end_ms: int) -> int:
    """What the backfill's read step does for ``[start_ms, end_ms)``, through the source of ``way``."""
    from pyspark.sql import functions as F

    from spark_jobs.kafka_source.by_time import plan_ranges_for_times
    from spark_jobs.payments_backfill.main import read_ranges
    from spark_jobs.payments_backfill.transform import in_interval, parse_payments

    ranges, planned = plan_ranges_for_times(bootstrap_servers, topic, start_ms, end_ms)
    assert planned == "offsets_for_times", f"the broker must answer offsets by time (got {planned})"
    raw = read_ranges(spark, bootstrap_servers, topic, ranges, start_ms, end_ms, way)
    row = in_interval(parse_payments(raw), start_ms, end_ms).agg(F.count("*"), F.sum("amount")).first()
    return int(row[0])


def timed(fn, *args) -> tuple[float, int]:
    t = time.perf_counter()
    count = fn(*args)
    return time.perf_counter() - t, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--hours", type=int, default=6, help="one-hour intervals timed per source")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    external = os.environ.get("BOOTSTRAP_SERVERS")
    with nullcontext(external) if external else local_broker("kafka") as started:
        bootstrap = external or started.bootstrap_servers
        topic = f"bench-backfill-sources-{int(time.time())}"
        create_topics(
            create_admin(bootstrap), [TopicSpec(topic, args.partitions, config={"retention.ms": "-1"})]
        )
        t = time.perf_counter()
        produce(bootstrap, topic, args.records, args.partitions)
        print(
            f"[bench] {args.records} payments in {args.partitions} partitions over 24 h produced to "
            f"Apache Kafka at {bootstrap} in {time.perf_counter() - t:.1f}s"
        )
        from spark_jobs.session import local_session

        spark = local_session(app_name="bench-backfill-sources", master=args.master, shuffle_partitions=2)
        figures: dict[str, dict[str, float]] = {}
        day = {name: [] for name, _ in SOURCES}
        hour = {name: [[] for _ in range(args.hours)] for name, _ in SOURCES}
        try:
            for _name, way in SOURCES:
                read_interval(spark, bootstrap, topic, way, T0, T0 + H)  # warm-up
            for _ in range(args.repeats):  # the sources take turns, so a busier minute hits both
                for name, way in SOURCES:
                    took, count = timed(read_interval, spark, bootstrap, topic, way, T0, T0 + DAY_MS)
                    assert count == args.records, (name, count)
                    day[name].append(took)
                    for h in range(args.hours):
                        start = T0 + h * H
                        took, got = timed(read_interval, spark, bootstrap, topic, way, start, start + H)
                        assert got == expected(args.records, start, start + H), (name, h, got)
                        hour[name][h].append(took)
            for name, _ in SOURCES:
                seconds = min(day[name])
                per_hour = sum(min(times) for times in hour[name]) / args.hours
                figures[name] = {"records_per_s": args.records / seconds, "hour_s": per_hour}
                print(
                    f"[bench] {name:<12} whole day {seconds:6.2f}s = "
                    f"{args.records / seconds:>9,.0f} records/s; "
                    f"one-hour interval {per_hour:.2f}s "
                    f"(mean of {args.hours}, best of {args.repeats} each)"
                )
        finally:
            spark.stop()
    c, p = figures["connector"], figures["kafka_range"]
    print(
        f"[bench] connector / kafka_range: {c['records_per_s'] / p['records_per_s']:.2f}x the records/s, "
        f"{p['hour_s'] / c['hour_s']:.2f}x faster per one-hour interval"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
