"""One measured run of bench/peers.py on Quix Streams, in its own process (``.venv-quix``).

Quix Streams pins a confluent-kafka older than this project's, so it runs from its own virtual
environment (``make setup-bench``) and imports nothing from ``streams_runtime``. Called as
``.venv-quix/bin/python bench/peer_quix.py '<json spec>'``; prints one JSON line like
``bench/runtime_workloads.py``: ``seconds``, ``cpu_s``, ``peak_rss_mb``.

The work is the same functions as the other implementations (``bench/hand_loops.py``):

- W1: ``filter(keep)`` then ``apply(enrich)`` then ``to_topic``;
- W3: ``group_by`` the item, ``join_asof`` the items topic, a tumbling window ``reduce`` with
  ``current()`` (see :func:`_rekey_join_window`);
- W2: a stateful ``apply`` counting per key in Quix's RocksDB state (changelog topics on), every
  update written as ``{"key", "count"}``; with ``"guarantee": "exactly_once_v2"`` Quix's
  ``processing_guarantee="exactly-once"``.

Quix has no RUNNING state to observe: timing starts when the first record reaches the dataframe
(the partitions are assigned and nothing is left to restore: every run starts from empty state)
and ends when the last input record does (a counter in the same first step); then another thread
waits until every input offset is committed (``seconds_to_commit``) and stops the application.
Commit interval: Quix's default, 5 s, the harness's too.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from quixstreams import Application  # noqa: E402

from bench import hand_loops  # noqa: E402


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return -1.0


def _rekey_join_window(app: Application, sdf, spec: dict, total: int, processed: list):  # noqa: ANN001, ANN202
    """W3 in Quix's terms: ``group_by`` the item (a repartition topic, string keys: murmur2 of the
    same bytes as the items topic's keys), ``join_asof`` the items (Quix's enrichment join: the
    latest item at or before the payment's time), a 1-minute tumbling window with 10 s grace
    summing the amounts, every update emitted (``current()``) as ``item@window-start``: ``{"total"}``.
    The last record is processed when the re-keyed stream has seen every payment."""
    items = app.dataframe(app.topic(spec["items"], key_deserializer="str", value_deserializer="json"))
    after = [0]

    def count_rekeyed(value: dict) -> bool:
        after[0] += 1
        if after[0] == total:
            processed.append((time.perf_counter(), hand_loops.cpu_seconds()))
        return True

    sdf = sdf.group_by(
        lambda payment: payment["item"], name="item", key_serializer="str", key_deserializer="str"
    ).filter(count_rekeyed)
    sdf = sdf.join_asof(items, on_merge=hand_loops.join_item)
    window = sdf.tumbling_window(hand_loops.WINDOW_MS, grace_ms=hand_loops.GRACE_MS)
    sdf = window.reduce(lambda total_, sale: total_ + sale["amount"], lambda sale: sale["amount"]).current()
    sdf = sdf.apply(lambda result: {"total": result["value"], "start": result["start"]})
    return sdf.apply(
        lambda value, key, timestamp, headers: {"_key": f"{key}@{value['start']}", "total": value["total"]},
        metadata=True,
    )


def main() -> int:
    spec = json.loads(sys.argv[1])
    ends = {int(p): n for p, n in spec["ends"].items()}
    guarantee = "exactly-once" if spec["guarantee"] == "exactly_once_v2" else "at-least-once"
    app = Application(
        broker_address=spec["servers"],
        consumer_group=spec["group"],
        auto_offset_reset="earliest",
        state_dir=spec["state_dir"],
        processing_guarantee=guarantee,
        commit_interval=spec["commit_ms"] / 1000,
        consumer_extra_config={k: v for k, v in hand_loops.CONSUMER.items() if k.endswith(".ms")},
        loglevel=logging.WARNING,
    )
    keys = "str" if spec["workload"] == "W3" else "bytes"
    source = app.topic(spec["input"], key_deserializer=keys, value_deserializer="json")
    sink = app.topic(spec["output"], key_serializer=keys, value_serializer="json")
    started: list[tuple[float, float]] = []
    processed: list[tuple[float, float]] = []
    total, seen = sum(ends.values()), [0]

    def first_record(value: dict) -> bool:
        if not seen[0]:
            started.append((time.perf_counter(), hand_loops.cpu_seconds()))
        seen[0] += 1
        if seen[0] == total and spec["workload"] != "W3":  # the last input record: the rest of
            processed.append((time.perf_counter(), hand_loops.cpu_seconds()))  # is microseconds
        return True

    sdf = app.dataframe(source).filter(first_record)
    if spec["workload"] == "W1":
        sdf = sdf.filter(hand_loops.keep).apply(hand_loops.enrich)
    elif spec["workload"] == "W2":

        def count(value: dict, state) -> dict:  # noqa: ANN001 - Quix's State
            n = state.get("count", 0) + 1
            state.set("count", n)
            return hand_loops.count_update(value["user"], n)

        sdf = sdf.apply(count, stateful=True)
    elif spec["workload"] == "W3":
        sdf = _rekey_join_window(app, sdf, spec, total, processed)
    else:
        raise SystemExit(f"Quix Streams runs W1, W2 and W3 here, not {spec['workload']}")
    sdf.to_topic(sink, key=(lambda value: value["_key"]) if spec["workload"] == "W3" else None)

    done: list[tuple[float, float]] = []
    watcher = Consumer({"bootstrap.servers": spec["servers"], "group.id": spec["group"]})

    def watch() -> None:
        while True:
            committed = watcher.committed([TopicPartition(spec["input"], p) for p in ends], timeout=5)
            caught_up = all(tp.offset >= ends[tp.partition] for tp in committed if ends[tp.partition] > 0)
            # W3: the source's offsets are committed before the re-keyed records are processed
            if caught_up and processed:
                done.append((time.perf_counter(), hand_loops.cpu_seconds()))
                app.stop()
                return
            time.sleep(0.1)

    threading.Thread(target=watch, daemon=True).start()
    app.run()
    watcher.close()
    if not started or not processed or not done:
        raise SystemExit("Quix Streams stopped before every input offset was committed")
    (t0, c0), (t1, c1) = started[0], processed[0]
    result = {"seconds": t1 - t0, "cpu_s": c1 - c0, "seconds_to_commit": done[0][0] - t0}
    print(json.dumps({**result, "peak_rss_mb": _peak_rss_mb()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
