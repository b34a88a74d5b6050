"""Balance after staggered starts: 3 instances started 1-3 s apart, how often and how fast they
settle at 2 active tasks each.

Each trial, on one broker (the embedded Tansu unless ``--bootstrap-servers``): a fresh 6-partition
topic with ~40 records per partition, three in-process ``KafkaStreams`` clients of one
application counting its keys into a RocksDB store (1 standby replica, the integration tests'
fast client profile: 2 s sessions, 200 ms heartbeats and commits), started one after another
with a random gap of 1-3 s (seeded). Measured per trial:

* ``balanced``: seconds from the last start until every instance is RUNNING with 2 active tasks,
  or ``-`` when that did not happen within ``--limit`` seconds (the probing rebalance, 10
  minutes away, is the only follow-up the runtime would otherwise take);
* the state at that moment: active tasks per instance.

Run:  .venv/bin/python bench/staggered_starts.py [--trials 10] [--limit 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams_runtime import Consumed, KafkaStreams, Materialized, Serdes, StreamsBuilder  # noqa: E402
from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from tests.integration.streams_support import (  # noqa: E402
    active_task_counts,
    make_topics,
    produce,
    streams_config,
)

PARTITIONS = 6
KEYS = 90


def _topology(source: str):
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.Integer(), Serdes.String())).group_by_key().count(
        Materialized.as_("counts")
    )
    return builder.build()


def _balanced(clients: list[KafkaStreams]) -> bool:
    return all(c.state.name == "RUNNING" and sum(active_task_counts(c)) == 2 for c in clients)


def trial(bootstrap: str, gaps: list[float], limit: float, workdir: Path) -> tuple[float | None, list[int]]:
    tag = uuid.uuid4().hex[:8]
    source, app = f"stagger-in-{tag}", f"stagger-{tag}"
    make_topics(bootstrap, **{source: PARTITIONS})
    produce(bootstrap, source, ((struct.pack(">i", k), b"v") for k in range(KEYS) for _ in range(k % 4 + 1)))
    clients = [
        KafkaStreams(
            _topology(source),
            streams_config(bootstrap, app, workdir / f"{tag}-{i}", num_standby_replicas=1),
        )
        for i in range(3)
    ]
    try:
        for i, client in enumerate(clients):
            if i:
                time.sleep(gaps[i - 1])  # the stagger under test, not a wait for anything
            client.start()
        started = time.monotonic()
        deadline = started + limit
        while time.monotonic() < deadline:
            if _balanced(clients):
                return time.monotonic() - started, [sum(active_task_counts(c)) for c in clients]
            time.sleep(0.05)
        return None, [sum(active_task_counts(c)) for c in clients]
    finally:
        for client in clients:
            client.close(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--limit", type=float, default=20.0, help="seconds after the last start")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bootstrap-servers", default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    times: list[float] = []
    unbalanced = 0
    with bootstrap_or_embedded(args.bootstrap_servers) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        for n in range(1, args.trials + 1):
            gaps = [rng.uniform(1.0, 3.0), rng.uniform(1.0, 3.0)]
            took, counts = trial(bootstrap, gaps, args.limit, Path(tmp))
            if took is None:
                unbalanced += 1
            else:
                times.append(took)
            shown = "-" if took is None else f"{took:.2f}s"
            print(f"trial {n:>2}: gaps {gaps[0]:.1f}s {gaps[1]:.1f}s  balanced {shown:>6}  active {counts}")
    median = f"{statistics.median(times):.2f}s" if times else "-"
    print(
        f"{args.trials - unbalanced}/{args.trials} balanced (2/2/2) within {args.limit:.0f}s of the last "
        f"start; median {median}, max {max(times, default=0):.2f}s"
    )


if __name__ == "__main__":
    main()
