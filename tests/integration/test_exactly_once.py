"""Exactly-once: transactions per task, atomic commits, fencing.

Every app here runs ``processing_guarantee="exactly_once_v2"`` with the record cache off, so each
input record makes exactly one count update: "one output per input" is then checkable exactly,
reading with ``isolation.level=read_committed``.

On Tansu (docs/decisions/0001-embedded-broker.md) aborted transactional records stay visible to read_committed
readers and there is
no transaction timeout; the tests that need either are ``kafka_only``. The Tansu tests are built
so that no transaction holding records is ever aborted: the fencing test fences a task while the
input is idle (all its transactions committed), which still exercises the whole path: fenced
send -> task closed dirty -> rebalance -> task created again (its ``init_transactions`` fences the
other producer) -> state wiped and restored from the changelog -> exact counts.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections import defaultdict
from typing import Any

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
from streams_runtime.kafka.clients import (
    KafkaException,
    TopicPartition,
    create_consumer,
    create_producer,
)
from streams_runtime.kafka.offsets import EOF_OVERRIDES, scan_to_eof
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
from tests.integration.streams_support import (
    make_topics,
    produce_to,
    streams_config,
    wait_running,
    wait_until,
)

pytestmark = [
    pytest.mark.kafka,
    pytest.mark.every_broker,
]  # on Apache Kafka and on Tansu in every `make test`

PARTITIONS = 4
EOS = {"processing_guarantee": "exactly_once_v2", "statestore_cache_max_bytes": 0}


def eos_config(bootstrap: str, app_id: str, state_dir: Any, **extra: Any) -> dict[str, Any]:
    config = streams_config(bootstrap, app_id, state_dir, **EOS, **extra)
    config.pop("commit_interval_ms")  # the exactly-once default (100 ms) applies
    return config


def count_app(
    source: str,
    sink: str,
    stall: threading.Event | None = None,
    stalled: threading.Event | None = None,
    side_sink: str | None = None,
) -> Any:
    """``source -> count per key -> sink``; with ``side_sink`` also ``source -> mapValues -> side_sink``
    where the value ``stall`` blocks the stream thread until ``stall`` is set (mid-transaction:
    the count branch comes first, so the stalled record's count update is already sent in the
    open transaction when the side branch blocks)."""
    builder = StreamsBuilder()
    stream = builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
    (
        stream.group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    if side_sink is not None:

        def hold(value: str) -> str:
            if value == "stall":
                stalled.set()
                stall.wait(60)
            return value

        stream.map_values(hold).to(side_sink, Produced.with_(Serdes.String(), Serdes.String()))
    return builder.build()


def read_to_end(
    bootstrap: str, topic: str, partitions: int, *, committed: bool, timeout: float = 20.0
) -> list[Any]:
    """Every record of ``topic`` up to each partition's end for the isolation level (read_committed:
    the last stable offset, so an open transaction's records are not returned)."""
    consumer = create_consumer(
        bootstrap,
        f"eos-reader-{time.monotonic_ns()}",
        EOF_OVERRIDES,
        low_latency=True,
        read_committed=committed,
    )
    out: list[Any] = []
    try:
        scan_to_eof(consumer, topic, dict.fromkeys(range(partitions), 0), out.append, timeout)
    finally:
        consumer.close()
    return out


def visibility(bootstrap: str, topic: str, partitions: int) -> str:
    """Per partition: records visible to read_committed / read_uncommitted (a wait's diagnosis)."""

    def per_partition(committed: bool) -> list[int]:
        counts = [0] * partitions
        for msg in read_to_end(bootstrap, topic, partitions, committed=committed):
            counts[msg.partition()] += 1
        return counts

    return f"{topic}: read_committed {per_partition(True)}, read_uncommitted {per_partition(False)}"


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = create_consumer(bootstrap, group, read_committed=True)
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in found}


def counts_by_key(messages: list[Any]) -> dict[str, list[int]]:
    """The count updates of each key, in offset order (one key lives on one partition)."""
    updates: dict[str, list[int]] = defaultdict(list)
    for msg in sorted(messages, key=lambda m: (m.partition(), m.offset())):
        updates[msg.key().decode()].append(struct.unpack(">q", msg.value())[0])
    return dict(updates)


def assert_exactly_once(messages: list[Any], produced: dict[str, int]) -> None:
    """One output per input and exact counts: key k's updates are exactly 1, 2, ..., n_k."""
    updates = counts_by_key(messages)
    wrong = {
        k: (updates.get(k, [])[-5:], n)
        for k, n in produced.items()
        if updates.get(k) != list(range(1, n + 1))
    }
    assert not wrong, (
        f"{len(wrong)} keys without exactly one update per input, e.g. {sorted(wrong.items())[:3]}"
    )
    assert len(messages) == sum(produced.values())


