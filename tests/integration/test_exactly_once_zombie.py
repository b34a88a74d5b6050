"""Exactly-once with a real zombie: an instance process frozen (SIGSTOP) until its session
expires and its tasks move to the other instance, then thawed (SIGCONT).

Two ``worker_instance`` processes run ``tests/integration/eos_worker_app.py`` (exactly_once_v2,
cache off: one count update per input), 4 partitions, one thread each. The survivor's
``init_transactions`` for the moved tasks fences the frozen instance's producers. When the
zombie wakes up it still believes it owns its tasks: whatever it sends is refused (fenced), it
closes those tasks dirty and rejoins, and it keeps running. Read with read_committed, every
input has exactly one count update and every count is exact.

Tansu shows aborted transactional records to read_committed readers (docs/decisions/0001-embedded-broker.md),
so the zombie is
frozen while the input is idle (no transaction of it holds records); the phases are sequential.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.integration.streams_support import WorkerProcess, make_topics, produce_to, wait_until
from tests.integration.test_exactly_once import assert_exactly_once, keyed, read_to_end, tally, visibility

PARTITIONS = 4
APP = "tests.integration.eos_worker_app:app"


def instance(index: int, bootstrap: str, topics: str, state_dir: Path) -> WorkerProcess:
    """One ``worker_instance`` process of APP, reading and writing ``topics``."""
    return WorkerProcess(APP, index, bootstrap, state_dir, env={"WORKER_TEST_TOPICS": topics})


def outputs(bootstrap: str, sink: str) -> int:
    return len(read_to_end(bootstrap, sink, PARTITIONS, committed=True))


def test_should_fence_a_frozen_instance_and_keep_counts_exact(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("zin"), unique_name("zout"), unique_name("zombie")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    instances = [
        instance(i, bootstrap_servers, f"{source},{sink},{app}", tmp_path / f"instance-{i}") for i in range(2)
    ]
    zombie, survivor = instances
    produced: dict[str, int] = {}
    try:

        def split() -> bool:
            tasks = [i.active_partitions() for i in instances]
            return all(tasks) and sorted(p for t in tasks for p in t) == list(range(PARTITIONS))

        wait_until(
            split, 60, lambda: "both instances running 2 tasks:\n" + "\n".join(zombie.lines + survivor.lines)
        )
        phase = keyed(0, 400)
        produce_to(bootstrap_servers, source, phase)
        tally(phase, produced)
        wait_until(lambda: outputs(bootstrap_servers, sink) >= 400, 30, "phase 1 outputs")

        zombie.process.send_signal(signal.SIGSTOP)  # idle: no open transaction
        phase = keyed(400, 800)
        produce_to(bootstrap_servers, source, phase)
        tally(phase, produced)
        wait_until(
            lambda: outputs(bootstrap_servers, sink) >= 800,
            45,
            lambda: "the survivor to take the frozen instance's tasks; "
            + visibility(bootstrap_servers, sink, PARTITIONS)
            + "\n"
            + "\n".join(survivor.lines[-20:]),
        )

        zombie.process.send_signal(signal.SIGCONT)  # it still believes it owns its tasks
        phase = keyed(800, 1200)
        produce_to(bootstrap_servers, source, phase)
        tally(phase, produced)
        wait_until(lambda: outputs(bootstrap_servers, sink) >= 1200, 45, "phase 3 outputs")
        assert_exactly_once(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True), produced)
        assert zombie.process.poll() is None, (
            "the zombie crashed instead of giving its tasks up:\n" + "\n".join(zombie.lines[-30:])
        )
    finally:
        for worker in instances:
            worker.stop()
