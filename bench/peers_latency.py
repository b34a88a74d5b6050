"""End-to-end latency at a steady rate, side by side with the broker-only floor (bench/peers.py's W1).

One broker (as ``bench/peers.py``: a 1-node Apache Kafka started here unless ``--broker tansu`` or
``--bootstrap-servers``). Each round runs, on fresh topics, the broker-only floor and then each
implementation of ``bench/peers.py`` (``runtime``, ``kstreams``, ``quix``, ``hand``) on W1
(filter + enrich, every record kept here: the amounts are even), each in its own process at its
defaults (commit interval ``--commit-ms``, at-least-once; Kafka Streams on a fresh JVM).

This process produces JSON payments paced at ``--rate`` records/s (an idempotent producer that
does not linger: ``linger.ms=0``), each carrying the wall-clock microsecond it was handed to the
producer; a reader in this process (``fetch.wait.max.ms`` 100, as any consumer) reads the output
topic and takes, per record, the microsecond it came out of ``consume()`` minus the one in the
value. The floor is the same producer and reader on one topic, nothing in between: what the broker
and the two clients cost. An implementation first gets warm-up records at the same rate until its
first output has come back and 3 s more have passed (start-up, assignment, JIT), then
``--seconds`` of measured records; the run ends when every measured record has come back (or
after 60 s: a missing record fails the run), and the implementation's process is stopped.

Prints each run (p50, p99, p99.9, max in ms) as it ends, then per implementation the medians over
the rounds and the medians of the same-round differences to the floor; raw figures go to
``--out`` as JSON lines.

Run:  make setup-bench && .venv/bin/python bench/peers_latency.py [--rate 1000] [--seconds 30] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import hand_loops, peers  # noqa: E402
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics  # noqa: E402
from streams_runtime.kafka.profile import client_config  # noqa: E402

IMPLS = ("floor", *peers.IMPLS)
#: the children run until stopped: their end offsets are never reached
NEVER = 10**15
WARM_AFTER_FIRST_S = 3.0
DRAIN_TIMEOUT_S = 60.0


class Reader(threading.Thread):
    """Reads ``topic`` from the beginning, keeping (phase, latency in microseconds) per record."""

    def __init__(self, servers: str, topic: str, partitions: int) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer(
            client_config(
                "consumer",
                servers,
                {"group.id": f"latency-reader-{uuid.uuid4().hex[:6]}", "fetch.wait.max.ms": 100},
            )
        )
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.measured: list[int] = []
        self.warm = 0
        self.first_at: float | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            # the first record as soon as it comes, then whatever else is already here
            # (``consume(n, timeout)`` alone would wait for n records or the whole timeout)
            first = self.consumer.poll(0.1)
            now_us = time.time_ns() // 1000
            if first is None:
                continue
            batch = [first, *self.consumer.consume(1000, 0)]
            for msg in batch:
                if msg.error() is not None:
                    continue
                value = hand_loops.loads(msg.value())
                if value["phase"] == "m":
                    self.measured.append(now_us - value["sent_us"])
                else:
                    self.warm += 1
                    if self.first_at is None:
                        self.first_at = time.monotonic()
        self.consumer.close()


class PacedProducer:
    """Produces the payments of one run at ``rate`` records/s, keys spread over the partitions."""

    def __init__(self, servers: str, topic: str, partitions: int, keys: int, rate: float) -> None:
        from confluent_kafka import Producer

        self.producer = Producer(
            client_config("producer", servers, {"linger.ms": 0, "acks": "all", "enable.idempotence": True})
        )
        self.topic, self.partitions, self.keys, self.rate = topic, partitions, keys, rate
        self.rng = random.Random(11)
        self.sent = 0

    def send(self, phase: str, until: Any) -> int:
        """Send at the rate until ``until(count_in_this_phase)`` is true; returns the count."""
        start, n = time.perf_counter(), 0
        while not until(n):
            due = start + n / self.rate
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            k = self.rng.randrange(self.keys)
            user = f"user-{k}"
            payment = {
                "user": user,
                "amount": 2 * self.rng.randrange(5_000),
                "item": f"sku-{self.rng.randrange(100_000):05d}",
                "phase": phase,
                "sent_us": time.time_ns() // 1000,
            }
            self.producer.produce(
                self.topic, hand_loops.dumps(payment), user.encode(), partition=k % self.partitions
            )
            self.producer.poll(0)
            n += 1
        self.sent += n
        return n

    def close(self) -> None:
        if self.producer.flush(30):
            raise RuntimeError("input records were not delivered within 30 s")


def percentiles(latencies_us: list[int]) -> dict[str, float]:
    ordered = sorted(latencies_us)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000

    return {"p50_ms": at(0.50), "p99_ms": at(0.99), "p999_ms": at(0.999), "max_ms": ordered[-1] / 1000}


def measure(args: argparse.Namespace, admin: Any, servers: str, at: tuple[str, int, str], tmp: str) -> dict:
    run, rnd, impl = at
    name = f"lat-{impl}-r{rnd}-{run}"
    source, output = f"{name}-in", f"{name}-out"
    create_topics(admin, [TopicSpec(source, args.partitions), TopicSpec(output, args.partitions)])
    measured = int(args.rate * args.seconds)
    row: dict[str, Any] = {
        "run": run,
        "round": rnd,
        "impl": impl,
        "rate": args.rate,
        "seconds": args.seconds,
        "partitions": args.partitions,
        "broker": "external" if args.bootstrap_servers else args.broker,
        "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    child = None
    if impl != "floor":
        spec = {
            "workload": "W1",
            "servers": servers,
            "input": source,
            "items": None,
            "output": output,
            "changelog": f"{name}-changelog",
            "group": name,
            "ends": dict.fromkeys(range(args.partitions), NEVER),
            "commit_ms": args.commit_ms,
            "guarantee": "at_least_once",
            "cache_bytes": peers.CACHE_BYTES,
            "state_dir": os.path.join(tmp, name),
            "warmup_output": None,
            "profile": False,
            "processed_total": NEVER,
            "config": dict(args.runtime_config),
        }
        child = subprocess.Popen(
            peers.command(impl, spec),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    reader = Reader(servers, source if impl == "floor" else output, args.partitions)
    reader.start()
    producer = PacedProducer(servers, source, args.partitions, args.keys, args.rate)
    try:

        def warmed(_: int) -> bool:
            if child is not None and child.poll() is not None:
                raise RuntimeError(
                    f"exit {child.returncode}: {child.stderr.read()[-2000:] if child.stderr else ''}"
                )
            first = reader.first_at
            if time.monotonic() - started > 180:
                raise RuntimeError("no output within 180 s of the start")
            return first is not None and time.monotonic() - first >= WARM_AFTER_FIRST_S

        started = time.monotonic()
        row["warmup_records"] = producer.send("w", warmed)
        producer.send("m", lambda n: n >= measured)
        producer.close()
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while len(reader.measured) < measured and time.monotonic() < deadline:
            time.sleep(0.05)
        row["received"] = len(reader.measured)
        if len(reader.measured) < measured:
            row["error"] = f"{measured - len(reader.measured)} of {measured} measured records never came back"
        else:
            row.update(percentiles(reader.measured))
    except RuntimeError as exc:
        row["error"] = str(exc)
    finally:
        reader.stopping.set()
        reader.join(10)
        if child is not None:
            _stop(child)
    return row


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(10)


def describe(row: dict) -> str:
    if "error" in row:
        return f"{row['impl']} r{row['round']}: FAILED {row['error'][-300:]}"
    return (
        f"{row['impl']} r{row['round']}: p50 {row['p50_ms']:.1f} ms, p99 {row['p99_ms']:.1f} ms, "
        f"p99.9 {row['p999_ms']:.1f} ms, max {row['max_ms']:.1f} ms ({row['received']:,} records, "
        f"{row['warmup_records']:,} warm-up)"
    )


def report(rows: list[dict], impls: list[str]) -> None:
    ok = [r for r in rows if "error" not in r]
    print(
        f"\n{'impl':<9} {'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>9}  "
        f"{'p50-floor':>9} {'p99-floor':>9}  runs ok"
    )
    for impl in impls:
        mine = [r for r in ok if r["impl"] == impl]
        every = [r for r in rows if r["impl"] == impl]
        if not mine:
            print(f"{impl:<9} {'-':>8} {'-':>8} {'-':>9}  {'-':>9} {'-':>9}  0/{len(every)}")
            continue
        diffs: dict[str, list[float]] = {"p50_ms": [], "p99_ms": []}
        for r in mine:
            floor = [f for f in ok if f["impl"] == "floor" and f["round"] == r["round"]]
            for q in diffs:
                if floor:
                    diffs[q].append(r[q] - floor[0][q])

        def med(values: list[float]) -> str:
            return f"{statistics.median(values):.1f}" if values else "-"

        print(
            f"{impl:<9} {med([r['p50_ms'] for r in mine]):>8} {med([r['p99_ms'] for r in mine]):>8} "
            f"{med([r['p999_ms'] for r in mine]):>9}  {med(diffs['p50_ms']):>9} {med(diffs['p99_ms']):>9}"
            f"  {len(mine)}/{len(every)}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--commit-ms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument(
        "--runtime-config",
        action="append",
        default=[],
        type=lambda kv: (kv.split("=", 1)[0], json.loads(kv.split("=", 1)[1])),
        metavar="KEY=JSON",
        help="a StreamsConfig setting for this runtime's runs, e.g. producer.linger.ms=5 (repeatable)",
    )
    parser.add_argument("--broker", choices=("kafka", "tansu"), default="kafka")
    parser.add_argument("--bootstrap-servers", default=None, help="an existing broker instead")
    parser.add_argument("--out", default=str(ROOT / ".streams-runtime" / "bench" / "peers_latency.jsonl"))
    args = parser.parse_args(argv)
    impls = [i for i in args.impls.split(",") if i]
    unknown = sorted(set(impls) - set(IMPLS))
    if unknown:
        parser.error(f"unknown {unknown}; impls: {', '.join(IMPLS)}")
    run = uuid.uuid4().hex[:6]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    with peers.broker(args.broker, args.bootstrap_servers) as servers, tempfile.TemporaryDirectory() as tmp:
        admin = create_admin(servers)
        where = "Kafka" if args.bootstrap_servers else args.broker
        print(
            f"[latency] {where} at {servers}; {args.rate:,.0f} records/s for {args.seconds:.0f} s", flush=True
        )
        for rnd in range(args.rounds):
            for impl in impls:
                row = measure(args, admin, servers, (run, rnd, impl), tmp)
                rows.append(row)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"[latency] {len(rows)}/{args.rounds * len(impls)} {describe(row)}", flush=True)
    report(rows, impls)
    print(f"\n[latency] raw figures appended to {out}")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