def keyed(start: int, stop: int, keys: int = 40) -> list[tuple[bytes, bytes, int]]:
    return [(f"k{i % keys}".encode(), b"x", (i % keys) % PARTITIONS) for i in range(start, stop)]


def tally(records: list[tuple[bytes, bytes, int]], into: dict[str, int]) -> dict[str, int]:
    for key, _, _ in records:
        into[key.decode()] = into.get(key.decode(), 0) + 1
    return into


def test_should_make_outputs_changelog_and_offsets_visible_together(bootstrap_servers, unique_name, tmp_path):
    """(a) The commit is atomic: while a processor stalls mid-transaction, read_uncommitted readers
    see the transaction's outputs and changelog records, read_committed readers see none of them
    (the last stable offset blocks) and the input offsets are not committed; after the commit all
    three appear together."""
    source, sink, side, app = (unique_name(n) for n in ("in", "counts", "side", "app"))
    changelog = f"{app}-counts-changelog"
    make_topics(bootstrap_servers, **{source: 1, sink: 1, side: 1})
    stall, stalled = threading.Event(), threading.Event()
    streams = KafkaStreams(
        count_app(source, sink, stall, stalled, side), eos_config(bootstrap_servers, app, tmp_path)
    )
    streams.start()
    try:
        wait_running(streams, timeout=45)
        produce_to(bootstrap_servers, source, [(b"k", b"x", 0)] * 3)
        wait_until(lambda: committed_offsets(bootstrap_servers, app, source, 1)[0] == 3, 20, "first commit")
        assert len(read_to_end(bootstrap_servers, sink, 1, committed=True)) == 3

        produce_to(bootstrap_servers, source, [(b"k", b"x", 0)] * 4 + [(b"k", b"stall", 0)])
        assert stalled.wait(20), "the stalling record was not processed"
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, side, 1, committed=False)) >= 7,
            15,
            "the open transaction's records to reach the broker",
        )
        # the open transaction: visible uncommitted, invisible committed, offsets not committed
        assert len(read_to_end(bootstrap_servers, sink, 1, committed=False)) >= 7
        assert len(read_to_end(bootstrap_servers, changelog, 1, committed=False)) >= 7
        assert len(read_to_end(bootstrap_servers, side, 1, committed=True)) == 3
        assert len(read_to_end(bootstrap_servers, sink, 1, committed=True)) == 3
        assert len(read_to_end(bootstrap_servers, changelog, 1, committed=True)) == 3
        assert committed_offsets(bootstrap_servers, app, source, 1)[0] == 3

        stall.set()
        wait_until(
            lambda: committed_offsets(bootstrap_servers, app, source, 1)[0] == 8, 20, "the second commit"
        )
        counts = read_to_end(bootstrap_servers, sink, 1, committed=True)
        assert [struct.unpack(">q", m.value())[0] for m in counts] == list(range(1, 9))
        assert len(read_to_end(bootstrap_servers, side, 1, committed=True)) == 8
        assert len(read_to_end(bootstrap_servers, changelog, 1, committed=True)) == 8
    finally:
        stall.set()
        streams.close(timeout=30)


class RestoredRecords(StateRestoreListener):
    def __init__(self) -> None:
        self.total = 0

    def on_restore_end(self, tp, store_name, total_restored):  # noqa: ANN001
        self.total += total_restored


def _produce_slowly(
    bootstrap: str,
    topic: str,
    batches: list[list[tuple[bytes, bytes, int]]],
    pause_s: float,
    done: threading.Event,
) -> None:
    for batch in batches:
        produce_to(bootstrap, topic, batch)
        time.sleep(pause_s)
    done.set()


