"""A stateful application survives ``kill -9`` of one instance mid-stream.

Two worker instances run as separate OS processes (``streams_runtime.worker_instance`` with the
per-key count app of ``tests/integration/worker_app.py``: RocksDB + changelog, 2 s sessions),
6 partitions, one thread each. Input is produced continuously (key ``k<i>`` to partition
``i % 6``); mid-stream one instance gets SIGKILL: no commit, no close, no LeaveGroup. The survivor
takes its tasks once the session expires, restores their counts from the changelog and goes on.

At-least-once: the killed instance's input since its last commit is processed again, so the
final count of a key whose task moved is >= what was produced for it (never less: nothing is
lost, and a task that restarted from an empty store would fall far below); a key whose task
stayed on the survivor is counted exactly.
"""

from __future__ import annotations

import signal
import struct
import time
from collections import Counter
from pathlib import Path

from tests.integration.streams_support import WorkerProcess, latest_until, make_topics, produce_to, wait_until

PARTITIONS = 6
KEYS = [f"k{i}" for i in range(24)]
APP = "tests.integration.worker_app:app"


def instance(index: int, bootstrap: str, topics: str, state_dir: Path) -> WorkerProcess:
    """One ``worker_instance`` process of APP, reading and writing ``topics``."""
    return WorkerProcess(APP, index, bootstrap, state_dir, env={"WORKER_TEST_TOPICS": topics})


def decode(msg) -> tuple[str, int]:  # noqa: ANN001
    return msg.key().decode(), struct.unpack(">q", msg.value())[0]


def test_should_lose_no_input_when_an_instance_is_killed_mid_stream(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("crash-in"), unique_name("crash-out"), unique_name("crash")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    instances = [
        instance(i, bootstrap_servers, f"{source},{sink},{app}", tmp_path / f"instance-{i}") for i in range(2)
    ]
    survivor, victim = instances
    produced: Counter = Counter()
    try:

        def split() -> bool:
            tasks = [i.active_partitions() for i in instances]
            return all(tasks) and sorted(p for t in tasks for p in t) == list(range(PARTITIONS))

        wait_until(
            split, 45, lambda: "both instances running 3 tasks:\n" + "\n".join(survivor.lines + victim.lines)
        )
        kept = survivor.active_partitions()
        deadline, killed_at = time.monotonic() + 6.0, time.monotonic() + 2.5
        while time.monotonic() < deadline:  # ~48 records per key over 6 s, the kill after 2.5 s
            batch = KEYS * 2
            produce_to(
                bootstrap_servers, source, [(k.encode(), b"x", int(k[1:]) % PARTITIONS) for k in batch]
            )
            produced.update(batch)
            if victim.process.poll() is None and time.monotonic() >= killed_at:
                victim.process.send_signal(signal.SIGKILL)
                victim.process.wait(timeout=10)
            time.sleep(0.25)
        assert victim.process.returncode == -signal.SIGKILL

        stayed = {k for k in KEYS if int(k[1:]) % PARTITIONS in kept}
        moved = set(KEYS) - stayed

        def done(latest: dict) -> bool:
            return all(latest.get(k, 0) == produced[k] for k in stayed) and all(
                latest.get(k, 0) >= produced[k] for k in moved
            )

        latest = latest_until(bootstrap_servers, sink, PARTITIONS, decode, done, timeout=45)
        wait_until(
            lambda: survivor.active_partitions() == set(range(PARTITIONS)),
            10,
            "the survivor running every task",
        )
    finally:
        for worker in instances:
            worker.stop()
    assert len(kept) == 3 and moved and stayed
    assert {k: latest.get(k) for k in stayed} == {k: produced[k] for k in stayed}
    short = {k: (latest.get(k), produced[k]) for k in moved if latest.get(k, 0) < produced[k]}
    assert not short, f"lost input for keys whose task moved: {short}\n" + "\n".join(survivor.lines)
    assert survivor.process.returncode == 0, "\n".join(survivor.lines)
