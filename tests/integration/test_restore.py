"""Restore from changelog topics on the embedded broker: ProcessorStateManager + StoreChangelogReader.

Each test writes changelog topics in the key-value store format (String keys and values,
tombstones included) with a plain producer, then restores a real task's stores (RocksDB and in
memory) through its state manager and a StoreChangelogReader, and checks exact contents and the
restored record counts.
"""

from __future__ import annotations

import gc
import logging
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streams_runtime import StateRestoreListener, ValueAndTimestamp
from streams_runtime.brokers import local_broker
from streams_runtime.kafka import clients
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import changelog, contents, make_task, state_topology

T0, T1 = TaskId(0, 0), TaskId(0, 1)


class RecordingListener(StateRestoreListener):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_restore_start(self, tp, store_name, start_offset, end_offset):  # noqa: ANN001
        self.events.append(("start", tp, store_name, start_offset, end_offset))

    def on_batch_restored(self, tp, store_name, batch_end_offset, num_restored):  # noqa: ANN001
        self.events.append(("batch", tp, store_name, batch_end_offset, num_restored))

    def on_restore_end(self, tp, store_name, total_restored):  # noqa: ANN001
        self.events.append(("end", tp, store_name, total_restored))

    def of(self, kind: str, store: str) -> list[tuple]:
        return [e for e in self.events if e[0] == kind and e[2] == store]


def write_changelog(
    bootstrap: str,
    topic: str,
    partition: int,
    count: int,
    *,
    keys: int = 300,
    seed: int = 0,
    expected: dict[str, str] | None = None,
    timestamps: bool = False,
) -> dict[str, object]:
    """Produce ``count`` store updates (about 1 in 6 a tombstone); return the expected contents."""
    rng = random.Random(seed)
    expected = {} if expected is None else expected
    producer = clients.create_producer(bootstrap)
    for i in range(count):
        key = f"k{rng.randrange(keys)}"
        value = None if rng.random() < 1 / 6 else f"v{seed}-{i}"
        ts = 1_000 + i
        producer.produce(
            topic,
            key=key.encode(),
            value=None if value is None else value.encode(),
            partition=partition,
            timestamp=ts,
        )
        if value is None:
            expected.pop(key, None)
        else:
            expected[key] = ValueAndTimestamp(value, ts) if timestamps else value
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    return expected


def create_changelogs(bootstrap: str, app: str, stores: tuple[str, ...], partitions: int = 1) -> None:
    admin = clients.create_admin(bootstrap)
    clients.create_topics(admin, [clients.TopicSpec(changelog(app, s), partitions) for s in stores])


def restore_all(reader: StoreChangelogReader, tasks: set[TaskId], steps: int = 2000) -> int:
    """Step the reader until every task finished; return the number of steps taken."""
    done: set[TaskId] = set()
    for step in range(1, steps + 1):
        done |= reader.restore(0.05)
        if done >= tasks:
            return step
    raise AssertionError(f"restore did not finish: {tasks - done} still restoring")


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Callable[[str], StateDirectory]]:
    opened: list[StateDirectory] = []

    def open_state(app: str) -> StateDirectory:
        sd = StateDirectory(tmp_path / "state", app)
        opened.append(sd)
        return sd

    yield open_state
    for sd in opened:
        sd.close()


def restart(
    sd: StateDirectory,
    app: str,
    bootstrap: str,
    stores: tuple[str, ...],
    task_id: TaskId = T0,
    listener: StateRestoreListener | None = None,
    **kw: object,
):  # noqa: ANN201
    """Open the task (lock, stores, state manager), restore it fully; return (task, manager, reader)."""
    assert sd.lock(task_id)
    task, manager = make_task(sd, app, task_id, topology=state_topology(stores, **kw))
    reader = StoreChangelogReader(bootstrap, restore_listener=listener, max_batch_records=500)
    reader.register(manager)
    restore_all(reader, {task_id})
    return task, manager, reader


def close(task, manager, reader, sd: StateDirectory, task_id: TaskId = T0) -> None:  # noqa: ANN001
    reader.close()
    task.close()
    manager.close()
    sd.unlock(task_id)