def test_should_give_one_output_per_input_across_a_clean_restart(bootstrap_servers, unique_name, tmp_path):
    """(b) A stateful count stopped cleanly mid-stream and started again (same state directory):
    read_committed, every input has exactly one count update and every final count is exact."""
    source, sink, app = (unique_name(n) for n in ("in", "counts", "app"))
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    batches = [keyed(i, i + 200) for i in range(0, 4000, 200)]
    produced = tally([r for b in batches for r in b], {})
    first = KafkaStreams(count_app(source, sink), eos_config(bootstrap_servers, app, tmp_path))
    first.start()
    done = threading.Event()
    writer = threading.Thread(target=_produce_slowly, args=(bootstrap_servers, source, batches, 0.15, done))
    try:
        wait_running(first, timeout=45)
        writer.start()
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 800,
            30,
            "some outputs before the stop",
        )
    finally:
        first.close(timeout=30)
    assert not done.is_set(), "the input was complete before the stop: not a mid-stream restart"
    assert len(list(tmp_path.glob(f"{app}/*/.checkpoint"))) == PARTITIONS
    assert not list(tmp_path.glob(f"{app}/*/.eos-dirty")), "a clean close leaves no exactly-once marker"
    # no delivery report per record: the tasks counted their changelog offsets, one transaction
    # marker per commit included, and the checkpoints name each partition's last record exactly
    changelog = f"{app}-counts-changelog"
    last: dict[int, int] = {}
    for msg in read_to_end(bootstrap_servers, changelog, PARTITIONS, committed=True):
        last[msg.partition()] = max(last.get(msg.partition(), -1), msg.offset())
    directory = StateDirectory(tmp_path, app)
    checkpoints = {p: directory.read_checkpoint(TaskId(0, p)).get((changelog, p)) for p in last}
    assert checkpoints == last, f"checkpoints {checkpoints} != the changelog's last records {last}"
    second = KafkaStreams(count_app(source, sink), eos_config(bootstrap_servers, app, tmp_path))
    restored = RestoredRecords()
    second.set_global_state_restore_listener(restored)
    second.start()
    try:
        wait_running(second, timeout=45)
        assert restored.total == 0  # the clean close checkpointed every task: nothing to restore
        writer.join(30)
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 4000,
            40,
            lambda: "every output after the restart; " + visibility(bootstrap_servers, sink, PARTITIONS),
        )
        assert_exactly_once(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True), produced)
    finally:
        second.close(timeout=30)


def test_should_recover_a_task_whose_producer_was_fenced(bootstrap_servers, unique_name, tmp_path, caplog):
    """(c) A zombie: another producer takes task 0_1's transactional id (init_transactions). The
    task's next send is fenced; the task is closed dirty, the thread rejoins, the task is created
    again (fencing the intruder back) and restores; read_committed counts stay exact."""
    caplog.set_level(logging.WARNING, logger="streams_runtime")
    source, sink, app = (unique_name(n) for n in ("in", "counts", "app"))
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    streams = KafkaStreams(count_app(source, sink), eos_config(bootstrap_servers, app, tmp_path))
    streams.start()
    intruder = None
    try:
        wait_running(streams, timeout=45)
        phase1 = keyed(0, 1200)
        produce_to(bootstrap_servers, source, phase1)
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 1200,
            30,
            "phase 1 outputs",
        )
        intruder = create_producer(bootstrap_servers, {"transactional.id": f"{app}-0_1"})
        intruder.init_transactions(30)  # bumps the epoch: the task's producer is a zombie now
        phase2 = keyed(1200, 2400)
        produce_to(bootstrap_servers, source, phase2)
        produced = tally(phase1 + phase2, {})
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 2400,
            45,
            lambda: "phase 2 outputs after the fenced task recovered; "
            + visibility(bootstrap_servers, sink, PARTITIONS),
        )
        assert any("0_1 migrated" in r.getMessage() for r in caplog.records), "the task was never fenced"
        wiped = "task 0_1: its state was opened under exactly-once and not closed cleanly"
        assert any(wiped in r.getMessage() for r in caplog.records), "the fenced task's state was not wiped"
        assert_exactly_once(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True), produced)
        # the re-created task fenced the intruder in turn
        intruder.begin_transaction()
        intruder.produce(sink, b"intruder", b"k1", partition=1)
        with pytest.raises(KafkaException):
            intruder.commit_transaction(10)
    finally:
        streams.close(timeout=30)


# ---------------------------------------------------------------------- kafka_only (Tansu lacks these)
@pytest.mark.kafka_only
def test_should_hide_aborted_records_from_read_committed_readers(bootstrap_servers, unique_name):
    """An aborted task transaction: read_uncommitted readers see its records, read_committed
    readers never do, and the last stable offset moves past it (later records are visible)."""
    from streams_runtime.processor.internals.record_collector import ProducerSettings
    from streams_runtime.processor.internals.transactional_record_collector import (
        TransactionalRecordCollector,
    )
    from streams_runtime.processor.task_id import TaskId

    topic = unique_name("out")
    make_topics(bootstrap_servers, **{topic: 1})
    collector = TransactionalRecordCollector(
        ProducerSettings(bootstrap_servers, "aborting", {}),
        task_id=TaskId(0, 0),
        transactional_id=unique_name("txn"),
    )
    try:
        for i in range(5):
            collector.send(topic, b"k", b"aborted-%d" % i, (), 0, 0)
        collector.serve(10)
        collector.abort()
        collector.send(topic, b"k", b"committed", (), 0, 0)
        assert collector.commit([], None)
    finally:
        collector.close()
    assert [m.value() for m in read_to_end(bootstrap_servers, topic, 1, committed=True)] == [b"committed"]
    assert len(read_to_end(bootstrap_servers, topic, 1, committed=False)) == 6


