"""Two-instance output completeness: is every count update of an at-least-once per-key count in
its output topic, and does a live reader see all of them?

A stress run, not a CI test. Each run, on one broker (the embedded Tansu unless
``--bootstrap-servers``): two ``worker_instance`` processes of ``tests/integration/chaos_app.py``
under at-least-once (per-key count in RocksDB with a changelog, no cache: every update emitted),
``--records`` input records produced at ``--rate`` (keys ``k0..``, explicit partitions), and the
second instance restarted every ``--restart-every`` seconds while input streams in (SIGTERM: a
clean close, or ``--kill`` for SIGKILL), each restart two rebalances. Meanwhile a live reader
consumes the output topic from offset 0 as it is written. Once every key's latest count equals
what was produced, a fresh reader reads the whole topic to each partition's true end
(``kafka/offsets.py``: the end-of-partition offset, never a listed end), and the live reader is
given the same ends to reach.

Reported per run: expected updates (with clean restarts every update ``(key, 1..n)`` appears
exactly once unless an input was processed twice), records read by each reader, the updates
missing from each, duplicates, gaps in each reader's offset sequence per partition, and for each
update missing from the live reader whether the fresh reader found it in the log (in the log:
the live reader skipped it, a broker or reader issue; not in the log: never written, a runtime
issue).

Run:  nice -n 10 .venv/bin/python bench/two_instance_output.py [--runs 3] [--records 20000]
"""

from __future__ import annotations

import argparse
import logging
import re
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from streams_runtime.kafka.clients import TopicPartition, create_consumer  # noqa: E402
from tests.integration.streams_support import (  # noqa: E402
    WorkerProcess,
    make_topics,
    produce_to,
    read_to_end,
    wait_until,
)

APP = "tests.integration.chaos_app:app"
REPARTITION_APP = "bench.two_instance_app:app"
PARTITIONS = 6
KEYS = 60

Update = tuple[str, int]  # (key, count)
Row = tuple[int, int, str, int]  # (partition, offset, key, count)


def _row(message: Any) -> Row:
    return (
        message.partition(),
        message.offset(),
        message.key().decode(),
        struct.unpack(">q", message.value())[0],
    )


class LiveReader:
    """Reads the output topic from offset 0 while it is written, as a downstream consumer would."""

    def __init__(self, bootstrap: str, topic: str, fetch_log: Path | None = None) -> None:
        self.rows: list[Row] = []
        self.positions: dict[int, int] = {}
        self.targets: dict[int, int] | None = None
        self._stop = threading.Event()
        overrides: dict[str, Any] = {}
        if fetch_log is not None:  # librdkafka's fetch requests and answers, one line each
            logger = logging.getLogger(f"live-fetch-{topic}")
            logger.propagate = False
            logger.setLevel(logging.DEBUG)
            logger.addHandler(logging.FileHandler(fetch_log))
            overrides = {"debug": "fetch", "logger": logger}
        self._consumer = create_consumer(
            bootstrap, f"live-{uuid.uuid4().hex[:8]}", overrides, low_latency=True
        )
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for message in self._consumer.consume(1000, 0.2):
                if message.error() is None:
                    row = _row(message)
                    self.rows.append(row)
                    self.positions[row[0]] = row[1] + 1

    def reached(self) -> bool:
        assert self.targets is not None
        return all(self.positions.get(p, 0) >= end for p, end in self.targets.items())

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()


def _fetch_at(partition: int, line: str) -> re.Match[str] | None:
    """A librdkafka fetch debug line requesting ``partition`` at an offset (the offset is group 1)."""
    return re.search(rf"\[{partition}\] at offset (\d+)", line)