def test_should_restore_rocksdb_and_in_memory_stores_exactly_with_listener_progress(
    bootstrap_servers: str, unique_name: Callable[[str], str], state: Callable[[str], StateDirectory]
) -> None:
    app = unique_name("restore")
    create_changelogs(bootstrap_servers, app, ("rocks", "mem"), partitions=2)
    expected = {
        s: write_changelog(bootstrap_servers, changelog(app, s), 0, 2_000, seed=i)
        for i, s in enumerate(("rocks", "mem"))
    }
    other = write_changelog(bootstrap_servers, changelog(app, "rocks"), 1, 700, seed=9)
    sd = state(app)
    listener = RecordingListener()
    assert sd.lock(T0) and sd.lock(T1)
    task0, manager0 = make_task(sd, app, T0)
    task1, manager1 = make_task(sd, app, T1)
    reader = StoreChangelogReader(bootstrap_servers, restore_listener=listener, max_batch_records=500)
    reader.register(manager0)
    reader.register(manager1)
    restore_all(reader, {T0, T1})

    assert contents(task0.stores["rocks"]) == expected["rocks"]
    assert contents(task0.stores["mem"]) == expected["mem"]
    assert contents(task1.stores["rocks"]) == other and contents(task1.stores["mem"]) == {}
    assert reader.restored_count(T0) == 4_000 and reader.restored_count(T1) == 700
    assert sd.read_checkpoint(T0) == {(changelog(app, "rocks"), 0): 1_999}  # persistent stores only
    assert sd.task_offset_sums() == {T0: 1_999, T1: 699}
    tp = (changelog(app, "rocks"), 0)
    assert [e for e in listener.events if e[1] == tp and e[0] != "batch"] == [
        ("start", tp, "rocks", 0, 2_000),
        ("end", tp, "rocks", 2_000),
    ]
    batches = [e for e in listener.of("batch", "rocks") if e[1] == tp]
    assert sum(e[4] for e in batches) == 2_000 and len(batches) >= 4  # 500-record steps
    ends = [e[3] for e in batches]
    assert ends == sorted(ends) and ends[-1] == 1_999
    assert listener.of("start", "mem") == [("start", (changelog(app, "mem"), 0), "mem", 0, 2_000)]
    assert not reader.is_restoring(T0)
    close(task1, manager1, reader, sd, T1)
    close(task0, manager0, reader, sd, T0)


def test_should_restore_nothing_when_the_checkpoint_is_at_the_end_and_only_the_tail_after_it(
    bootstrap_servers: str, unique_name: Callable[[str], str], state: Callable[[str], StateDirectory]
) -> None:
    app = unique_name("restart")
    create_changelogs(bootstrap_servers, app, ("rocks",))
    topic = changelog(app, "rocks")
    expected = write_changelog(bootstrap_servers, topic, 0, 1_500)
    sd = state(app)
    first = restart(sd, app, bootstrap_servers, ("rocks",))
    assert first[2].restored_count(T0) == 1_500
    close(*first, sd)

    listener = RecordingListener()
    current = restart(sd, app, bootstrap_servers, ("rocks",), listener=listener)
    assert current[2].restored_count(T0) == 0 and listener.events == []
    assert contents(current[0].stores["rocks"]) == expected
    close(*current, sd)

    write_changelog(bootstrap_servers, topic, 0, 400, seed=1, expected=expected)
    tail = restart(sd, app, bootstrap_servers, ("rocks",), listener=listener)
    assert tail[2].restored_count(T0) == 400
    assert listener.of("start", "rocks") == [("start", (topic, 0), "rocks", 1_500, 1_900)]
    assert contents(tail[0].stores["rocks"]) == expected
    assert sd.read_checkpoint(T0) == {(topic, 0): 1_899}
    close(*tail, sd)


def test_should_restore_timestamped_stores_with_the_record_timestamps(
    bootstrap_servers: str, unique_name: Callable[[str], str], state: Callable[[str], StateDirectory]
) -> None:
    app = unique_name("timestamped")
    create_changelogs(bootstrap_servers, app, ("rocks", "mem"))
    expected = {
        s: write_changelog(bootstrap_servers, changelog(app, s), 0, 600, seed=i, timestamps=True)
        for i, s in enumerate(("rocks", "mem"))
    }
    sd = state(app)
    restored = restart(sd, app, bootstrap_servers, ("rocks", "mem"), timestamped=True)
    assert contents(restored[0].stores["rocks"]) == expected["rocks"]
    assert contents(restored[0].stores["mem"]) == expected["mem"]
    close(*restored, sd)