@pytest.mark.kafka_only
def test_should_stay_exact_when_a_task_is_fenced_mid_transaction(bootstrap_servers, unique_name, tmp_path):
    """The zombie case Tansu cannot show: the task is fenced while input streams, so its open
    transaction (outputs, changelog records) is aborted; read_committed counts stay exact."""
    source, sink, app = (unique_name(n) for n in ("in", "counts", "app"))
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    batches = [keyed(i, i + 100) for i in range(0, 4000, 100)]
    produced = tally([r for b in batches for r in b], {})
    streams = KafkaStreams(count_app(source, sink), eos_config(bootstrap_servers, app, tmp_path))
    streams.start()
    done = threading.Event()
    writer = threading.Thread(target=_produce_slowly, args=(bootstrap_servers, source, batches, 0.05, done))
    try:
        wait_running(streams, timeout=45)
        writer.start()
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 600,
            30,
            "some outputs before the fence",
        )
        for task in ("0_0", "0_1", "0_2", "0_3"):
            create_producer(bootstrap_servers, {"transactional.id": f"{app}-{task}"}).init_transactions(30)
        writer.join(60)
        assert done.is_set()
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True)) >= 4000,
            60,
            "every output after the fenced tasks recovered",
        )
        assert_exactly_once(read_to_end(bootstrap_servers, sink, PARTITIONS, committed=True), produced)
    finally:
        streams.close(timeout=30)


@pytest.mark.kafka_only
def test_should_abort_a_hung_transaction_after_the_transaction_timeout(
    bootstrap_servers, unique_name, tmp_path, caplog
):
    """A processor hangs mid-transaction longer than ``transaction.timeout.ms``: the broker aborts
    the transaction (a record written after it becomes visible to read_committed while the task
    still hangs); when the task wakes up its producer is fenced, the task recovers, and every
    input still has exactly one committed count update."""
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    source, sink, side, app = (unique_name(n) for n in ("in", "counts", "side", "app"))
    make_topics(bootstrap_servers, **{source: 1, sink: 1, side: 1})
    stall, stalled = threading.Event(), threading.Event()
    config = eos_config(bootstrap_servers, app, tmp_path, **{"producer.transaction.timeout.ms": 3000})
    streams = KafkaStreams(count_app(source, sink, stall, stalled, side), config)
    streams.start()
    try:
        wait_running(streams, timeout=45)
        produce_to(bootstrap_servers, source, [(b"k", b"x", 0)] * 3 + [(b"k", b"stall", 0)])
        assert stalled.wait(20)
        wait_until(
            lambda: len(read_to_end(bootstrap_servers, sink, 1, committed=False)) >= 4,
            15,
            "the hung transaction's count updates to reach the broker",
        )
        # a plain record after the hung transaction's records: read_committed readers see it only
        # once the last stable offset passes that transaction, i.e. once the broker aborted it
        produce_to(bootstrap_servers, sink, [(b"marker", b"after the hung transaction", 0)])

        def marker_visible() -> bool:
            return any(m.key() == b"marker" for m in read_to_end(bootstrap_servers, sink, 1, committed=True))

        wait_until(marker_visible, 40, "the broker to abort the hung transaction (LSO past it)")
        assert not stall.is_set()
        stall.set()
        produce_to(bootstrap_servers, source, [(b"k", b"x", 0)] * 4)

        def counts() -> list[Any]:
            return [m for m in read_to_end(bootstrap_servers, sink, 1, committed=True) if m.key() == b"k"]

        wait_until(lambda: len(counts()) >= 8, 60, "every count after the task recovered")
        assert_exactly_once(counts(), {"k": 8})
        # the broker bumped the producer's epoch when it aborted: the task found itself fenced
        assert any("0_0 migrated" in r.getMessage() for r in caplog.records)
    finally:
        stall.set()
        streams.close(timeout=30)
