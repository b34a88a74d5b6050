"""Scale-out with warm-ups. A second instance joins an application whose
only instance holds two large stores; the task that balance gives to the newcomer stays active
where its state is while a warm-up replica catches up on the newcomer, and moves at the
follow-up rebalance the newcomer asks for once its warm-up is within the acceptable lag (checked
every 5 s) or at a probing rebalance, whichever comes first -- its output never pauses meanwhile.

Two ``worker_instance`` processes (``tests/integration/ha_app.py``: per-key count in RocksDB,
no standbys, ``probing_rebalance_interval_ms`` 5 s, 2 s sessions), two source partitions, 100k
distinct keys counted by the first instance before the second starts; a steady trickle of input
to both partitions runs throughout. Asserted: the newcomer reports a warm-up (standby) of a task
first and that task active only later (>= ~5 s after the warm-up began: the follow-up's check
interval, equal to the probing interval here); between the warm-up's start and the hand-off the
task's output never stops for more than a few seconds; nothing is lost. Printed: the warm-up
duration and the pause at hand-off.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.integration.ha_support import (
    Instance,
    LiveProducer,
    OutputWatcher,
    max_gap,
    produce_keys,
    wait_for,
)
from tests.integration.streams_support import make_topics

pytestmark = pytest.mark.kafka

KEYS = 100_000
PROBING_MS = 5_000


def test_should_keep_processing_while_a_warmup_catches_up_then_move_the_task(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("wu-in"), unique_name("wu-out"), unique_name("ha-warmup")
    make_topics(bootstrap_servers, **{source: 2, sink: 2})
    settings = {
        "source": source,
        "sink": sink,
        "app": app,
        "config": {"probing_rebalance_interval_ms": PROBING_MS, "acceptable_recovery_lag": 5_000},
    }
    watcher = OutputWatcher(bootstrap_servers, sink, 2)
    old = Instance(0, bootstrap_servers, settings, tmp_path / "instance-0")
    instances = [old]
    live = None
    try:
        wait_for(
            lambda: old.tasks("active") == {"0_0", "0_1"},
            45,
            lambda: "instance 0 running both:\n" + old.text(),
        )
        produce_keys(bootstrap_servers, source, KEYS)
        wait_for(lambda: watcher.count() >= KEYS, 60, lambda: f"{KEYS} outputs, have {watcher.count()}")
        live = LiveProducer(bootstrap_servers, source, 2)
        time.sleep(1.0)

        new = Instance(1, bootstrap_servers, settings, tmp_path / "instance-1")
        instances.append(new)
        wait_for(lambda: new.tasks("standby"), 45, lambda: "a warm-up on the new instance:\n" + new.text())
        warmup_at, warmup_tasks = next((at, ts) for at, ts in new.reports("standby") if ts)
        (task,) = warmup_tasks
        partition = int(task.split("_")[1])
        wait_for(
            lambda: task in new.tasks("active"),
            60,
            lambda: f"{task} to move to the new instance:\n" + new.text() + "\n--- old:\n" + old.text(),
        )
        moved_at = next(at for at, ts in new.reports("active") if task in ts)
        # the hand-off began when the old instance reported running without the task
        handoff_at = next(at for at, ts in old.reports("active") if at > warmup_at and task not in ts)
        time.sleep(2.0)
        live.stop()
        produced = dict(live.produced)
        wait_for(
            lambda: all(watcher.latest().get(k, 0) >= n for k, n in produced.items()),
            30,
            lambda: f"every live input counted: {produced} vs {watcher.latest()}",
        )
    finally:
        if live is not None:
            live.stop()
        for instance in instances:
            instance.stop()
        watcher.close()
        if os.environ.get("HA_TEST_VERBOSE"):
            print("\n".join(f"--- instance {i.index}:\n{i.text()}" for i in instances))

    during = max_gap(watcher.arrivals(partition, warmup_at, handoff_at), warmup_at, handoff_at)
    window = (handoff_at - 1, moved_at + 5)
    at_handoff = max_gap(watcher.arrivals(partition, *window), *window)
    restored = [r for r in new.restorations(since=warmup_at) if r[1] == task]
    print(
        f"\nwarm-up of {task}: {handoff_at - warmup_at:.1f}s on the new instance, longest output gap "
        f"meanwhile {during:.2f}s; pause at the hand-off {at_handoff:.2f}s; records restored by the new "
        f"active {[r[2] for r in restored]}"
    )
    assert not [line for i in instances for line in i.text().splitlines() if "provider failed" in line], (
        "the leader's lags fell back to relative lags: the end-offset provider failed"
    )
    assert handoff_at - warmup_at >= PROBING_MS / 1000 - 1.5, "the task moved before its warm-up was checked"
    assert during < 3.0, f"{task}'s output paused {during:.2f}s while its warm-up caught up"
    assert restored and restored[0][2] < KEYS // 10, (
        f"the new active restored {restored}: the warm-up was not used"
    )
