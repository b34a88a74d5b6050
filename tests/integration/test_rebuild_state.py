"""KafkaStreams.rebuild_state against the embedded broker (worker side).

One instance, 2 threads, a per-key count on RocksDB with a changelog, 2 partitions; key ``k<i>``
goes to partition ``i % 2``. The local store is then made to drift from its changelog (a key
written into the inner RocksDB store behind the changelog's back, and one deleted from it), and
the rebuild must bring it back: every owning task closed, wiped, restored from the changelog
(read to its true end), key counts equal, processing resumed from the restored counts.
"""

from __future__ import annotations

import struct

import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_runtime.errors import StreamsError
from streams_runtime.processor.internals.state_rebuild import TasksNotOwnedError, UnknownStoreError
from streams_runtime.processor.task_id import TaskId
from tests.integration.streams_support import (
    count_to_end,
    latest_until,
    make_topics,
    produce_to,
    streams_config,
    wait_running,
)

PARTITIONS = 2
KEYS = 30
ROUNDS = 3


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


def decode(msg):
    return msg.key().decode(), struct.unpack(">q", msg.value())[0]


def on_thread(client: KafkaStreams, fn):
    """Run ``fn(task_manager)`` on the thread owning the tasks (the test's way to corrupt a store)."""
    results = []
    for thread in client._threads:  # noqa: SLF001 - the test reaches into the runtime on purpose
        if thread.active_tasks:
            results.append(thread.submit(lambda t=thread: fn(t.task_manager)).result(10))
    return results


def test_rebuild_restores_every_owning_task_from_its_changelog_and_resumes(
    bootstrap_servers, unique_name, tmp_path
) -> None:
    app_id, source, output = unique_name("rb-app"), unique_name("rb-in"), unique_name("rb-out")
    make_topics(bootstrap_servers, **{source: PARTITIONS, output: PARTITIONS})
    records = [(f"k{i}".encode(), b"x", i % PARTITIONS) for _ in range(ROUNDS) for i in range(KEYS)]
    produce_to(bootstrap_servers, source, records)
    config = streams_config(bootstrap_servers, app_id, tmp_path / "state", num_stream_threads=2)
    with KafkaStreams(topology(source, output, app_id), config) as client:
        client.start()
        wait_running(client)
        expected = {f"k{i}": ROUNDS for i in range(KEYS)}
        got = latest_until(bootstrap_servers, output, PARTITIONS, decode, lambda d: d == expected)
        assert got == expected

        # drift: a key the changelog never saw, and a key lost locally
        def corrupt(manager):
            for task_id, task in manager.tasks.items():
                inner = task.stores["counts"].inner()
                inner.put(f"bogus-{task_id}".encode(), struct.pack(">q", 99))
                inner.put(f"k{task_id.partition}".encode(), None)
            return len(manager.tasks)

        assert sum(on_thread(client, corrupt)) == PARTITIONS

        reports = client.rebuild_state("counts", timeout=60)
        assert [r["task_id"] for r in reports] == ["0_0", "0_1"]
        changelog = f"{app_id}-counts-changelog"
        for r in reports:
            assert r["ok"], r
            assert r["store"] == "counts" and r["changelog_topic"] == changelog
            assert r["changelog_partition"] == int(r["task_id"][-1])
            assert r["store_key_count"] == r["changelog_live_keys"] == KEYS // PARTITIONS
            assert r["records_restored"] == r["changelog_records"] > 0
            assert r["changelog_end_offset"] >= r["restored_to_offset"] + 1
            assert 0 < r["restore_seconds"] < 60
            assert r["input_offsets"] == {f"{source}:{r['changelog_partition']}": KEYS // PARTITIONS * ROUNDS}
        assert sum(r["records_restored"] for r in reports) == count_to_end(
            bootstrap_servers, changelog, PARTITIONS
        )

        # the drift is gone, and processing resumes from the restored counts
        keys = on_thread(
            client,
            lambda m: {k.decode() for t in m.tasks.values() for k, _ in t.stores["counts"].inner().all()},
        )
        assert set().union(*keys) == set(expected)
        produce_to(bootstrap_servers, source, [(b"k0", b"x", 0), (b"k1", b"x", 1)])
        again = {**expected, "k0": ROUNDS + 1, "k1": ROUNDS + 1}
        got = latest_until(bootstrap_servers, output, PARTITIONS, decode, lambda d: d == again)
        assert got == again

        # one task only, by id; unknown store and foreign tasks are refused with their names
        [only] = client.rebuild_state("counts", tasks=["0_1"], timeout=60)
        assert only["task_id"] == "0_1" and only["ok"] and only["store_key_count"] == KEYS // PARTITIONS
        with pytest.raises(UnknownStoreError, match="no store named 'nope'.*'counts'"):
            client.rebuild_state("nope")
        with pytest.raises(TasksNotOwnedError, match=r"\['0_7'\]"):
            client.rebuild_state("counts", tasks=[TaskId(0, 7)])
    with pytest.raises(StreamsError, match="needs a running client"):
        client.rebuild_state("counts")


def test_rebuild_under_exactly_once_counts_past_the_transaction_markers(
    bootstrap_servers, unique_name, tmp_path
):
    """Under exactly_once_v2 the changelog holds commit markers (an offset each, no record): the
    store reflects the last record, the true end is past the marker, and the counts still match."""
    app_id, source, output = unique_name("rbe-app"), unique_name("rbe-in"), unique_name("rbe-out")
    make_topics(bootstrap_servers, **{source: 2, output: 2})
    produce_to(bootstrap_servers, source, [(f"k{i}".encode(), b"x", i % 2) for i in range(20)])
    config = streams_config(bootstrap_servers, app_id, tmp_path / "s", processing_guarantee="exactly_once_v2")
    with KafkaStreams(topology(source, output, app_id), config) as client:
        client.start()
        wait_running(client)
        done = {f"k{i}": 1 for i in range(20)}
        assert latest_until(bootstrap_servers, output, 2, decode, lambda d: d == done) == done
        reports = client.rebuild_state("counts", timeout=60)
        assert [(r["ok"], r["store_key_count"], r["changelog_live_keys"]) for r in reports] == [
            (True, 10, 10)
        ] * 2
        assert all(r["changelog_end_offset"] > r["restored_to_offset"] + 1 for r in reports)  # the markers
        produce_to(bootstrap_servers, source, [(b"k0", b"x", 0)])
        again = {**done, "k0": 2}
        assert latest_until(bootstrap_servers, output, 2, decode, lambda d: d == again) == again