def _gaps(rows: list[Row], ends: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
    """Per partition: offset ranges ``[a, b)`` below the partition's end that no row has."""
    gaps: dict[int, list[tuple[int, int]]] = {}
    for p in range(PARTITIONS):
        offsets = sorted({o for q, o, _, _ in rows if q == p})
        expected_next, ranges = 0, []
        for o in offsets + [ends.get(p, 0)]:
            if o > expected_next:
                ranges.append((expected_next, o))
            expected_next = max(expected_next, o + 1)
        if ranges:
            gaps[p] = ranges
    return gaps


def _produce(bootstrap: str, source: str, records: int, rate: int, produced: Counter) -> None:
    started, n = time.monotonic(), 0
    while n < records:
        batch = []
        for _ in range(min(rate // 10, records - n)):
            key = f"k{n % KEYS}"
            batch.append((key.encode(), f"id-{n}".encode(), n % KEYS % PARTITIONS))
            produced[key] += 1
            n += 1
        produce_to(bootstrap, source, batch)
        time.sleep(max(0.0, started + n / rate - time.monotonic()))


def run(bootstrap: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    source, counts, ids, app = f"tio-in-{tag}", f"tio-counts-{tag}", f"tio-ids-{tag}", f"tio-{tag}"
    make_topics(bootstrap, **{source: PARTITIONS, counts: PARTITIONS, ids: PARTITIONS})
    if args.repartition:
        app_path, prefix = REPARTITION_APP, "r"
        env = {"WORKER_TEST_TOPICS": f"{source},{counts},{app}"}
    else:
        app_path, prefix = APP, ""
        env = {"WORKER_TEST_TOPICS": f"{source},{counts},{ids},{app}", "CHAOS_GUARANTEE": "at_least_once"}
    workers = [WorkerProcess(app_path, i, bootstrap, workdir / f"{tag}-{i}", env) for i in range(2)]
    fetch_log = workdir / f"{tag}-fetch.log" if args.debug_fetch else None
    live = LiveReader(bootstrap, counts, fetch_log)
    produced: Counter = Counter()
    restarts = 0
    try:
        wait_until(lambda: all(w.active_partitions() is not None for w in workers), 90, lambda: "RUNNING")
        producer = threading.Thread(
            target=_produce, args=(bootstrap, source, args.records, args.rate, produced), daemon=True
        )
        producer.start()
        next_restart = time.monotonic() + args.restart_every
        while producer.is_alive():
            producer.join(0.2)
            if producer.is_alive() and time.monotonic() >= next_restart:
                if args.kill:
                    workers[1].kill()
                else:
                    workers[1].stop()
                workers[1] = WorkerProcess(app_path, 1, bootstrap, workdir / f"{tag}-1", env)
                restarts += 1
                next_restart = time.monotonic() + args.restart_every
        fresh: list[Row] = []
        latest: dict[str, int] = {}

        def settled() -> bool:
            fresh[:] = [_row(m) for m in read_to_end(bootstrap, counts, PARTITIONS, timeout=30)]
            latest.clear()
            for _, _, key, count in fresh:
                latest[key] = count
            return all(latest.get(prefix + k, 0) >= n for k, n in produced.items())

        try:
            wait_until(settled, args.settle_s, lambda: "final counts")
            low: dict[str, tuple[int, int]] = {}
        except AssertionError:  # reported: (final count, produced) of every key left low
            low = {
                k: (latest.get(prefix + k, 0), n)
                for k, n in produced.items()
                if latest.get(prefix + k, 0) < n
            }
        time.sleep(2)  # any record still in flight lands; then the final fresh read
        fresh[:] = [_row(m) for m in read_to_end(bootstrap, counts, PARTITIONS, timeout=30)]
        ends = {p: 0 for p in range(PARTITIONS)}
        for p, o, _, _ in fresh:
            ends[p] = max(ends[p], o + 1)
        live.targets = ends
        live_reached = True
        try:
            wait_until(live.reached, 30, lambda: "live reader at the ends")
        except AssertionError:
            live_reached = False
    finally:
        live.close()
        for w in workers:
            w.stop()
    expected = {(prefix + k, c) for k, n in produced.items() for c in range(1, n + 1)}
    result: dict[str, Any] = {
        "records": sum(produced.values()),
        "low_final_counts": low,
        "restarts": restarts,
        "expected": len(expected),
        "live_reached_ends": live_reached,
    }
    for name, rows in (("fresh", fresh), ("live", list(live.rows))):
        updates = Counter((k, c) for _, _, k, c in rows)
        result[f"{name}_read"] = len(rows)
        result[f"{name}_missing"] = sorted(expected - set(updates))
        result[f"{name}_duplicates"] = sum(n - 1 for n in updates.values())
        result[f"{name}_gaps"] = _gaps(rows, ends)
        result[f"{name}_extra"] = len(set(updates) - expected)
    result["fetch_log"] = []
    if fetch_log is not None:  # the fetch log lines of the live reader around each gap
        lines = fetch_log.read_text(errors="replace").splitlines()
        for p, ranges in result["live_gaps"].items():
            fetches = [(i, int(m.group(1))) for i, line in enumerate(lines) if (m := _fetch_at(p, line))]
            for a, _ in ranges:
                before = [i for i, o in fetches if o <= a]
                after = [i for i, o in fetches if o > a]
                if before and after:  # the last fetch at or below the gap to the first above it
                    window = lines[before[-1] : after[0] + 1]
                    result["fetch_log"] += [line for line in window if f"[{p}]" in line]
    in_log = {(k, c): (p, o) for p, o, k, c in fresh}
    result["live_missing_in_log"] = {u: in_log[u] for u in result["live_missing"] if u in in_log}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rate", type=int, default=1000, help="input records per second")
    parser.add_argument("--restart-every", type=float, default=5.0, help="seconds between restarts")
    parser.add_argument("--kill", action="store_true", help="SIGKILL instead of a clean SIGTERM")
    parser.add_argument(
        "--repartition", action="store_true", help="count a re-keyed stream (a repartition topic both write)"
    )
    parser.add_argument("--settle-s", type=float, default=120.0, help="wait for the final counts at most")
    parser.add_argument(
        "--debug-fetch", action="store_true", help="log the live reader's fetches; print them around a gap"
    )
    parser.add_argument("--bootstrap-servers", default=None)
    args = parser.parse_args()
    totals = Counter()
    with bootstrap_or_embedded(args.bootstrap_servers) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            r = run(bootstrap, args, Path(tmp))
            short = bool(r["fresh_missing"] or r["live_missing"] or r["low_final_counts"])
            totals["runs"] += 1
            totals["short"] += short
            totals["records"] += r["records"]
            print(
                f"run {i + 1}: {r['records']} records, {r['restarts']} restarts, expected {r['expected']} "
                f"updates; fresh read {r['fresh_read']} (missing {len(r['fresh_missing'])}, "
                f"duplicates {r['fresh_duplicates']}, beyond expected {r['fresh_extra']}, "
                f"offset gaps {r['fresh_gaps'] or 'none'}); live read {r['live_read']} "
                f"(missing {len(r['live_missing'])}, duplicates {r['live_duplicates']}, "
                f"offset gaps {r['live_gaps'] or 'none'}, reached the ends: {r['live_reached_ends']})",
                flush=True,
            )
            if r["low_final_counts"]:
                print(f"  final counts low (count, produced): {r['low_final_counts']}", flush=True)
            for line in r["fetch_log"][:40]:
                print(f"  fetch: {line}", flush=True)
            if r["fresh_missing"]:
                print(f"  missing from the log (never written): {r['fresh_missing'][:50]}", flush=True)
            if r["live_missing"]:
                print(
                    f"  missing from the live read: {r['live_missing'][:50]}; of these in the log "
                    f"(partition, offset): {dict(list(r['live_missing_in_log'].items())[:50])}",
                    flush=True,
                )
    print(
        f"two-instance output: {totals['runs']} run(s), {totals['records']} records in all, "
        f"{totals['short']} run(s) with an update missing from the log or the live read"
    )


if __name__ == "__main__":
    main()
