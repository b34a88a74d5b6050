"""Runtime throughput: KafkaStreams against hand-written confluent-kafka loops.

One run, one broker (embedded Tansu unless ``--bootstrap-servers``), one input topic of
``--records`` JSON payments (about 91-byte values like ``{"user":"user-42","amount":5123,
"ts":...,"item":"sku-01234","region":"eu-west"}``, ``--partitions`` partitions, ``--keys``
users, each user on one partition), and four measured runs, each in its own process so CPU
seconds and peak RSS are its own:

1. stateless (W1), framework: ``stream -> filter(even amount) -> map_values(enrich) -> to``;
2. stateless (W1), hand loop: the same in ``bench/hand_loops.py``;
3. stateful (W2), framework: ``stream -> group_by_key -> count`` on a RocksDB store with its
   changelog and the record cache off (every update emitted) ``-> to_stream -> map_values -> to``;
4. stateful (W2), hand loop: the same count in a dict, every update written to the output and to
   a changelog topic.

The hand loops are built like the fastest plain loop (``bench/hand_loops.py``: batched
``consume``, orjson, an idempotent ``acks=all`` producer without per-message callbacks, a commit
every 5 s), so the ratios are against that loop. Both sides use the same consumer settings and a
commit every ``--commit-ms`` (default 5000).

A run is timed from the moment it is ready to consume (KafkaStreams RUNNING; the hand loop's
``assign()``) to the moment every input offset is committed; CPU seconds are the process's
user+system time over the same span (all threads); peak RSS is the process's. CPU microseconds
per record is the steady figure on a machine shared with other work (wall time then includes
waiting for a CPU). Every output is checked afterwards (stateless: the number of kept records;
stateful: one output per input and the final count of every key), so a fast wrong run cannot
pass. Targets: stateless >= 0.5x and stateful >= 0.4x the hand loop's records/s. ``--profile``
adds a cProfile summary of the framework runs (stream threads only), printed after the table.

Run:  .venv/bin/python bench/runtime_throughput.py [--records 1000000] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

from bench import hand_loops  # noqa: E402
from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics  # noqa: E402
from streams_runtime.kafka.offsets import is_partition_eof  # noqa: E402
from streams_runtime.kafka.partitioner import partition_for  # noqa: E402
from streams_runtime.kafka.profile import client_config  # noqa: E402

TARGETS = {"stateless": 0.5, "stateful": 0.4}
WORKLOADS = ("stateless-framework", "stateless-hand", "stateful-framework", "stateful-hand")


REGIONS = ("eu-west", "us-east", "ap-south", "sa-east")


def _value(rng: random.Random, i: int, user: str) -> bytes:
    """A JSON payment of about 91 bytes: user, an integer amount 0-9999, a timestamp, an item, a
    region."""
    payment = {
        "user": user,
        "amount": rng.randrange(10_000),
        "ts": 1_700_000_000_000 + i,
        "item": f"sku-{rng.randrange(100_000):05d}",
        "region": REGIONS[i % len(REGIONS)],
    }
    return hand_loops.dumps(payment)


def produce_input(servers: str, topic: str, records: int, partitions: int, keys: int) -> dict:
    """Write the input; return per-partition end offsets and the expected results."""
    rng = random.Random(7)
    producer = Producer(client_config("producer", servers, {"linger.ms": 20, "batch.num.messages": 10000}))
    ends = dict.fromkeys(range(partitions), 0)
    counts: Counter[str] = Counter()
    kept = 0
    sizes = []
    for i in range(records):
        k = i % keys
        user = f"user-{k}"
        value = _value(rng, i, user)
        if i < 1000:
            sizes.append(len(value))
        if hand_loops.keep(json.loads(value)):
            kept += 1
        counts[user] += 1
        key = user.encode()
        partition = partition_for(key, partitions)  # where a Java producer puts it (Kafka Streams assumes it)
        ends[partition] += 1
        while True:
            try:
                producer.produce(topic, value=value, key=key, partition=partition)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(60):
        raise RuntimeError("input records were not delivered within 60 s")
    return {
        "ends": ends,
        "kept": kept,
        "counts": dict(counts),
        "value_bytes": (min(sizes), max(sizes), sum(sizes) / len(sizes)),
    }


def read_to_end(servers: str, topic: str, partitions: int) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of ``topic``, read to partition EOF (Tansu's ListOffsets is not trusted)."""
    group = f"bench-check-{uuid.uuid4().hex[:6]}"
    consumer = Consumer(client_config("consumer", servers, {"group.id": group, "enable.partition.eof": True}))
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    eof: set[int] = set()
    out: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + 120
    while len(eof) < partitions and time.monotonic() < deadline:
        for msg in consumer.consume(num_messages=5000, timeout=0.5):
            if msg.error():
                if is_partition_eof(msg.error()):
                    eof.add(msg.partition())
                    continue
                raise RuntimeError(f"check consumer: {msg.error()}")
            eof.discard(msg.partition())
            out.append((msg.key(), msg.value()))
    consumer.close()
    return out


