"""Side by side on one broker: this runtime, Kafka Streams (Java), Quix Streams, a hand-written loop.

One broker (a 1-node Apache Kafka 4.3.1 started here unless ``--broker tansu`` or
``--bootstrap-servers``), one input topic of ``--records`` JSON payments (about 91-byte values,
``--keys`` users, ``--partitions`` partitions, each user on one partition: the generator of
``bench/runtime_throughput.py``), and the workloads, each implementation in its own process:

- ``W1``: stateless, keep the payments with an even amount, add ``amount_cents``, write them;
- ``W2``: count per user on a persistent store with its changelog, every update written as
  ``{"key", "count"}`` (record cache off);
- ``W2-eos``: ``W2`` under exactly-once (Kafka Streams' ``exactly_once_v2``, Quix's
  ``exactly-once``; the hand loop has none).

The implementations (``--impls``):

- ``runtime``: this project through its public DSL and ``KafkaStreams``, at its defaults
  (``bench/runtime_workloads.py``);
- ``kstreams``: Kafka Streams 4.3.1, the same topologies in Java (``jvm/kafka-streams-bench``),
  default settings except the commit interval and a record cache of this runtime's default size;
  measured on a warm JVM: the process first runs the same work over the whole input into another
  topic under another application id, unmeasured (``--no-jvm-warmup`` measures a fresh JVM; its
  peak RSS includes the warm-up either way);
- ``quix``: Quix Streams 3.28.1 (``bench/peer_quix.py``, in ``.venv-quix``);
- ``runtime-t2`` and ``runtime-i2`` (on request, not in the default ``--impls``): this runtime as
  1 instance with 2 stream threads, and as 2 instances (two processes of one application, started
  together) with 1 thread each, timed from the first instance ready to the last record processed
  by either, CPU and RSS summed: what threads and processes give on this host;
- ``hand``: a hand-written confluent-kafka loop (``bench/hand_loops.py``: orjson, batched consume,
  an idempotent producer without per-record callbacks, commit every 5 s), the practical limit of
  Python.

Every implementation commits every ``--commit-ms`` (5000), one stream thread each. Rounds
interleave: round r runs every workload x implementation once, so a slow minute of the shared
machine hits every implementation alike. A run is timed from ready (RUNNING; the hand loop's
``assign()``; Quix's first record) until the last input record is processed (the stream threads'
``process-total`` metric on both Kafka Streams; a counter in Quix's first step; the hand loop's
positions); CPU seconds are the process's user+system time over that span, all threads (JVM: GC
and JIT included); peak RSS is the process's. The time until every input offset is committed is
kept too (``seconds_to_commit``): it adds the wait for the next commit, up to ``--commit-ms``,
which the hand loop does not have (it commits as soon as it is done). Every output is read back
(read_committed) and checked: W1 the number of kept records, W2 one output per input and the
final count of every user. A failed check fails the run.

Prints each run as it ends, then per workload the medians (records/s, CPU microseconds per
record, peak RSS), the ranges, and the medians of the same-round ratios of this runtime to each
other implementation (records/s, and records per CPU second: the steady figure on a shared
machine). Raw figures go to ``--out`` as JSON lines.

Run:  make setup-bench && .venv/bin/python bench/peers.py [--records 500000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import peer_w3  # noqa: E402
from bench.runtime_throughput import check_output, produce_input, read_to_end  # noqa: E402
from streams_runtime.brokers.local import local_broker  # noqa: E402
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics  # noqa: E402

IMPLS = ("runtime", "kstreams", "quix", "hand", "runtime-t2", "runtime-i2")
#: the default --impls: the side-by-side comparison (the runtime-t2/-i2 variants on request)
DEFAULT_IMPLS = ("runtime", "kstreams", "quix", "hand")
#: this runtime's scale-out variants: stream threads and instances (processes) of one application
RUNTIME_SHAPES = {"runtime": (1, 1), "runtime-t2": (1, 2), "runtime-i2": (2, 1)}
WORKLOADS = ("W1", "W2", "W2-eos", "W3")
KSTREAMS_DIR = ROOT / ".jvm" / "kafka-streams-bench-4.3.1"
QUIX_PYTHON = ROOT / ".venv-quix" / "bin" / "python"
#: this runtime's default record cache (statestore_cache_max_bytes), given to Kafka Streams too
CACHE_BYTES = 10 * 1024 * 1024


def supports(impl: str, workload: str) -> bool:
    """The hand loop has no exactly-once."""
    return not (impl == "hand" and workload.endswith("eos"))


def command(impl: str, spec: dict) -> list[str]:
    """The child process of one run."""
    if impl == "kstreams":
        if not (KSTREAMS_DIR / ".stamp").exists():
            raise SystemExit(f"Kafka Streams side not built ({KSTREAMS_DIR}): run `make setup-bench`")
        return ["java", "-cp", f"{KSTREAMS_DIR}/*", "io.streamsruntime.bench.BenchMain", json.dumps(spec)]
    if impl == "quix":
        if not QUIX_PYTHON.exists():
            raise SystemExit(f"Quix Streams not installed ({QUIX_PYTHON}): run `make setup-bench`")
        return [str(QUIX_PYTHON), str(ROOT / "bench" / "peer_quix.py"), json.dumps(spec)]
    kind = {"W1": "stateless", "W2": "stateful", "W3": "windowed"}[spec["workload"]]
    role = "framework" if impl in RUNTIME_SHAPES else "hand"
    child = dict(spec, workload=f"{kind}-{role}", config=dict(spec.get("config") or {}))
    if spec["guarantee"] == "exactly_once_v2":
        child["config"]["processing_guarantee"] = "exactly_once_v2"
    if impl in RUNTIME_SHAPES:
        instances, threads = RUNTIME_SHAPES[impl]
        child["config"]["num_stream_threads"] = threads
        child["instances"] = instances
    return [sys.executable, str(ROOT / "bench" / "runtime_workloads.py"), json.dumps(child)]


def run_child(impl: str, spec: dict) -> dict:
    """One run: one child process, or (``runtime-i2``) one per instance of the application."""
    instances = RUNTIME_SHAPES.get(impl, (1, 1))[0]
    if instances == 1:
        proc = subprocess.run(command(impl, spec), capture_output=True, text=True, timeout=1800, cwd=ROOT)
        return _result(proc.returncode, proc.stdout, proc.stderr)
    children = [
        subprocess.Popen(
            command(impl, dict(spec, state_dir=f"{spec['state_dir']}-{i}")),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for i in range(instances)
    ]
    results = []
    for child in children:
        out, err = child.communicate(timeout=1800)
        results.append(_result(child.returncode, out, err))
    return combine_instances(results)


def _result(returncode: int, stdout: str, stderr: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if returncode != 0 or not lines:
        return {"error": f"exit {returncode}: {(stderr or stdout)[-2000:]}"}
    return json.loads(lines[-1])


def combine_instances(results: list[dict]) -> dict:
    """The instances of one application as one run: from the first instance ready to the last
    record processed by any, CPU and peak RSS summed (each instance reports wall-clock
    ``ready_at``/``processed_at``: they share this host's clock)."""
    failed = [r for r in results if "error" in r]
    if failed:
        return failed[0]
    start = min(r["ready_at"] for r in results)
    return {
        "seconds": max(r["processed_at"] for r in results) - start,
        "seconds_to_commit": max(r["committed_at"] for r in results) - start,
        "cpu_s": sum(r["cpu_s"] for r in results),
        "peak_rss_mb": sum(r["peak_rss_mb"] for r in results),
        "instances": len(results),
    }


@contextlib.contextmanager
def broker(kind: str, servers: str | None) -> Iterator[str]:
    if servers:
        yield servers
        return
    with local_broker(kind) as started:
        yield started.bootstrap_servers


def median_range(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def report(rows: list[dict], impls: list[str], workloads: list[str]) -> None:
    ok = [r for r in rows if r.get("check") == "ok"]
    print(
        f"\n{'workload':<8} {'impl':<9} {'records/s median (range)':>28} "
        f"{'CPU us/rec':>10} {'peak RSS MB':>11}  runs ok"
    )
    for workload in workloads:
        for impl in impls:
            mine = [r for r in ok if r["workload"] == workload and r["impl"] == impl]
            every = [r for r in rows if r["workload"] == workload and r["impl"] == impl]
            if not every:
                continue
            cpu = statistics.median(r["cpu_us_per_record"] for r in mine) if mine else float("nan")
            rss = statistics.median(r["peak_rss_mb"] for r in mine) if mine else float("nan")
            print(
                f"{workload:<8} {impl:<9} {median_range([r['records_per_s'] for r in mine]):>28} "
                f"{cpu:>10.2f} {rss:>11.0f}  {len(mine)}/{len(every)}"
            )
    print("\nthis runtime / other, median of same-round ratios (records/s; records per CPU second):")
    for workload in workloads:
        for other in impls:
            if other == "runtime":
                continue
            by_round: list[tuple[float, float]] = []
            for r in {row["round"] for row in ok}:
                mine = [x for x in ok if x["round"] == r and x["workload"] == workload]
                a = [x for x in mine if x["impl"] == "runtime"]
                b = [x for x in mine if x["impl"] == other]
                if a and b:
                    by_round.append(
                        (
                            a[0]["records_per_s"] / b[0]["records_per_s"],
                            b[0]["cpu_us_per_record"] / a[0]["cpu_us_per_record"],
                        )
                    )
            if by_round:
                speed = statistics.median(x for x, _ in by_round)
                per_cpu = statistics.median(y for _, y in by_round)
                print(
                    f"  {workload:<8} vs {other:<9} {speed:5.2f}x   {per_cpu:5.2f}x   ({len(by_round)} rnds)"
                )
    eos = [r for r in ok if r["impl"] == "runtime" and r["workload"] in ("W2", "W2-eos")]
    ratios = []
    for r in {row["round"] for row in eos}:
        pair = {x["workload"]: x for x in eos if x["round"] == r}
        if len(pair) == 2:
            ratios.append(pair["W2-eos"]["records_per_s"] / pair["W2"]["records_per_s"])
    if ratios:
        print(f"  this runtime W2-eos / W2: {statistics.median(ratios):.2f}x ({len(ratios)} rounds)")


def produce_inputs(
    admin: Any, servers: str, run: str, args: argparse.Namespace, workloads: list[str]
) -> dict[str, dict]:
    """The input of each workload (W1 and W2 share one): its topic, its table, what it must give."""
    inputs: dict[str, dict] = {}
    if any(not w.startswith("W3") for w in workloads):
        source = f"peers-payments-{run}"
        create_topics(admin, [TopicSpec(source, args.partitions)])
        expected = produce_input(servers, source, args.records, args.partitions, args.keys)
        inputs["W1"] = inputs["W2"] = {"source": source, "expected": expected}
    if "W3" in workloads:
        source, items = f"peers-w3-payments-{run}", f"peers-w3-items-{run}"
        create_topics(admin, [TopicSpec(source, args.partitions), TopicSpec(items, args.partitions)])
        expected = peer_w3.produce(servers, source, items, args.records, args.keys)
        inputs["W3"] = {"source": source, "items": items, "expected": expected}
    return inputs


def measure(
    args: argparse.Namespace,
    admin: Any,
    servers: str,
    inputs: dict[str, dict],
    at: tuple[str, int, str, str],
    tmp: str,
) -> dict:
    """One run of ``workload`` by ``impl`` on fresh output topics; its row, output checked."""
    run, rnd, workload, impl = at
    base = workload.split("-")[0]
    source, expected = inputs[base]["source"], inputs[base]["expected"]
    name = f"{workload}-{impl}-r{rnd}".lower()
    output, changelog = f"peers-{name}-out-{run}", f"peers-{name}-changelog-{run}"
    specs = [TopicSpec(output, args.partitions)]
    if impl == "hand" and base in ("W2", "W3"):
        specs.append(TopicSpec(changelog, args.partitions, config={"cleanup.policy": "compact"}))
    warmup = f"peers-{name}-warmup-{run}" if impl == "kstreams" and args.jvm_warmup else None
    if warmup:
        specs.append(TopicSpec(warmup, args.partitions))
    create_topics(admin, specs)
    spec = {
        "workload": base,
        "servers": servers,
        "input": source,
        "items": inputs[base].get("items"),
        "output": output,
        "changelog": changelog,
        "group": f"peers-{name}-{run}",
        "ends": expected["ends"],
        "commit_ms": args.commit_ms,
        "guarantee": "exactly_once_v2" if workload.endswith("eos") else "at_least_once",
        "cache_bytes": CACHE_BYTES,
        "state_dir": os.path.join(tmp, name),
        "warmup_output": warmup,
        "profile": args.profile and impl in RUNTIME_SHAPES,
        # what the stream threads' process-total reaches at the end: W3 processes every payment
        # twice (before and after the repartition) and every item once
        "processed_total": 2 * args.records + peer_w3.ITEMS if base == "W3" else args.records,
    }
    result = run_child(impl, spec)
    row = {
        "name": name,
        "run": run,
        "round": rnd,
        "workload": workload,
        "impl": impl,
        "records": args.records,
        "partitions": args.partitions,
        "keys": args.keys,
        "broker": "external" if args.bootstrap_servers else args.broker,
        "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "load1": os.getloadavg()[0],
        **result,
    }
    if "error" not in result:
        records = read_to_end(servers, output, args.partitions)
        if base == "W3":
            row["check"] = peer_w3.check(records, expected)
        else:
            row["check"] = check_output("stateless" if base == "W1" else "stateful", records, expected)
        row["records_per_s"] = args.records / result["seconds"]
        row["cpu_us_per_record"] = result["cpu_s"] / args.records * 1e6
    return row


def describe(row: dict) -> str:
    if "error" in row:
        return f"{row['name']}: FAILED {row['error'].strip().splitlines()[-1:]}"
    return (
        f"{row['name']}: {row['records_per_s']:,.0f} rec/s, {row['cpu_us_per_record']:.2f} CPU us/rec, "
        f"{row['peak_rss_mb']:.0f} MB, committed after {row['seconds_to_commit']:.1f}s, output {row['check']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--commit-ms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--impls",
        default=",".join(DEFAULT_IMPLS),
        help=f"of {', '.join(IMPLS)} (runtime-t2: 1 instance x 2 stream threads; runtime-i2: 2 "
        "instances x 1 thread, two processes of one application)",
    )
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument(
        "--no-jvm-warmup",
        dest="jvm_warmup",
        action="store_false",
        help="measure Kafka Streams on a fresh JVM (default: after one unmeasured pass over the input)",
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile of this runtime's runs")
    parser.add_argument("--broker", choices=("kafka", "tansu"), default="kafka")
    parser.add_argument("--bootstrap-servers", default=None, help="an existing broker instead")
    parser.add_argument("--out", default=str(ROOT / ".streams-runtime" / "bench" / "peers.jsonl"))
    args = parser.parse_args(argv)
    impls = [i for i in args.impls.split(",") if i]
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = sorted(set(impls) - set(IMPLS)) + sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown {unknown}; impls: {', '.join(IMPLS)}; workloads: {', '.join(WORKLOADS)}")
    run = uuid.uuid4().hex[:6]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    with broker(args.broker, args.bootstrap_servers) as servers, tempfile.TemporaryDirectory() as tmp:
        admin = create_admin(servers)
        where = "Kafka" if args.bootstrap_servers else args.broker
        print(
            f"[peers] {where} at {servers}; producing {args.records:,} records "
            f"({args.partitions} partitions, {args.keys:,} keys)",
            flush=True,
        )
        inputs = produce_inputs(admin, servers, run, args, workloads)
        total = args.rounds * sum(supports(i, w) for i in impls for w in workloads)
        for rnd in range(args.rounds):
            for workload in workloads:
                for impl in (i for i in impls if supports(i, workload)):
                    row = measure(args, admin, servers, inputs, (run, rnd, workload, impl), tmp)
                    rows.append(row)
                    with out.open("a") as f:
                        f.write(json.dumps({k: v for k, v in row.items() if k != "profile"}) + "\n")
                    print(f"[peers] {len(rows)}/{total} {describe(row)}", flush=True)
                    if row.get("profile"):
                        print(row.pop("profile"), flush=True)
    report(rows, impls, workloads)
    print(f"\n[peers] raw figures appended to {out}")
    return 0 if all(r.get("check") == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
