"""With one standby, ``kill -9`` of the instance owning a 100k-key store;
the standby's instance takes the task over and replays only the delta since its last checkpoint.

Two ``worker_instance`` processes (``tests/integration/ha_app.py``: per-key count in RocksDB with
a changelog, ``num_standby_replicas=1``, 2 s sessions), one source partition: one task, active on
the first instance, standby on the second. 100k distinct keys are counted; once the standby's
checkpoint covers the whole changelog, a steady trickle of input runs and the active instance gets
SIGKILL. The survivor must take the task and restore far fewer than 100k records (read from its
``restoration complete, N records restored`` log line), lose no input, and the time from the
kill to its first output is printed.
"""

from __future__ import annotations

import time

import pytest

from tests.integration.ha_support import Instance, LiveProducer, OutputWatcher, produce_keys, wait_for
from tests.integration.streams_support import make_topics

pytestmark = pytest.mark.kafka

KEYS = 100_000


def test_should_fail_over_to_the_standby_replaying_only_the_delta(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("ha-in"), unique_name("ha-out"), unique_name("ha-failover")
    make_topics(bootstrap_servers, **{source: 1, sink: 1})
    settings = {"source": source, "sink": sink, "app": app, "config": {"num_standby_replicas": 1}}
    watcher = OutputWatcher(bootstrap_servers, sink, 1)
    first = Instance(0, bootstrap_servers, settings, tmp_path / "instance-0")
    instances = [first]
    live = None
    try:
        wait_for(
            lambda: first.tasks("active") == {"0_0"}, 45, lambda: "instance 0 running 0_0:\n" + first.text()
        )
        second = Instance(1, bootstrap_servers, settings, tmp_path / "instance-1")
        instances.append(second)
        wait_for(
            lambda: second.tasks("standby") == {"0_0"},
            45,
            lambda: "instance 1 holding a standby of 0_0:\n"
            + second.text()
            + "\n--- instance 0:\n"
            + first.text(),
        )

        produce_keys(bootstrap_servers, source, KEYS)
        wait_for(lambda: watcher.count() >= KEYS, 60, lambda: f"{KEYS} outputs, have {watcher.count()}")
        # the standby replayed the whole changelog (KEYS records, offsets 0..KEYS-1) and checkpointed it
        wait_for(
            lambda: second.checkpoint(app, "0_0").get(f"{app}-counts-changelog:0", -1) >= KEYS - 1,
            30,
            lambda: f"the standby's checkpoint to cover the changelog: {second.checkpoint(app, '0_0')}",
        )

        live = LiveProducer(bootstrap_servers, source, 1)
        time.sleep(1.5)
        killed_at = first.kill()
        wait_for(
            lambda: second.tasks("active") == {"0_0"},
            45,
            lambda: "the standby's instance to take 0_0 over:\n" + second.text(),
        )
        wait_for(lambda: watcher.first_after(killed_at + 0.5) is not None, 30, "a new output after the kill")
        first_output = watcher.first_after(killed_at + 0.5)
        restored = [r for r in second.restorations(since=killed_at) if r[1] == "0_0"]
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

    assert restored, "no restoration of 0_0 after the kill:\n" + second.text()
    _, _, records, seconds = restored[0]
    print(
        f"\nfailover with a standby: {records} records replayed at takeover (of {KEYS} keys) "
        f"in {seconds:.2f}s;"
        f" kill -9 to first new output {first_output - killed_at:.2f}s"
    )
    assert records < KEYS // 10, f"the takeover replayed {records} records: the standby was not used"
