"""Restoration does not stop the world: while one task of a thread restores a large
changelog, another task of the same thread keeps processing and producing output.

One in-process KafkaStreams client, one thread, a per-key count over two partitions. The count
store's changelog is created beforehand and partition 0 is filled with 800k records, so task 0_0
restores them all at start while task 0_1 (empty changelog) starts running at once. A steady
trickle of input goes to partition 1 only. Asserted: 0_1's outputs arrive while 0_0 restores, at
three moments at least (a restore that stopped the world would hold them all to its end), and from
the first on with no gap over a second and a half until the restore ends;
``TaskManager.restore_progress()`` reports 0_0 partially restored against the right total while
0_1 produces; 0_0 counts correctly afterwards.

The wait for 0_1's first output is not one of the gaps: it is 0_1's start (its consumer's first
offset lookups and fetch, the output producer's first send, the watcher's fetch: 0.3-0.9 s here,
1.5 s in a loaded CI run whose restore took 2.9 s), the same with or without a task restoring
beside it; the gaps after it are the interleaving of restore steps and processing this test is
about.
"""

from __future__ import annotations

import struct
import threading
import time

import pytest

from streams_runtime import (
    Consumed,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    StateRestoreListener,
    StreamsBuilder,
)
from tests.integration.ha_support import LiveProducer, OutputWatcher, max_gap, produce_keys, wait_for
from tests.integration.streams_support import make_topics, produce_to, streams_config

pytestmark = pytest.mark.kafka

RECORDS = 800_000


class Timeline(StateRestoreListener):
    def __init__(self) -> None:
        self.started: dict[tuple[str, int], float] = {}
        self.ended: dict[tuple[str, int], float] = {}
        self.totals: dict[tuple[str, int], int] = {}

    def on_restore_start(self, tp, store_name, start_offset, end_offset):  # noqa: ANN001
        self.started[tuple(tp)] = time.monotonic()

    def on_batch_restored(self, tp, store_name, batch_end_offset, num_restored):  # noqa: ANN001
        pass

    def on_restore_end(self, tp, store_name, total_restored):  # noqa: ANN001
        self.ended[tuple(tp)] = time.monotonic()
        self.totals[tuple(tp)] = total_restored


def test_should_keep_processing_ready_tasks_while_another_task_restores(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("rw-in"), unique_name("rw-out"), unique_name("rw")
    changelog = f"{app}-counts-changelog"
    make_topics(bootstrap_servers, **{source: 2, sink: 2, changelog: 2})
    one = struct.pack(">q", 1)
    produce_keys(bootstrap_servers, changelog, RECORDS, prefix="r", value=one, partition=0)

    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(sink, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    config = streams_config(bootstrap_servers, app, tmp_path)
    streams = KafkaStreams(builder.build(config), config)
    timeline = Timeline()
    streams.set_global_state_restore_listener(timeline)
    watcher = OutputWatcher(bootstrap_servers, sink, 2)
    live = LiveProducer(bootstrap_servers, source, 2)
    samples: list[dict] = []
    stop_sampling = threading.Event()

    def sample() -> None:  # restore_progress, read as a metrics reporter would (under the query lock)
        while not stop_sampling.wait(0.1):
            for thread in list(streams._threads):  # noqa: SLF001 (test reads the thread's TaskManager)
                manager = thread.task_manager
                if manager is not None:
                    with thread.query_lock:
                        samples.append({str(t): p for t, p in manager.restore_progress().items()})

    sampler = threading.Thread(target=sample, daemon=True)
    tp0 = (changelog, 0)
    try:
        streams.start()
        sampler.start()
        wait_for(lambda: tp0 in timeline.ended, 60, lambda: f"0_0 restored (started: {timeline.started})")
        produce_to(bootstrap_servers, source, [(b"r0000007", b"x", 0)])  # a restored key counts on
        wait_for(
            lambda: watcher.latest().get("r0000007") == 2,
            30,
            "the restored key counted on, live input flowing",
        )
        live.stop()
        produced = dict(live.produced)
        wait_for(
            lambda: all(watcher.latest().get(k, 0) >= n for k, n in produced.items())
            and watcher.latest().get("r0000007") == 2,
            30,
            lambda: f"every input counted: {produced}, r0000007={watcher.latest().get('r0000007')}",
        )
    finally:
        live.stop()
        stop_sampling.set()
        streams.close(timeout=30)
        watcher.close()

    start, end = timeline.started[tp0], timeline.ended[tp0]
    during = watcher.arrivals(1, start, end)
    first = min(during, default=end)
    gap = max_gap(during, first, end)
    arrivals = [round(t - start, 2) for t in sorted(during)]
    partial = [s["0_0"] for s in samples if s.get("0_0") and s["0_0"][1] and 0 < s["0_0"][0] < s["0_0"][1]]
    print(
        f"\n0_0 restored {timeline.totals[tp0]} records in {end - start:.2f}s; "
        f"meanwhile {len(during)} outputs of 0_1, the first after {first - start:.2f}s, then longest "
        f"gap {gap:.2f}s; progress samples mid-restore: {partial[:3]}..."
    )
    assert timeline.totals[tp0] == RECORDS
    moments = sorted({round(t - start, 1) for t in during})
    assert len(moments) >= 3, f"0_1 hardly produced during 0_0's restore: arrivals at {arrivals}"
    assert len(during) >= 3 and gap < 1.5, f"0_1 stalled during 0_0's restore: arrivals at {arrivals}"
    assert partial and all(total == RECORDS for _, total in partial), f"restore progress: {samples[:20]}"
