"""Rows/s of the ``kafka_range`` Spark data source, next to plain consume loops in the same run.

A topic of N payment records (default 500k, ~70-byte JSON values, 4 partitions) is produced to
the embedded broker (or ``$BOOTSTRAP_SERVERS``), then read back four ways, every one exactly once
to the true end (the count is checked each time):

1. plain confluent-kafka loop: one consumer assigned every partition, ``consume()`` in chunks
   until each partition reported its end -- the ceiling for one Python process;
2. ``read_range`` in-process: the data source's executor code (chunks -> Arrow record batches),
   partition after partition, without Spark -- the cost of building Arrow batches;
3. Spark, first action: ``spark.read.format("kafka_range")`` and an aggregate over every value
   (count, sum of lengths), including the Python workers' start-up;
4. Spark, warm: the same query again (workers reused).

Run:  .venv/bin/python bench/spark_source_throughput.py [--records 500000] [--partitions 4]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import nullcontext

from streams_runtime.brokers import EmbeddedBroker
from streams_runtime.kafka.clients import (
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
)
from streams_runtime.kafka.offsets import is_partition_eof


def produce(bootstrap_servers: str, topic: str, records: int, partitions: int) -> int:
    """Produce ``records`` payments round-robin over the partitions; return the value bytes sent."""
    producer = create_producer(bootstrap_servers, {"linger.ms": 20, "batch.num.messages": 10_000})
    sent = 0
    for i in range(records):
        user = f"user-{i % 1000}"
        value = json.dumps({"payment_id": i, "user": user, "amount": round((i % 9973) / 100, 2)}).encode()
        sent += len(value)
        while True:
            try:
                producer.produce(topic, key=user.encode(), value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records left undelivered after 120 s")
    return sent


def plain_loop(bootstrap_servers: str, topic: str, partitions: int) -> tuple[int, int]:
    """Baseline 1: (rows, value bytes) read by one consumer to every partition's end."""
    consumer = create_consumer(
        bootstrap_servers,
        "bench-plain",
        {"enable.partition.eof": True, "max.partition.fetch.bytes": 8 << 20, "fetch.max.bytes": 64 << 20},
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    rows = size = 0
    pending = set(range(partitions))
    try:
        while pending:
            for msg in consumer.consume(num_messages=10_000, timeout=0.1):
                error = msg.error()
                if error is None:
                    rows += 1
                    size += len(msg.value())
                elif is_partition_eof(error):
                    pending.discard(msg.partition())
                else:
                    raise RuntimeError(str(error))
    finally:
        consumer.close()
    return rows, size


def arrow_in_process(bootstrap_servers: str, topic: str) -> int:
    """Baseline 2: the data source's executor code without Spark; returns rows."""
    from spark_jobs.kafka_source.offsets import plan_ranges
    from spark_jobs.kafka_source.reader import read_range

    return sum(
        batch.num_rows
        for r in plan_ranges(bootstrap_servers, topic)
        for batch in read_range(bootstrap_servers, r)
    )


def spark_read(spark, bootstrap_servers: str, topic: str) -> tuple[int, int]:
    """The data source: (rows, value bytes) aggregated over every record."""
    from pyspark.sql import functions as F

    df = (
        spark.read.format("kafka_range")
        .option("bootstrap_servers", bootstrap_servers)
        .option("topic", topic)
        .load()
    )
    row = df.agg(F.count(F.lit(1)).alias("n"), F.sum(F.length("value")).alias("bytes")).collect()[0]
    return int(row["n"]), int(row["bytes"])


def timed(label: str, records: int, fn, *args):
    started = time.perf_counter()
    out = fn(*args)
    elapsed = time.perf_counter() - started
    rows = out[0] if isinstance(out, tuple) else out
    status = "ok" if rows == records else f"WRONG COUNT {rows}"
    print(
        f"  {label:<34} {rows:>9} rows {elapsed:>7.2f} s {rows / elapsed:>10,.0f} rows/s  {status}",
        flush=True,
    )
    return out, rows / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    configured = os.environ.get("BOOTSTRAP_SERVERS")
    with nullcontext(configured) if configured else EmbeddedBroker() as broker:
        servers = configured or broker.bootstrap_servers
        topic = f"bench-spark-source-{int(time.time())}"
        create_topics(create_admin(servers), [TopicSpec(topic, args.partitions)])
        started = time.perf_counter()
        sent = produce(servers, topic, args.records, args.partitions)
        print(
            f"produced {args.records} records ({sent / 1e6:.1f} MB of values) to {topic} "
            f"[{args.partitions} partitions] in {time.perf_counter() - started:.1f} s"
        )
        from spark_jobs.session import local_session

        started = time.perf_counter()
        spark = local_session(app_name="bench-spark-source", master=args.master, shuffle_partitions=2)
        took = time.perf_counter() - started
        print(f"Spark session ({args.master}, {os.cpu_count()} CPUs) started in {took:.1f} s")
        results = {}
        (rows, size), results["plain"] = timed(
            "1. plain confluent-kafka loop", args.records, plain_loop, servers, topic, args.partitions
        )
        _, results["arrow"] = timed(
            "2. read_range -> Arrow, no Spark", args.records, arrow_in_process, servers, topic
        )
        (s_rows, s_size), results["cold"] = timed(
            "3. Spark data source, first action", args.records, spark_read, spark, servers, topic
        )
        (w_rows, w_size), results["warm"] = timed(
            "4. Spark data source, warm", args.records, spark_read, spark, servers, topic
        )
        spark.stop()
    print(
        f"value bytes: plain {size}, Spark {s_size} / {w_size}; "
        f"Spark warm / plain loop = {results['warm'] / results['plain']:.2f}"
    )
    exact = rows == s_rows == w_rows == args.records and size == s_size == w_size
    print("exact counts and byte sums: " + ("yes" if exact else "NO"))
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
