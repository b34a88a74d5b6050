"""Restore throughput: a changelog of N keys restored into RocksDB, next to a hand-written loop.

One run, one broker (the embedded Tansu unless ``--bootstrap-servers``), one changelog topic of
``--records`` distinct keys with 80-100 byte values (target >= 300k records/s
for 1M keys). Two restores of the same topic, each into a fresh RocksDB directory:

1. ``hand loop``: a plain confluent-kafka consume loop (manual assign from the beginning,
   ``enable.partition.eof`` to find the end, the same client settings as the restore consumer)
   writing each consumed batch into rocksdict with one ``WriteBatch``;
2. ``streams_runtime``: a StreamTask with a logged RocksDB store, its ProcessorStateManager and a
   StoreChangelogReader stepped until the task reports restored (probe, restore, checkpoint).

Each line: records restored, wall seconds, records/s, CPU seconds of this process; then the
ratio. ``--profile`` prints the top of a cProfile of the framework restore.

Run:  .venv/bin/python bench/restore_throughput.py [--records 1000000]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from rocksdict import Options, Rdict, WriteBatch  # noqa: E402

from streams_runtime import Serdes, Stores, Topology  # noqa: E402
from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from streams_runtime.config import as_config  # noqa: E402
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_topics  # noqa: E402
from streams_runtime.kafka.offsets import is_partition_eof  # noqa: E402
from streams_runtime.kafka.profile import client_config  # noqa: E402
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader  # noqa: E402
from streams_runtime.processor.internals.metrics import StreamsMetrics  # noqa: E402
from streams_runtime.processor.internals.nodes import build_processor_topology  # noqa: E402
from streams_runtime.processor.internals.state_directory import StateDirectory  # noqa: E402
from streams_runtime.processor.internals.state_manager import ProcessorStateManager  # noqa: E402
from streams_runtime.processor.internals.task import StreamTask  # noqa: E402
from streams_runtime.processor.task_id import TaskId  # noqa: E402

STORE = "store"
TARGET = 300_000
#: The restore consumer's settings (streams_runtime.kafka.clients.create_restore_consumer).
RESTORE_CONSUMER = {
    "group.id": "bench-restore",
    "enable.partition.eof": True,
    "enable.auto.offset.store": False,
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_changelog(bootstrap: str, topic: str, n: int) -> None:
    """``n`` distinct keys (``key-<i>``), values of 80-100 random printable bytes."""
    rng = random.Random(42)
    pool = bytes(rng.randrange(33, 127) for _ in range(4096))
    producer = Producer(
        client_config(
            "producer",
            bootstrap,
            {"linger.ms": 20, "batch.size": 1_000_000, "queue.buffering.max.messages": 2_000_000},
        )
    )
    for i in range(n):
        start = rng.randrange(3900)
        value = pool[start : start + 80 + i % 21]
        while True:
            try:
                producer.produce(topic, key=b"key-%d" % i, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("producer did not deliver every record")


def hand_loop(bootstrap: str, topic: str, db_dir: str, batch: int) -> int:
    """The baseline: consume from the beginning to EOF, one WriteBatch per consumed batch."""
    consumer = Consumer(client_config("low_latency_consumer", bootstrap, RESTORE_CONSUMER))
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    db = Rdict(db_dir, options)
    consumer.assign([TopicPartition(topic, 0, 0)])  # explicit: OFFSET_BEGINNING resolves late
    restored = 0
    try:
        while True:
            messages = consumer.consume(batch, 0.05)
            write = WriteBatch(raw_mode=True)
            eof = False
            for m in messages:
                if m.error() is not None:
                    if is_partition_eof(m.error()):
                        eof = True
                        continue
                    raise RuntimeError(m.error())
                value = m.value()
                if value is None:
                    write.delete(m.key())
                else:
                    write.put(m.key(), value)
                restored += 1
            db.write(write)
            if eof:
                return restored
    finally:
        consumer.close()
        db.close()


class _NoOp:
    def init(self, context: object) -> None:
        pass

    def process(self, record: object) -> None:
        pass

    def close(self) -> None:
        pass


def framework_restore(bootstrap: str, app: str, state_dir: str, batch: int, profile: bool) -> int:
    """A task with a logged RocksDB store, restored by a StoreChangelogReader."""
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.Bytes(), value_serde=Serdes.Bytes())
    topology.add_processor("p", _NoOp, "src")
    topology.add_state_store(
        Stores.key_value_store_builder(
            Stores.persistent_key_value_store(STORE), Serdes.Bytes(), Serdes.Bytes()
        ),
        "p",
    )
    builder = topology.internal_builder
    nodes = [name for names in builder.node_groups().values() for name in names]
    task_id = TaskId(0, 0)
    state = StateDirectory(state_dir, app)
    state.lock(task_id)
    task = StreamTask(
        task_id,
        build_processor_topology(builder, nodes),
        {name: entry.builder for name, entry in builder.stores.items()},
        as_config({"application_id": app, "state_dir": state_dir}),
        None,
        StreamsMetrics(),
        None,
        lambda: 0,
        state.task_dir(task_id),
    )
    manager = ProcessorStateManager(task_id, state)
    task.context.set_state_manager(manager)
    task.initialize()
    reader = StoreChangelogReader(bootstrap, max_batch_records=batch)
    profiler = cProfile.Profile() if profile else None
    try:
        reader.register(manager)
        if profiler:
            profiler.enable()
        while not reader.restore(0.05):
            pass
        if profiler:
            profiler.disable()
        return reader.restored_count(task_id)
    finally:
        reader.close()
        task.close()
        state.close()
        if profiler:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def measure(name: str, run) -> tuple[int, float]:  # noqa: ANN001
    cpu, wall = cpu_seconds(), time.perf_counter()
    restored = run()
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    rate = restored / wall
    print(
        f"{name:<16} {restored:>9,} records  {wall:6.2f} s  {rate:>10,.0f} records/s  cpu {cpu:6.2f} s",
        flush=True,
    )
    return restored, rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="changelog keys (default 1,000,000)")
    parser.add_argument("--batch", type=int, default=10_000, help="records per consume (both loops)")
    parser.add_argument("--bootstrap-servers", default=os.environ.get("BOOTSTRAP_SERVERS"))
    parser.add_argument("--profile", action="store_true", help="cProfile the framework restore")
    args = parser.parse_args(argv)
    app = f"bench-restore-{uuid.uuid4().hex[:8]}"
    topic = f"{app}-{STORE}-changelog"
    with bootstrap_or_embedded(args.bootstrap_servers) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        create_topics(create_admin(bootstrap), [TopicSpec(topic, 1)])
        started = time.perf_counter()
        write_changelog(bootstrap, topic, args.records)
        print(
            f"changelog {topic}: {args.records:,} keys, 80-100 byte values, written in "
            f"{time.perf_counter() - started:.1f} s (broker {bootstrap}, {os.cpu_count()} cpus)",
            flush=True,
        )
        base_count, base_rate = measure(
            "hand loop", lambda: hand_loop(bootstrap, topic, f"{tmp}/hand", args.batch)
        )
        ours_count, ours_rate = measure(
            "streams_runtime",
            lambda: framework_restore(bootstrap, app, f"{tmp}/state", args.batch, args.profile),
        )
        verdict = "met" if ours_rate >= TARGET else "MISSED"
        print(f"ratio {ours_rate / base_rate:.2f}x the hand loop; target {TARGET:,} records/s: {verdict}")
        if base_count != args.records or ours_count != args.records:
            print(f"ERROR: restored {base_count} / {ours_count} of {args.records} records", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
