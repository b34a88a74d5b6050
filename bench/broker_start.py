"""Start time and resident memory of the local brokers: Tansu, Apache Kafka (1 and 3 nodes), and
Apache Kafka without its class-data-sharing archive (what the archive buys).

    .venv/bin/python bench/broker_start.py [--rounds 3]

Each round starts a broker, waits until it answers (for Kafka: every node logged "Kafka Server
started" and the metadata lists them all), reads the resident memory of its processes, and stops
it. Prints the median and range per kind.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams_runtime.brokers import apache_kafka, local_broker, rss_bytes  # noqa: E402


def measure(kind: str, nodes: int, cds: bool, rounds: int) -> tuple[list[float], list[float]]:
    seconds, mib = [], []
    for _ in range(rounds):
        original = apache_kafka.CDS_ARCHIVE
        if not cds:
            apache_kafka.CDS_ARCHIVE = "no-such-archive.jsa"
        try:
            broker = local_broker(kind, nodes=nodes)
            began = time.monotonic()
            info = broker.start()
            seconds.append(time.monotonic() - began)
            mib.append(sum(rss_bytes(pid) or 0 for pid in info.all_pids) / 2**20)
            broker.stop()
        finally:
            apache_kafka.CDS_ARCHIVE = original
    return seconds, mib


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cases = [
        ("tansu", 1, True),
        ("kafka", 1, True),
        ("kafka", 1, False),
        ("kafka", 3, True),
        ("kafka", 3, False),
    ]
    print(f"{'broker':<34} {'start s (median, range)':<26} {'RSS MiB (median)':>16}")
    for kind, nodes, cds in cases:
        seconds, mib = measure(kind, nodes, cds, args.rounds)
        name = "Tansu (embedded)" if kind == "tansu" else f"Apache Kafka, {nodes} node(s)"
        if kind == "kafka":
            name += ", CDS archive" if cds else ", no CDS archive"
        spread = f"{statistics.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f})"
        print(f"{name:<34} {spread:<26} {statistics.median(mib):>16.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