def check_output(
    kind: str, records: list[tuple[bytes, bytes]], expected: dict, every_update: bool = True
) -> str:
    """'ok' or what is wrong with a run's output (``every_update=False``: a cached count, which
    emits fewer updates than inputs)."""
    if kind == "stateless":
        kept = expected["kept"]
        return "ok" if len(records) == kept else f"{len(records)} outputs, expected {kept}"
    updates = sum(expected["counts"].values())
    if every_update and len(records) != updates:
        return f"{len(records)} outputs, expected one per input ({updates})"
    final = {k.decode(): hand_loops.loads(v)["count"] for k, v in records}
    wrong = {u: (final.get(u), n) for u, n in expected["counts"].items() if final.get(u) != n}
    return "ok" if not wrong else f"{len(wrong)} keys wrong, e.g. {sorted(wrong.items())[:3]}"


def run_child(spec: dict) -> dict:
    """Run one workload in a fresh process and return its JSON result line."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve().parent / "runtime_workloads.py"), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout)[-2000:]}"}
    return json.loads(lines[-1])


def _row(name: str, r: dict, records: int) -> str:
    if "error" in r:
        lines = r["error"].strip().splitlines() or [r["error"]]
        return f"{name:<22} FAILED: {lines[-1]}"
    rate = records / r["seconds"]
    return (
        f"{name:<22} {rate:>12,.0f} {r['seconds']:>9.2f} {r['cpu_s']:>9.2f} "
        f"{r['cpu_s'] / records * 1e6:>10.2f} {r['peak_rss_mb']:>9.1f}  {r.get('check', '?')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--commit-ms", type=int, default=5000)
    parser.add_argument("--bootstrap-servers", default=None)
    parser.add_argument("--only", choices=("stateless", "stateful"), default=None)
    parser.add_argument("--profile", action="store_true", help="cProfile the framework runs")
    args = parser.parse_args(argv)
    run = uuid.uuid4().hex[:6]
    with bootstrap_or_embedded(args.bootstrap_servers) as servers, tempfile.TemporaryDirectory() as tmp:
        admin = create_admin(servers)
        source = f"bench-payments-{run}"
        create_topics(admin, [TopicSpec(source, args.partitions)])
        print(
            f"[bench] Kafka at {servers}; producing {args.records:,} records to {source} "
            f"({args.partitions} partitions, {args.keys:,} keys) ...",
            flush=True,
        )
        started = time.perf_counter()
        expected = produce_input(servers, source, args.records, args.partitions, args.keys)
        print(
            f"[bench] produced in {time.perf_counter() - started:.1f}s; values "
            f"{expected['value_bytes'][0]}-{expected['value_bytes'][1]} bytes "
            f"(mean {expected['value_bytes'][2]:.0f}); "
            f"{expected['kept']:,} pass the filter",
            flush=True,
        )
        results: dict[str, dict] = {}
        for name in WORKLOADS:
            kind = name.split("-")[0]
            if args.only and kind != args.only:
                continue
            output, changelog = f"bench-{name}-out-{run}", f"bench-{name}-changelog-{run}"
            specs = [TopicSpec(output, args.partitions)]
            if name == "stateful-hand":
                specs.append(TopicSpec(changelog, args.partitions, config={"cleanup.policy": "compact"}))
            create_topics(admin, specs)
            spec = {
                "workload": name,
                "servers": servers,
                "input": source,
                "output": output,
                "changelog": changelog,
                "group": f"bench-{name}-{run}",
                "ends": expected["ends"],
                "commit_ms": args.commit_ms,
                "state_dir": os.path.join(tmp, name),
                "profile": args.profile and name.endswith("framework"),
            }
            print(f"[bench] running {name} ...", flush=True)
            result = run_child(spec)
            if "error" not in result:
                result["check"] = check_output(kind, read_to_end(servers, output, args.partitions), expected)
            results[name] = result
        print()
        print(
            f"{'run':<22} {'records/s':>12} {'seconds':>9} {'cpu_s':>9} "
            f"{'cpu_us/rec':>10} {'rss_mb':>9}  output"
        )
        for name, r in results.items():
            print(_row(name, r, args.records))
        print()
        code = 0
        for kind, target in TARGETS.items():
            fw, hand = results.get(f"{kind}-framework"), results.get(f"{kind}-hand")
            if not fw or not hand or "error" in fw or "error" in hand:
                continue
            ratio = hand["seconds"] / fw["seconds"]
            cpu_ratio = hand["cpu_s"] / fw["cpu_s"]
            ok = ratio >= target and fw["check"] == "ok" and hand["check"] == "ok"
            code |= 0 if ok else 1
            verdict = "MET" if ok else "MISSED"
            print(
                f"{kind}: framework / hand loop = {ratio:.2f}x records/s (target >= {target}x) "
                f"{verdict}; {cpu_ratio:.2f}x records per CPU second "
                f"(CPU us/record: framework {fw['cpu_s'] / args.records * 1e6:.2f}, "
                f"hand loop {hand['cpu_s'] / args.records * 1e6:.2f})"
            )
        for name, r in results.items():
            if r.get("profile"):
                print(f"\n--- profile of {name} (stream threads; by own time, then cumulative) ---")
                print(r["profile"])
    return code


if __name__ == "__main__":
    sys.exit(main())
