"""State rebuild: how long ``KafkaStreams.rebuild_state`` takes for a store of N keys, next to a baseline.

One run, one broker (the embedded Tansu unless ``--bootstrap-servers``). A per-key count on RocksDB
(``--partitions`` tasks, one stream thread) processes ``--records`` records with distinct keys, so
its changelog holds N records and the store N keys. Then:

1. ``rebuild``: ``rebuild_state("counts")``: close, wipe, restore every task from its changelog,
   snapshot, and read each changelog partition to its true end to verify the key count;
2. ``baseline``: that verification read alone (``count_changelog_live_keys`` per partition): the
   cheapest way to look at every changelog record once.

Each line: records, wall seconds, records/s; then the ratio rebuild / baseline (how much the
close + wipe + restore into RocksDB cost on top of reading the log once).

Run:  .venv/bin/python bench/state_rebuild.py [--records 200000] [--partitions 2]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from streams_runtime import (  # noqa: E402
    Consumed,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from streams_runtime.brokers import bootstrap_or_embedded  # noqa: E402
from streams_runtime.kafka.clients import (  # noqa: E402
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
)
from streams_runtime.processor.internals.state_rebuild import count_changelog_live_keys  # noqa: E402


def topology(source: str, output: str, app_id: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(output, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build({"application_id": app_id})


def wait_processed(bootstrap: str, app_id: str, source: str, partitions: int, per_partition: int) -> None:
    consumer = create_consumer(bootstrap, app_id)
    try:
        while True:
            committed = consumer.committed([TopicPartition(source, p) for p in range(partitions)], timeout=10)
            if all(tp.offset >= per_partition for tp in committed):
                return
            time.sleep(0.2)
    finally:
        consumer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--bootstrap-servers")
    args = parser.parse_args()
    n, parts = args.records, args.partitions
    with contextlib.ExitStack() as stack:
        bootstrap = stack.enter_context(bootstrap_or_embedded(args.bootstrap_servers))
        run = uuid.uuid4().hex[:8]
        source, output, app_id = f"bench-rb-in-{run}", f"bench-rb-out-{run}", f"bench-rb-{run}"
        create_topics(create_admin(bootstrap), [TopicSpec(source, parts), TopicSpec(output, parts)])
        producer = create_producer(bootstrap)
        for i in range(n):
            producer.produce(source, b"x", f"key-{i:09d}".encode(), partition=i % parts)
            if i % 10_000 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
        state_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-rebuild-"))
        config = {
            "application_id": app_id,
            "bootstrap_servers": bootstrap,
            "state_dir": state_dir,
            "commit_interval_ms": 500,
            "consumer.session.timeout.ms": 3000,
            "consumer.heartbeat.interval.ms": 300,
        }
        client = stack.enter_context(KafkaStreams(topology(source, output, app_id), config))
        started = time.perf_counter()
        client.start()
        wait_processed(bootstrap, app_id, source, parts, n // parts)
        print(f"processed {n:,} records into {n:,} keys in {time.perf_counter() - started:.1f}s")

        started = time.perf_counter()
        reports = client.rebuild_state("counts", timeout=600)
        rebuild_s = time.perf_counter() - started
        restored = sum(r["records_restored"] for r in reports)
        assert all(r["ok"] for r in reports), reports
        assert sum(r["store_key_count"] for r in reports) == n, reports

        changelog = f"{app_id}-counts-changelog"
        started = time.perf_counter()
        counted = [count_changelog_live_keys(bootstrap, changelog, p, None, 600) for p in range(parts)]
        baseline_s = time.perf_counter() - started
        read = sum(c.records_after for c in counted)  # upto=None: every record counts as "after"

        print(
            f"rebuild  : {restored:>10,} records restored + verified in {rebuild_s:6.2f}s = "
            f"{restored / rebuild_s:>10,.0f} rec/s ({len(reports)} tasks, "
            f"restore alone {max(r['restore_seconds'] for r in reports):.2f}s)"
        )
        print(
            f"baseline : {read:>10,} records read to EOF      in {baseline_s:6.2f}s = "
            f"{read / baseline_s:>10,.0f} rec/s"
        )
        print(f"ratio    : rebuild takes {rebuild_s / baseline_s:.2f}x the verification read alone")


if __name__ == "__main__":
    main()
