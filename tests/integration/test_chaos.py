"""Chaos: three worker processes, one of them ``kill -9``'ed every 10 s while input streams in.

Each run: 3 ``worker_instance`` processes of ``chaos_app.py`` (6 partitions, RocksDB counts with
a changelog, every count update emitted, and a copy of every input id), input produced for
~32 s at ~400 records/s (keys ``k0..k59``, values unique ids), ``kill -9`` of the next instance
in turn every 10 s (three kills, the last with 2 s of input still to come), restarted at once on
its own state directory. Then the outputs must settle:

* at-least-once: every input id is in the id copy (0 lost; duplicates allowed), and every
  final count is >= what was produced for its key;
* exactly-once: read as committed (``read_committed_topic``: aborted transactions left out
  from the log's markers, which Tansu does not do for librdkafka readers), every input id is
  in the id copy exactly once and every key's count updates are exactly 1, 2, ..., n with n the
  number produced: no loss, no duplicate, no aborted increment restored into the state.

Figures (records, kills, lost, duplicates, time to recover) are printed for the README.
"""

from __future__ import annotations

import struct
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from streams_runtime.testing import read_committed_topic
from tests.integration.streams_support import (
    WorkerProcess,
    make_topics,
    produce_to,
    read_to_end,
    wait_until,
)

APP = "tests.integration.chaos_app:app"
PARTITIONS = 6
KEYS = 60
INSTANCES = 3
RATE = 400  # records per second
KILL_EVERY_S = 10.0
KILLS = 3  # at 10, 20 and 30 s
PRODUCE_S = KILLS * KILL_EVERY_S + 2.0


class Fleet:
    def __init__(self, bootstrap: str, topics: str, guarantee: str, root: Path) -> None:
        self.bootstrap, self.topics, self.guarantee, self.root = bootstrap, topics, guarantee, root
        self.workers = [self._start(i) for i in range(INSTANCES)]
        self.kills: list[tuple[int, float, WorkerProcess]] = []

    def _start(self, i: int) -> WorkerProcess:
        return WorkerProcess(
            APP,
            i,
            self.bootstrap,
            self.root / f"instance-{i}",
            env={"WORKER_TEST_TOPICS": self.topics, "CHAOS_GUARANTEE": self.guarantee},
        )

    def kill_and_restart(self, i: int) -> None:
        at = self.workers[i].kill()
        self.workers[i] = self._start(i)
        self.kills.append((i, at, self.workers[i]))

    def recovery_times(self) -> list[float]:
        """Per kill: seconds until the restarted instance reported RUNNING with tasks again."""
        times = []
        for _, at, worker in self.kills:
            running = [t for t, line in list(worker.timed_lines) if "active task(s)" in line]
            times.append(round(running[0] - at, 1) if running else float("nan"))
        return times

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def logs(self) -> str:
        return "\n".join(f"--- instance {w.index}\n" + "\n".join(w.lines[-30:]) for w in self.workers)


