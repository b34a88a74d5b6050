"""What a restarted instance restores, counted through a StateRestoreListener.

One KafkaStreams instance (2 threads) counts per key on RocksDB with a changelog, 4 partitions;
key ``k<i>`` is produced to partition ``i % 4``. A clean close commits and checkpoints every
task, so a restart with the same state directory restores nothing; records written to the
changelog after the checkpoint (here: by hand, as a crashed owner would have) are exactly what
the next restart restores; after ``clean_up()`` a restart restores the whole changelog.

Also the state-directory lock hand-over: a task whose directory is still locked by its previous
owner waits for the lock (retried every loop) instead of failing the thread.
"""

from __future__ import annotations

import struct
import threading
import time
from collections import Counter

from streams_runtime import (
    Consumed,
    KafkaStreams,
    KafkaStreamsState,
    Materialized,
    Produced,
    Serdes,
    StateRestoreListener,
    StreamsBuilder,
)
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
from tests.integration.streams_support import (
    count_to_end,
    latest_until,
    make_topics,
    produce_to,
    streams_config,
    wait_running,
    wait_until,
)

PARTITIONS = 4


class CountingListener(StateRestoreListener):
    """Restored records per changelog partition, from every stream thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.restored: Counter = Counter()
        self.ended: list[tuple] = []

    def on_restore_end(self, tp, store_name, total_restored):  # noqa: ANN001
        with self._lock:
            self.restored[tp] += total_restored
            self.ended.append((tp, store_name, total_restored))

    @property
    def total(self) -> int:
        return sum(self.restored.values())


def count_app(source: str, sink: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build()


def keyed(keys: list[str]) -> list[tuple[bytes, bytes, int]]:
    return [(k.encode(), b"x", int(k[1:]) % PARTITIONS) for k in keys]


def decode(msg) -> tuple[str, int]:  # noqa: ANN001
    return msg.key().decode(), struct.unpack(">q", msg.value())[0]


class Case:
    def __init__(self, bootstrap: str, unique_name, state_dir) -> None:  # noqa: ANN001
        self.bootstrap, self.state_dir = bootstrap, state_dir
        self.source, self.sink, self.app = unique_name("in"), unique_name("out"), unique_name("restart")
        self.changelog = f"{self.app}-counts-changelog"
        self.expected: Counter = Counter()
        make_topics(bootstrap, **{self.source: PARTITIONS, self.sink: PARTITIONS})

    def produce(self, keys: list[str]) -> None:
        produce_to(self.bootstrap, self.source, keyed(keys))
        self.expected.update(keys)

    def run(self, keys: list[str]) -> CountingListener:
        """Start an instance, produce ``keys``, wait for the exact counts, close cleanly."""
        listener = CountingListener()
        client = KafkaStreams(
            count_app(self.source, self.sink),
            streams_config(self.bootstrap, self.app, self.state_dir, num_stream_threads=2),
        )
        client.set_global_state_restore_listener(listener)
        try:
            client.start()
            wait_running(client, timeout=30)
            self.produce(keys)
            want = dict(self.expected)
            latest = latest_until(self.bootstrap, self.sink, PARTITIONS, decode, lambda got: got == want)
            assert latest == want
        finally:
            closed = client.close(timeout=30)
        assert closed and client.state is KafkaStreamsState.NOT_RUNNING and not client.errors
        return listener


def test_should_restore_nothing_after_a_clean_restart_the_tail_after_the_checkpoint_and_all_after_clean_up(
    bootstrap_servers, unique_name, tmp_path
):
    case = Case(bootstrap_servers, unique_name, tmp_path / "state")
    first = case.run([f"k{i % 40}" for i in range(800)])
    assert first.total == 0  # empty changelogs: nothing to restore

    # A clean restart with the same state directory: every task checkpointed at its changelog end.
    second = case.run([f"k{i % 40}" for i in range(200)])
    assert second.total == 0, second.ended

    # Three records after partition 1's checkpoint (as an owner that crashed before its checkpoint
    # would have left them): the next restart restores exactly those, and counts go on from them.
    tail = [
        (b"k1", struct.pack(">q", 100), 1),
        (b"k5", struct.pack(">q", 200), 1),
        (b"k1", struct.pack(">q", 300), 1),
    ]
    produce_to(bootstrap_servers, case.changelog, tail)
    case.expected["k1"], case.expected["k5"] = 300, 200
    third = case.run(["k1", "k5", "k2"])
    assert third.restored == Counter({(case.changelog, 1): 3}), third.ended

    # Local state deleted: the restart restores every record of the changelog.
    KafkaStreams(
        count_app(case.source, case.sink), streams_config(bootstrap_servers, case.app, case.state_dir)
    ).clean_up()
    assert not (case.state_dir / case.app).exists()
    length = count_to_end(bootstrap_servers, case.changelog, PARTITIONS)
    fourth = case.run(["k0", "k3"])
    assert length > 40 and fourth.total == length, (length, fourth.ended)


def test_should_wait_for_a_task_directory_still_locked_by_its_previous_owner(
    bootstrap_servers, unique_name, tmp_path
):
    case = Case(bootstrap_servers, unique_name, tmp_path / "state")
    previous_owner = StateDirectory(case.state_dir, case.app)  # a thread or process still closing 0_0
    assert previous_owner.lock(TaskId(0, 0))
    client = KafkaStreams(
        count_app(case.source, case.sink), streams_config(bootstrap_servers, case.app, case.state_dir)
    )
    try:
        client.start()
        case.produce([f"k{i % 8}" for i in range(160)])
        others = {k: n for k, n in case.expected.items() if int(k[1:]) % PARTITIONS != 0}
        latest = latest_until(bootstrap_servers, case.sink, PARTITIONS, decode, lambda got: got == others)
        assert latest == others  # the other tasks run; 0_0 waits for its lock
        time.sleep(1.0)
        assert client.state is KafkaStreamsState.REBALANCING and not client.errors
        previous_owner.unlock(TaskId(0, 0))
        wait_running(client, timeout=20)
        want = dict(case.expected)
        assert latest_until(bootstrap_servers, case.sink, PARTITIONS, decode, lambda got: got == want) == want
        wait_until(
            lambda: any(
                TaskId(0, 0) in {t.task_id for t in m.active_tasks}
                for m in client.metadata_for_local_threads()
            ),
            5,
            "task 0_0 active",
        )
    finally:
        client.close(timeout=30)
        previous_owner.close()
    assert not client.errors
