"""CPU per record of one stream task's own path, without a broker, next to a hand loop.

The records go through what a stream thread runs for each poll batch: the batch handed to the
task's input queue (``add_batch``), the task's processing loop (``process_all``),
deserialization, the processor graph built by the DSL, the state store stack (metered ->
change-logging -> RocksDB) and the sink's serialization. Output and changelog
records are handed to a collector that only counts them, so the figures leave out the Kafka
client (produce, consume, delivery reports) and show the runtime's own share, which the
peer harness's end-to-end figures cannot separate from the client's.

Workloads (the peer harness's, ~91-byte JSON values, keys ``user-<i % keys>``):

* W1: ``stream(Bytes, Json).filter(even amount).map_values(enrich).to(Json)``;
* W2: ``stream(String, Json).group_by_key().count(RocksDB, cache off).to_stream()
  .map_values(output object).to(Json)``;
* W3 (runtime only, ``bench/task_path_instructions.py``): the sub-topology after W3's repartition,
  ``stream(String, Json)`` keyed by item ``.join(table(items))`` (:data:`ITEMS` items, fed to the
  task first) ``.group_by_key().windowed_by(1 min, 10 s grace).aggregate(total, RocksDB)``
  ``.to_stream().map(item@start -> {"total"}).to(Json)``, with a 10 MiB record cache as in the
  peer benchmark; event times 100 per millisecond, as there.

The hand loop does the same work with orjson and a dict (W1: loads, filter, dumps; W2: loads,
count in a dict, dumps the output and the changelog value) and hands its records to the same
counting collector. Each task processes its records in one batch per round (as a poll batch
is), with a commit (store flush) every ``--commit-every`` records.

Run:  .venv/bin/python bench/task_path.py [--records 200000] [--partitions 8,64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.hand_loops import GRACE_MS, WINDOW_MS, join_item  # noqa: E402
from bench.peer_w3 import CATEGORIES, ITEMS  # noqa: E402
from streams_runtime import (  # noqa: E402
    Consumed,
    Grouped,
    Joined,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TimeWindows,
)
from streams_runtime.config import as_config  # noqa: E402
from streams_runtime.processor.internals.metrics import StreamsMetrics  # noqa: E402
from streams_runtime.processor.internals.nodes import build_processor_topology  # noqa: E402
from streams_runtime.processor.internals.partition_group import RawRecord  # noqa: E402
from streams_runtime.processor.internals.task import StreamTask  # noqa: E402
from streams_runtime.processor.task_id import TaskId  # noqa: E402
from streams_runtime.state.internals.record_cache import ThreadCache  # noqa: E402

TOPIC, OUTPUT, APP = "input", "output", "task-path"
#: W3's items topic and record cache (bytes); its items, windows and joiner are the peer benchmark's
ITEMS_TOPIC, W3_CACHE_BYTES = "items", 10 * 1024 * 1024


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def w1_keep(value: dict[str, Any]) -> bool:
    return bool(value["amount"] % 2 == 0)


def w1_transform(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "amount_cents": value["amount"] * 100}


def w2_output(key: str, count: int) -> dict[str, Any]:
    return {"user": key, "count": count}


def w3_records(count: int, partitions: int) -> list[list[tuple[int, int, bytes, bytes]]]:
    """W3's payments as the repartition topic holds them: keyed by item (one of :data:`ITEMS`),
    event times 100 per millisecond (a million span 10 s)."""
    out: list[list[tuple[int, int, bytes, bytes]]] = [[] for _ in range(partitions)]
    start = 1_700_000_000_000 - 1_700_000_000_000 % WINDOW_MS - 5_000  # 5 s before a minute
    for i in range(count):
        item = f"sku-{(i * 7919) % ITEMS:05d}"
        ts = start + i // 100
        value = orjson.dumps({"user": f"user-{i % 10_000}", "amount": i % 1000, "item": item, "region": "eu"})
        part = out[zlib.crc32(item.encode()) % partitions]
        part.append((len(part), ts, item.encode(), value))
    return out


def _items(partitions: int, timestamp: int) -> list[list[RawRecord]]:
    """W3's items table per partition, a minute older than the payments (read first)."""
    out: list[list[RawRecord]] = [[] for _ in range(partitions)]
    for n in range(ITEMS):
        sku = f"sku-{n:05d}".encode()
        partition = zlib.crc32(sku) % partitions
        value = orjson.dumps({"sku": sku.decode(), "category": f"cat-{n % CATEGORIES}"})
        out[partition].append(
            RawRecord(ITEMS_TOPIC, partition, len(out[partition]), timestamp, sku, value, None)
        )
    return out


class CountingCollector:
    """Takes what sinks and changelogs send, and only counts it."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, topic: str, key: Any, value: Any, headers: tuple, timestamp: int, partition: Any) -> None:
        self.sent += 1


def records(count: int, keys: int, partitions: int) -> list[list[tuple[int, int, bytes, bytes]]]:
    """Per partition: (offset, timestamp, key, value) of the harness's input."""
    out: list[list[tuple[int, int, bytes, bytes]]] = [[] for _ in range(partitions)]
    for i in range(count):
        user = f"user-{i % keys}"
        value = orjson.dumps(
            {
                "user": user,
                "amount": i % 1000,
                "ts": 1_700_000_000_000 + i,
                "item": f"item-{i % 97}",
                "region": "eu",
            }
        )
        part = out[zlib.crc32(user.encode()) % partitions]
        part.append((len(part), 1_700_000_000_000 + i, user.encode(), value))
    return out