def test_should_wipe_local_state_ahead_of_a_fresh_broker_and_restore_from_scratch(
    broker_kind: str,
    bootstrap_servers: str,
    unique_name: Callable[[str], str],
    state: Callable[[str], StateDirectory],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = unique_name("fresh")
    create_changelogs(bootstrap_servers, app, ("rocks", "mem"))
    for i, s in enumerate(("rocks", "mem")):
        write_changelog(bootstrap_servers, changelog(app, s), 0, 1_000, seed=i)
    sd = state(app)
    close(*restart(sd, app, bootstrap_servers, ("rocks", "mem")), sd)
    assert sd.read_checkpoint(T0) == {(changelog(app, "rocks"), 0): 999}

    # a new cluster of the same kind: what a restarted Tansu is (it keeps nothing), or a cluster
    # rebuilt from scratch behind old local state
    where = (
        {"data_dir": tmp_path / "fresh"} if broker_kind == "kafka" else {"log_file": tmp_path / "fresh.log"}
    )
    with local_broker(broker_kind, **where) as fresh:
        create_changelogs(fresh.bootstrap_servers, app, ("rocks", "mem"))
        expected = {
            s: write_changelog(fresh.bootstrap_servers, changelog(app, s), 0, 120, keys=50, seed=7 + i)
            for i, s in enumerate(("rocks", "mem"))
        }
        listener = RecordingListener()
        with caplog.at_level(logging.WARNING, logger="streams_runtime.state"):
            task, manager, reader = restart(
                sd, app, fresh.bootstrap_servers, ("rocks", "mem"), listener=listener
            )
        try:
            # the state manager's warnings (a fresh cluster's clients may warn too, e.g. the
            # idempotent producer retrying while the coordinator loads)
            warnings = [
                r.getMessage()
                for r in caplog.records
                if r.levelno == logging.WARNING and r.name == "streams_runtime.state"
            ]
            assert len(warnings) == 1, warnings
            assert (
                "fresh broker?" in warnings[0]
                and f"{changelog(app, 'rocks')}-0 ends at offset 120" in warnings[0]
            )
            assert "local state of store rocks is at offset 999" in warnings[0] and "wiping" in warnings[0]
            assert contents(task.stores["rocks"]) == expected["rocks"]  # nothing of the old state left
            assert contents(task.stores["mem"]) == expected["mem"]
            assert reader.restored_count(T0) == 240
            assert listener.of("start", "rocks") == [("start", (changelog(app, "rocks"), 0), "rocks", 0, 120)]
            assert sd.read_checkpoint(T0) == {(changelog(app, "rocks"), 0): 119}
        finally:
            close(task, manager, reader, sd)
            gc.collect()  # drop this broker's producers before it stops (no disconnect noise)


def test_should_resume_an_interrupted_restore_from_the_offset_stored_with_the_data(
    bootstrap_servers: str, unique_name: Callable[[str], str], state: Callable[[str], StateDirectory]
) -> None:
    app = unique_name("interrupted")
    create_changelogs(bootstrap_servers, app, ("rocks",))
    expected = write_changelog(bootstrap_servers, changelog(app, "rocks"), 0, 3_000)
    sd = state(app)
    assert sd.lock(T0)
    task, manager = make_task(sd, app, T0, topology=state_topology(("rocks",)))
    reader = StoreChangelogReader(bootstrap_servers, max_batch_records=500)
    reader.register(manager)
    for _ in range(2000):
        assert not reader.restore(0.05)
        if reader.restored_count(T0):
            break
    partial = reader.restored_count(T0)
    assert 0 < partial < 3_000 and reader.is_restoring(T0)
    reader.unregister(T0)  # revoked mid-restore: no checkpoint file, the offset lives in RocksDB
    assert not reader.is_restoring(T0) and reader.restore(0.01) == set()
    close(task, manager, reader, sd)
    assert sd.read_checkpoint(T0) == {}

    resumed = restart(sd, app, bootstrap_servers, ("rocks",))
    assert resumed[2].restored_count(T0) == 3_000 - partial
    assert contents(resumed[0].stores["rocks"]) == expected
    close(*resumed, sd)
