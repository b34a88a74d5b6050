"""Failover time: ``kill -9`` of the instance owning a stateful task to the first new output,
with a standby replica and without, side by side.

Each scenario, on one broker (the embedded Tansu unless ``--bootstrap-servers``): two
``worker_instance`` processes of ``tests/integration/ha_app.py`` (per-key count in RocksDB, one
source partition: one task; test profile: 2 s sessions, 200 ms heartbeats and commits), the task
active on the first instance; ``--keys`` distinct keys counted; once the output (and, with a
standby, the standby's checkpoint) covers them, a steady trickle of input runs and the active
instance gets SIGKILL. Measured per run, from the survivor's log and the output topic:

* ``to output``: kill to the first output record the survivor writes (the headline figure,
  target < 5 s with a standby);
* ``rebalance``: kill to the start of the survivor's restore (session expiry + join + sync);
* ``restore``: the survivor's restore of the task (records replayed, seconds);
* ``rest``: restore end to first output (fetch of the input, processing, commit interval).

Then the ratio without / with a standby.

Run:  .venv/bin/python bench/failover.py [--keys 100000] [--runs 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from tests.integration.ha_support import (  # noqa: E402
    Instance,
    LiveProducer,
    OutputWatcher,
    produce_keys,
    wait_for,
)
from tests.integration.streams_support import make_topics  # noqa: E402


def run(bootstrap: str, keys: int, standbys: int, workdir: Path) -> dict[str, float]:
    tag = uuid.uuid4().hex[:8]
    source, sink, app = f"fo-in-{tag}", f"fo-out-{tag}", f"fo-{standbys}-{tag}"
    make_topics(bootstrap, **{source: 1, sink: 1})
    settings = {"source": source, "sink": sink, "app": app, "config": {"num_standby_replicas": standbys}}
    watcher = OutputWatcher(bootstrap, sink, 1)
    first = Instance(0, bootstrap, settings, workdir / f"{tag}-0")
    instances, live = [first], None
    try:
        wait_for(lambda: first.tasks("active") == {"0_0"}, 60, lambda: first.text())
        second = Instance(1, bootstrap, settings, workdir / f"{tag}-1")
        instances.append(second)
        wait_for(lambda: second.reports("active"), 60, lambda: second.text())
        if standbys:
            wait_for(lambda: second.tasks("standby") == {"0_0"}, 30, lambda: second.text())
        produce_keys(bootstrap, source, keys)
        wait_for(lambda: watcher.count() >= keys, 120, lambda: f"{watcher.count()} outputs")
        if standbys:
            covered = f"{app}-counts-changelog:0"
            wait_for(
                lambda: second.checkpoint(app, "0_0").get(covered, -1) >= keys - 1,
                60,
                lambda: f"standby checkpoint {second.checkpoint(app, '0_0')}",
            )
        live = LiveProducer(bootstrap, source, 1)
        time.sleep(1.5)
        killed = first.kill()
        wait_for(lambda: watcher.first_after(killed + 0.5) is not None, 120, lambda: second.text())
        output = watcher.first_after(killed + 0.5)
        wait_for(
            lambda: any(r[1] == "0_0" for r in second.restorations(since=killed)), 10, lambda: second.text()
        )
        logged, _, records, seconds = next(r for r in second.restorations(since=killed) if r[1] == "0_0")
    finally:
        if live is not None:
            live.stop()
        for instance in instances:
            instance.stop()
        watcher.close()
    restore_end = logged
    return {
        "to_output": output - killed,
        "rebalance": restore_end - seconds - killed,
        "restore": seconds,
        "records": records,
        "rest": output - restore_end,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--bootstrap-servers", default=None)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"with standby": [], "without standby": []}
    with bootstrap_or_embedded(args.bootstrap_servers) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for name, standbys in (("with standby", 1), ("without standby", 0)):
                results[name].append(run(bootstrap, args.keys, standbys, Path(tmp)))
    print(
        f"failover, kill -9 of the active instance, {args.keys} keys in the store, "
        f"{args.runs} run(s), median:"
    )
    print(f"{'scenario':<16} {'to output':>10} {'rebalance':>10} {'restore':>9} {'records':>9} {'rest':>7}")
    medians = {}
    for name, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        medians[name] = m
        print(
            f"{name:<16} {m['to_output']:>9.2f}s {m['rebalance']:>9.2f}s {m['restore']:>8.2f}s "
            f"{int(m['records']):>9} {m['rest']:>6.2f}s"
        )
    ratio = medians["without standby"]["to_output"] / medians["with standby"]["to_output"]
    print(
        f"ratio without/with standby (kill to first output): {ratio:.2f}x; "
        f"target with a standby < 5 s: {'met' if medians['with standby']['to_output'] < 5 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