def topology(workload: str) -> Any:
    builder = StreamsBuilder()
    if workload == "W1":
        (
            builder.stream(TOPIC, consumed=Consumed(key_serde=Serdes.Bytes(), value_serde=Serdes.Json()))
            .filter(lambda key, value: w1_keep(value))
            .map_values(w1_transform)
            .to(OUTPUT, produced=Produced(key_serde=Serdes.Bytes(), value_serde=Serdes.Json()))
        )
    elif workload == "W3":
        json_values = Consumed(key_serde=Serdes.String(), value_serde=Serdes.Json())
        table = builder.table(ITEMS_TOPIC, consumed=json_values)
        (
            builder.stream(TOPIC, consumed=json_values)
            .join(table, join_item, Joined.with_(Serdes.String(), Serdes.Json(), Serdes.Json()))
            .group_by_key(Grouped.with_(Serdes.String(), Serdes.Json()))
            .windowed_by(TimeWindows.of_size_and_grace(WINDOW_MS, GRACE_MS))
            .aggregate(
                lambda: 0,
                lambda item, sale, total: total + sale["amount"],
                Materialized(store_name="sales", key_serde=Serdes.String(), value_serde=Serdes.Long()),
            )
            .to_stream()
            .map(lambda window, total: (f"{window.key}@{window.window.start}", {"total": total}))
            .to(OUTPUT, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
        )
    else:
        (
            builder.stream(TOPIC, consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.Json()))
            .group_by_key()
            .count(materialized=Materialized.as_("counts").with_caching_disabled())
            .to_stream()
            .map_values(lambda key, count: w2_output(key, count))
            .to(OUTPUT, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
        )
    return builder.build({"application_id": APP})


def run_runtime(workload: str, data: list[list[Any]], commit_every: int, root: str) -> tuple[float, int]:
    """(CPU us per record, records sent) through one StreamTask per partition."""
    built = topology(workload).internal_builder
    nodes = [name for names in built.node_groups().values() for name in names]
    cache_bytes = W3_CACHE_BYTES if workload == "W3" else 0
    config = as_config({"application_id": APP, "state_dir": root, "statestore_cache_max_bytes": cache_bytes})
    cache = ThreadCache(cache_bytes) if cache_bytes else None
    collector = CountingCollector()
    tasks = []
    for partition in range(len(data)):
        task_id = TaskId(0, partition)
        task = StreamTask(
            task_id,
            build_processor_topology(built, nodes),
            {name: entry.builder for name, entry in built.stores.items()},
            config,
            collector,
            StreamsMetrics(),
            cache,
            lambda: 0,
            Path(root) / str(task_id),
        )
        task.initialize()
        tasks.append(task)
    total = sum(len(part) for part in data)
    done = 0
    batch = 2000
    # the consumer's messages, built before the clock starts (the client builds them in C)
    messages = [
        [RawRecord(TOPIC, p, offset, timestamp, key, value, None) for offset, timestamp, key, value in part]
        for p, part in enumerate(data)
    ]
    if workload == "W3":  # the table first, outside the measured span (Kafka Streams reads it first too)
        first = min(part[0][1] for part in data if part)
        for task, part in zip(tasks, _items(len(data), first - WINDOW_MS), strict=True):
            task.partition_group.queue_for(ITEMS_TOPIC, task.id.partition).add_batch(part)
            task.process_all()
            task.commit()  # the peer benchmark commits every 5 s: the table is flushed before the payments
    cpu0 = _cpu()
    for start in range(0, max(len(part) for part in data), batch):
        for task, part in zip(tasks, messages, strict=True):
            # what the stream thread does with a poll batch: one list per partition to its
            # queue, then the task processes everything buffered
            task.partition_group.queue_for(TOPIC, task.id.partition).add_batch(part[start : start + batch])
            done += task.process_all()
        if done // commit_every != (done - batch * len(tasks)) // commit_every:
            for task in tasks:
                task.commit()
    for task in tasks:
        task.commit()
    cpu = _cpu() - cpu0
    for task in tasks:
        task.close()
    return cpu / total * 1e6, collector.sent


def run_hand_loop(workload: str, data: list[list[Any]], commit_every: int) -> tuple[float, int]:
    """(CPU us per record, records sent) of the same work written by hand."""
    collector = CountingCollector()
    send: Callable[..., None] = collector.send
    loads, dumps = orjson.loads, orjson.dumps
    counts: dict[bytes, int] = {}
    total = sum(len(part) for part in data)
    cpu0 = _cpu()
    for partition, part in enumerate(data):
        for _, timestamp, key, value in part:
            v = loads(value)
            if workload == "W1":
                if w1_keep(v):
                    send(OUTPUT, key, dumps(w1_transform(v)), (), timestamp, None)
            else:
                c = counts.get(key, 0) + 1
                counts[key] = c
                send(OUTPUT, key, dumps(w2_output(v["user"], c)), (), timestamp, None)
                send("changelog", key, c.to_bytes(8, "big"), (), timestamp, partition)
    return (_cpu() - cpu0) / total * 1e6, collector.sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--partitions", default="8,64")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--commit-every", type=int, default=50_000)
    args = parser.parse_args()
    print("workload partitions  hand_us/rec  runtime_us/rec  runtime/hand  (median of rounds)")
    for workload in ("W1", "W2"):
        for partitions in (int(p) for p in args.partitions.split(",")):
            data = records(args.records, args.keys, partitions)
            hand, runtime = [], []
            for _ in range(args.rounds):
                hand.append(run_hand_loop(workload, data, args.commit_every)[0])
                with tempfile.TemporaryDirectory() as root:
                    runtime.append(run_runtime(workload, data, args.commit_every, root)[0])
            h, r = sorted(hand)[len(hand) // 2], sorted(runtime)[len(runtime) // 2]
            print(f"{workload:>8} {partitions:>10} {h:>12.2f} {r:>15.2f} {r / h:>12.2f}x")


if __name__ == "__main__":
    main()