def _produce_stream(bootstrap: str, source: str, stop_at: float, produced: list[tuple[str, str]]) -> None:
    n = 0
    started = time.monotonic()
    while time.monotonic() < stop_at:
        batch = []
        for _ in range(RATE // 10):
            key = f"k{n % KEYS}"
            batch.append((key.encode(), f"id-{n}".encode(), n % KEYS % PARTITIONS))
            produced.append((key, f"id-{n}"))
            n += 1
        produce_to(bootstrap, source, batch)
        time.sleep(max(0.0, started + n / RATE - time.monotonic()))


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_no_input_is_lost_and_exactly_once_stays_exact_under_repeated_kill_9(
    bootstrap_servers, unique_name, tmp_path, guarantee
):
    source, counts, ids, app = (
        unique_name("in"),
        unique_name("counts"),
        unique_name("ids"),
        unique_name("chaos"),
    )
    make_topics(bootstrap_servers, **{source: PARTITIONS, counts: PARTITIONS, ids: PARTITIONS})
    fleet = Fleet(bootstrap_servers, f"{source},{counts},{ids},{app}", guarantee, tmp_path)
    produced: list[tuple[str, str]] = []
    try:
        wait_until(
            lambda: all(w.active_partitions() is not None for w in fleet.workers), 60, lambda: fleet.logs()
        )
        began = time.monotonic()
        producer = threading.Thread(
            target=_produce_stream, args=(bootstrap_servers, source, began + PRODUCE_S, produced), daemon=True
        )
        producer.start()
        for n in range(KILLS):  # on a fixed schedule: a slow restart does not push a kill out
            time.sleep(max(0.0, began + (n + 1) * KILL_EVERY_S - time.monotonic()))
            fleet.kill_and_restart(n % INSTANCES)
        producer.join(30)
        assert not producer.is_alive()
        expected = Counter(key for key, _ in produced)
        all_ids = {i for _, i in produced}
        settled_at = time.monotonic()

        if guarantee == "at_least_once":
            seen: list = []

            def ids_arrived() -> bool:
                seen[:] = read_to_end(bootstrap_servers, ids, PARTITIONS, timeout=20)
                return {m.value().decode() for m in seen} >= all_ids

            wait_until(ids_arrived, 90, lambda: f"every input id in {ids}\n" + fleet.logs())
            recovered_s = time.monotonic() - settled_at
            copies = Counter(m.value().decode() for m in seen)
            lost = len(all_ids - set(copies))
            duplicates = sum(c - 1 for c in copies.values())
            latest: dict[str, int] = {}

            def counts_caught_up() -> bool:  # the count updates may trail the id copies a little
                for m in read_to_end(bootstrap_servers, counts, PARTITIONS, timeout=20):
                    latest[m.key().decode()] = struct.unpack(">q", m.value())[0]
                return all(latest.get(k, 0) >= n for k, n in expected.items())

            assert lost == 0
            wait_until(counts_caught_up, 30, lambda: f"counts >= produced: {latest} vs {dict(expected)}")
        else:
            committed_counts: list = []

            def exact() -> bool:
                committed_counts[:] = read_committed_topic(
                    bootstrap_servers, counts, PARTITIONS, timeout_s=20
                )
                latest = {m.key().decode(): struct.unpack(">q", m.value())[0] for m in committed_counts}
                return latest == dict(expected)

            def count_gaps() -> str:
                latest = {m.key().decode(): struct.unpack(">q", m.value())[0] for m in committed_counts}
                off = {k: (latest.get(k), n) for k, n in expected.items() if latest.get(k) != n}
                return f"{len(off)} keys off (committed, produced): {dict(list(off.items())[:10])}"

            wait_until(
                exact, 90, lambda: f"exact committed counts in {counts}: {count_gaps()}\n" + fleet.logs()
            )
            recovered_s = time.monotonic() - settled_at
            updates: dict[str, list[int]] = {}
            for m in committed_counts:
                updates.setdefault(m.key().decode(), []).append(struct.unpack(">q", m.value())[0])
            for key, values in updates.items():
                assert values == list(range(1, expected[key] + 1)), (key, values[:50])
            copies = Counter(
                m.value().decode() for m in read_committed_topic(bootstrap_servers, ids, PARTITIONS)
            )
            lost = len(all_ids - set(copies))
            duplicates = sum(c - 1 for c in copies.values())
            assert lost == 0 and duplicates == 0 and set(copies) == all_ids
        print(
            f"\nchaos {guarantee}: {len(produced)} records, {len(fleet.kills)} kills, lost {lost}, "
            f"duplicates {duplicates}, restarted instance RUNNING after {fleet.recovery_times()} s, "
            f"outputs complete {recovered_s:.1f} s after the input stopped"
        )
        assert len(fleet.kills) == KILLS
    finally:
        fleet.stop()
