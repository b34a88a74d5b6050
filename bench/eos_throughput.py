"""Exactly-once throughput next to at-least-once for the stateful count.

One broker (embedded Tansu unless ``--bootstrap-servers``), one input topic of ``--records``
JSON payments (bench/runtime_throughput.py's generator), and two measured runs of the same
topology (``group_by_key -> count`` on RocksDB with its changelog, record cache on,
``to_stream -> map_values -> to``; bench/runtime_workloads.py), each in its own process, one
stream thread:

1. ``at_least_once``, commit every ``--alos-commit-ms`` (default 1000);
2. ``exactly_once_v2`` with its default 100 ms commit interval: one transactional producer per
   task, one transaction per task per commit (outputs + changelog + input offsets).

A run is timed from KafkaStreams RUNNING until every input offset is committed; every output is
checked afterwards (read_committed: the final count of every key), so a fast wrong run cannot
pass. Prints records/s, CPU seconds and peak RSS of each run and the ratio EOS / ALOS (target
>= 0.7x). ``--profile`` adds a cProfile summary of the stream threads of both runs.

Run:  .venv/bin/python bench/eos_throughput.py [--records 300000] [--partitions 8] [--profile]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.runtime_throughput import check_output, produce_input, read_to_end, run_child  # noqa: E402
from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics  # noqa: E402

TARGET = 0.7


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--alos-commit-ms", type=int, default=1000)
    parser.add_argument(
        "--eos-linger-ms", type=int, default=None, help="producer linger.ms override for the exactly-once run"
    )
    parser.add_argument("--bootstrap-servers", default=None)
    parser.add_argument("--profile", action="store_true", help="cProfile both runs (stream threads)")
    args = parser.parse_args(argv)
    run = uuid.uuid4().hex[:6]
    eos = {"processing_guarantee": "exactly_once_v2"}
    if args.eos_linger_ms is not None:
        eos["producer.linger.ms"] = args.eos_linger_ms
    runs = {
        "at_least_once": ({"processing_guarantee": "at_least_once"}, args.alos_commit_ms),
        "exactly_once_v2": (eos, 100),
    }
    with bootstrap_or_embedded(args.bootstrap_servers) as servers, tempfile.TemporaryDirectory() as tmp:
        admin = create_admin(servers)
        source = f"bench-eos-payments-{run}"
        create_topics(admin, [TopicSpec(source, args.partitions)])
        print(
            f"[bench] Kafka at {servers}; producing {args.records:,} records to {source} "
            f"({args.partitions} partitions, {args.keys:,} keys) ...",
            flush=True,
        )
        started = time.perf_counter()
        expected = produce_input(servers, source, args.records, args.partitions, args.keys)
        print(f"[bench] produced in {time.perf_counter() - started:.1f}s", flush=True)
        results: dict[str, dict] = {}
        for name, (config, commit_ms) in runs.items():
            output = f"bench-eos-{name}-out-{run}"
            create_topics(admin, [TopicSpec(output, args.partitions)])
            spec = {
                "workload": "stateful-framework",
                "servers": servers,
                "input": source,
                "output": output,
                "changelog": "",
                "group": f"bench-eos-{name}-{run}",
                "ends": expected["ends"],
                "commit_ms": commit_ms,
                "state_dir": os.path.join(tmp, name),
                "config": config,
                "cache": True,
                "profile": args.profile,
            }
            print(f"[bench] running {name} (commit every {commit_ms} ms) ...", flush=True)
            result = run_child(spec)
            if "error" not in result:
                records = read_to_end(servers, output, args.partitions)
                result["check"] = check_output("stateful", records, expected, every_update=False)
            results[name] = result
        print()
        print(f"{'run':<18} {'records/s':>12} {'seconds':>9} {'cpu_s':>9} {'rss_mb':>9}  output")
        for name, r in results.items():
            if "error" in r:
                print(f"{name:<18} FAILED: {r['error'].strip().splitlines()[-1]}")
                continue
            print(
                f"{name:<18} {args.records / r['seconds']:>12,.0f} {r['seconds']:>9.2f} {r['cpu_s']:>9.2f} "
                f"{r['peak_rss_mb']:>9.1f}  {r['check']}"
            )
        alos, eos = results.get("at_least_once", {}), results.get("exactly_once_v2", {})
        code = 1
        if "seconds" in alos and "seconds" in eos:
            ratio = alos["seconds"] / eos["seconds"]
            cpu_ratio = alos["cpu_s"] / eos["cpu_s"]
            ok = ratio >= TARGET and alos["check"] == "ok" and eos["check"] == "ok"
            code = 0 if ok else 1
            print(
                f"\nexactly_once_v2 / at_least_once = {ratio:.2f}x records/s (target >= {TARGET}x) "
                f"{'MET' if ok else 'MISSED'}; {cpu_ratio:.2f}x records per CPU second"
            )
        for name, r in results.items():
            if r.get("profile"):
                print(f"\n--- profile of {name} (stream threads; by own time, then cumulative) ---")
                print(r["profile"])
    return code


if __name__ == "__main__":
    sys.exit(main())
