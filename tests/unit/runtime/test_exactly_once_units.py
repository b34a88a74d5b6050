"""Exactly-once pieces that need no broker: the EOS dirty marker of the StateDirectory, the
transactional collector's transaction state and error translation (against the in-memory client
supplier's producer, errors injected through its cluster's faults), and which collector a thread
gets for each processing guarantee."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from streams_runtime.config import StreamsConfig
from streams_runtime.errors import TaskCorruptedError, TaskMigratedError, TransactionError
from streams_runtime.kafka.clients import TopicPartition, isolation_level
from streams_runtime.processor.internals import record_collector, transactional_record_collector
from streams_runtime.processor.internals.producer_side import create_record_collector
from streams_runtime.processor.internals.record_collector import ProducerSettings, RecordCollector
from streams_runtime.processor.internals.shared_record_collectors import SharedRecordCollectors
from streams_runtime.processor.internals.state_directory import (
    CHECKPOINT_FILE,
    EOS_DIRTY_FILE,
    LOCK_FILE,
    StateDirectory,
)
from streams_runtime.processor.internals.transactional_record_collector import (
    TaskRecordCollectors,
    TransactionalRecordCollector,
)
from streams_runtime.processor.task_id import TaskId
from streams_runtime.testing import InMemoryClientSupplier
from streams_runtime.testing.in_memory_clients import InMemoryProducer

T0, T1 = TaskId(0, 0), TaskId(0, 1)
CHANGELOG = "app-counts-changelog"


# ---------------------------------------------------------------------- the dirty marker
@pytest.fixture
def state_dir(tmp_path: Path) -> StateDirectory:
    sd = StateDirectory(tmp_path, "app")
    yield sd
    sd.close()


def test_should_wipe_a_task_directory_left_dirty_by_an_exactly_once_owner(state_dir):
    assert state_dir.lock(T0)
    state_dir.mark_eos_dirty(T0)
    (state_dir.task_dir(T0) / "counts").mkdir()
    (state_dir.task_dir(T0) / "counts" / "000001.sst").write_text("uncommitted writes")
    state_dir.write_checkpoint(T0, {(CHANGELOG, 0): 41})
    assert state_dir.is_eos_dirty(T0)

    assert state_dir.wipe_if_eos_dirty(T0)

    assert sorted(p.name for p in state_dir.task_dir(T0).iterdir()) == [LOCK_FILE]
    assert state_dir.read_checkpoint(T0) == {}
    assert not state_dir.is_eos_dirty(T0)


def test_should_keep_the_state_of_a_cleanly_closed_exactly_once_task(state_dir):
    assert state_dir.lock(T0)
    state_dir.mark_eos_dirty(T0)
    state_dir.write_checkpoint(T0, {(CHANGELOG, 0): 41})
    state_dir.clear_eos_dirty(T0)

    assert not state_dir.wipe_if_eos_dirty(T0)
    assert sorted(p.name for p in state_dir.task_dir(T0).iterdir()) == [CHECKPOINT_FILE, LOCK_FILE]
    assert state_dir.read_checkpoint(T0) == {(CHANGELOG, 0): 41}


def test_should_report_no_offset_sum_for_a_dirty_task_directory(state_dir):
    for task in (T0, T1):
        state_dir.write_checkpoint(task, {(CHANGELOG, task.partition): 10})
    (state_dir.task_dir(T1) / EOS_DIRTY_FILE).touch()
    assert state_dir.task_offset_sums() == {T0: 10}


def test_should_refuse_to_wipe_a_dirty_directory_without_its_lock(state_dir):
    state_dir.task_dir(T0)
    (state_dir.task_dir(T0) / EOS_DIRTY_FILE).touch()
    with pytest.raises(Exception, match="lock is not held"):
        state_dir.wipe_if_eos_dirty(T0)


# ---------------------------------------------------------------------- the transactional collector
def _error(
    code: int, *, fatal: bool = False, abortable: bool = False, retriable: bool = False
) -> KafkaException:
    error = KafkaError(code, "test", fatal=fatal, retriable=retriable, txn_requires_abort=abortable)
    return KafkaException(error)


def _supplier() -> InMemoryClientSupplier:
    supplier = InMemoryClientSupplier()
    for topic in ("in", "out", CHANGELOG):
        supplier.cluster.create_topic(topic, 2)
    return supplier


@pytest.fixture
def supplier() -> InMemoryClientSupplier:
    return _supplier()


@pytest.fixture
def collector(supplier: InMemoryClientSupplier) -> TransactionalRecordCollector:
    return TransactionalRecordCollector(
        ProducerSettings("unused:9092", "c", {}, frozenset([CHANGELOG]), client_supplier=supplier),
        task_id=T1,
        transactional_id="app-0_1",
    )


@pytest.fixture
def producer(supplier: InMemoryClientSupplier, collector: TransactionalRecordCollector) -> InMemoryProducer:
    [made] = supplier.producers
    return made


def fail(supplier: InMemoryClientSupplier, call: str, error: BaseException) -> None:
    """The next ``call`` of the producer raises ``error``."""
    supplier.cluster.faults.inject(call, error)


def send(collector: TransactionalRecordCollector, topic: str = "out") -> None:
    collector.send(topic, b"k", b"v", (), 0, 1)


def test_should_init_transactions_with_the_task_transactional_id(producer):
    assert producer.config["transactional.id"] == "app-0_1"
    assert producer.config["transaction.timeout.ms"] == 10_000
    assert producer.calls == ["init_transactions"]


def test_should_begin_a_transaction_lazily_and_once_per_commit(collector, producer):
    send(collector)
    send(collector, CHANGELOG)
    assert producer.calls.count("begin_transaction") == 1 and collector.in_transaction

    assert collector.commit([TopicPartition("in", 1, 2)], object())
    assert producer.calls[-3:] == ["flush", "send_offsets_to_transaction", "commit_transaction"]
    assert not collector.in_transaction

    send(collector)
    assert producer.calls.count("begin_transaction") == 2


def test_should_ask_the_transactional_producer_for_error_reports_only(producer):
    # the task counts its changelog offsets (markers included), see test_counted_changelog_offsets
    assert producer.config["delivery.report.only.error"] is True


def test_should_commit_nothing_when_nothing_was_sent_or_consumed(collector, producer):
    assert not collector.commit([], None)
    assert "begin_transaction" not in producer.calls
    assert collector.commit([TopicPartition("in", 1, 5)], object())  # offsets alone: a transaction
    assert producer.calls[-4:] == [
        "begin_transaction",
        "flush",
        "send_offsets_to_transaction",
        "commit_transaction",
    ]


@pytest.mark.parametrize(
    "code", [KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH, KafkaError._FENCED]
)  # noqa: SLF001
def test_should_report_a_fenced_commit_as_task_migrated(supplier, collector, producer, code):
    send(collector)
    fail(supplier, "commit_transaction", _error(code, abortable=True))
    with pytest.raises(TaskMigratedError) as raised:
        collector.commit([TopicPartition("in", 1, 2)], object())
    assert raised.value.task_ids == {T1}
    assert "abort_transaction" not in producer.calls


def test_should_abort_and_fail_on_another_abortable_error(supplier, collector, producer):
    send(collector)
    refused = _error(KafkaError.GROUP_AUTHORIZATION_FAILED, abortable=True)
    fail(supplier, "send_offsets_to_transaction", refused)
    with pytest.raises(TransactionError, match="GROUP_AUTHORIZATION_FAILED"):
        collector.commit([TopicPartition("in", 1, 2)], object())
    assert "abort_transaction" in producer.calls
    assert not collector.in_transaction
    assert supplier.cluster.records("out", read_committed=True) == []  # the record was aborted


def test_should_abort_and_report_the_task_corrupted_when_a_send_times_out(supplier, collector, producer):
    send(collector)
    fail(supplier, "commit_transaction", _error(KafkaError.NOT_ENOUGH_REPLICAS))
    with pytest.raises(TaskCorruptedError, match="NOT_ENOUGH_REPLICAS") as raised:
        collector.commit([TopicPartition("in", 1, 2)], object())
    assert raised.value.task_ids and isinstance(raised.value, TaskMigratedError)
    assert "abort_transaction" in producer.calls
    assert not collector.in_transaction


def test_should_retry_a_retriable_commit(supplier, collector, producer):
    send(collector)
    fail(supplier, "commit_transaction", _error(KafkaError.CONCURRENT_TRANSACTIONS, retriable=True))
    assert collector.commit([], None)
    assert producer.calls.count("commit_transaction") == 2
    assert [r.value for r in supplier.cluster.records("out", read_committed=True)] == [b"v"]


@pytest.mark.parametrize("call", ["send_offsets_to_transaction", "commit_transaction"])
def test_should_give_up_a_timed_out_transactional_call_and_report_the_task_corrupted(
    supplier, collector, producer, call
):
    """librdkafka can keep asking a coordinator whose broker is gone: no second try on the same
    producer; the task's new producer looks the coordinator up again."""
    send(collector)
    fail(supplier, call, _error(KafkaError._TIMED_OUT, retriable=True))  # noqa: SLF001
    with pytest.raises(TaskCorruptedError, match="_TIMED_OUT"):
        collector.commit([TopicPartition("in", 1, 2)], object(), task_timeout_ms=300_000)
    assert producer.calls.count(call) == 1
    assert "abort_transaction" in producer.calls and not collector.in_transaction
    assert producer.timeouts[call] == transactional_record_collector.TRANSACTION_CALL_TIMEOUT_S == 60.0


class _HangingClient:
    """A confluent producer whose ``send_offsets_to_transaction`` blocks past its timeout (as
    librdkafka's does while the group coordinator is unknown) until :attr:`release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.closed = threading.Event()
        self.calls: list[str] = []

    def send_offsets_to_transaction(self, offsets, group_metadata, timeout_s) -> None:
        self.calls.append("send_offsets_to_transaction")
        self.release.wait(30)

    def abort_transaction(self, timeout_s) -> None:
        self.calls.append("abort_transaction")

    def close(self, *args) -> None:
        self.calls.append("close")
        self.closed.set()


class _Supplier:
    def __init__(self, client: _HangingClient) -> None:
        self.client = client

    def get_producer(self, bootstrap_servers, overrides=None):
        return self.client


def test_should_give_up_a_send_offsets_call_that_overruns_its_timeout(monkeypatch):
    """The stream thread gets librdkafka's timeout error a grace after the call's own timeout;
    the producer is wedged (asked nothing more) and closed only once the hung call returns."""
    monkeypatch.setattr(record_collector, "SEND_OFFSETS_GRACE_S", 0.2)
    client = _HangingClient()
    producer = record_collector.StreamsProducer(
        "unused:9092", "c", {}, None, True, client_supplier=_Supplier(client)
    )
    started = time.monotonic()
    with pytest.raises(KafkaException) as raised:
        producer.send_offsets([TopicPartition("in", 0, 5)], object(), 0.3)
    assert 0.5 <= time.monotonic() - started < 3.0
    assert raised.value.args[0].code() == KafkaError._TIMED_OUT  # noqa: SLF001
    assert "did not return within 0.5 s" in str(raised.value) and producer.wedged
    producer.close()
    assert client.calls == ["send_offsets_to_transaction"]  # neither an abort nor a close yet
    client.release.set()
    assert client.closed.wait(5)


def test_should_not_ask_a_wedged_producer_to_abort_or_close(supplier, collector, producer):
    send(collector)
    collector.producer.wedged = True
    fail(supplier, "send_offsets_to_transaction", _error(KafkaError._TIMED_OUT))  # noqa: SLF001
    with pytest.raises(TaskCorruptedError, match="_TIMED_OUT"):
        collector.commit([TopicPartition("in", 1, 2)], object(), task_timeout_ms=300_000)
    collector.close_dirty()
    assert "abort_transaction" not in producer.calls and "purge" not in producer.calls
    assert "close" not in producer.calls and not collector.in_transaction


def test_should_find_the_fencing_behind_a_refused_send(supplier, collector):
    """librdkafka raises the fatal _FENCED from poll and refuses later sends with _FATAL."""
    send(collector)
    fail(supplier, "produce", _error(KafkaError._FATAL))  # noqa: SLF001
    fail(supplier, "poll", _error(KafkaError._FENCED, fatal=True))  # noqa: SLF001
    with pytest.raises(TaskMigratedError):
        send(collector)


def test_should_treat_a_fatal_producer_without_a_known_cause_as_migrated(supplier, collector):
    """Re-creating the task either works (it was fenced) or surfaces the persistent error."""
    send(collector)
    fail(supplier, "produce", _error(KafkaError._FATAL))  # noqa: SLF001
    with pytest.raises(TaskMigratedError):
        send(collector)


def test_should_treat_a_callback_broken_by_a_fatal_error_as_migrated(supplier, collector):
    """confluent runs a delivery callback with the fatal error pending: poll raises SystemError."""
    send(collector)
    fail(supplier, "poll", SystemError("returned a result with an exception set"))
    collector.serve()
    with pytest.raises(TaskMigratedError):
        send(collector)


def test_should_abort_the_open_transaction_on_dirty_close(supplier, collector, producer):
    send(collector)
    collector.close_dirty()
    for thread in threading.enumerate():  # the producer closes on a daemon thread
        if thread.name.startswith("close-app-0_1"):
            thread.join(5)
    assert producer.calls[-4:] == ["abort_transaction", "purge", "flush", "close"]
    assert [r.state for r in supplier.cluster.records("out")] == ["aborted"]


# ---------------------------------------------------------------------- configuration
def test_should_give_each_guarantee_its_collector():
    config = StreamsConfig(application_id="app", bootstrap_servers="x:1")
    alos = create_record_collector(config, "x:1", "c", [])
    try:
        assert type(alos) is SharedRecordCollectors and type(alos.collector) is RecordCollector
        assert not alos.eos_enabled
        first, second = alos.for_task(T0), alos.for_task(T1)
        assert first is not second and first.send == second.send == alos.collector.send  # one producer
    finally:
        alos.close(0)
    eos = create_record_collector(
        StreamsConfig(application_id="app", bootstrap_servers="x:1", processing_guarantee="exactly_once_v2"),
        "x:1",
        "c",
        [CHANGELOG],
    )
    assert isinstance(eos, TaskRecordCollectors) and eos.eos_enabled
    assert eos.transactional_id(T1) == "app-0_1"


def test_should_read_committed_only_under_exactly_once():
    assert isolation_level(True) == "read_committed"
    assert isolation_level(False) == "read_uncommitted"


@pytest.mark.parametrize("parallel", [False, True])
def test_should_commit_every_task_and_report_each_outcome(monkeypatch, parallel):
    monkeypatch.setattr(transactional_record_collector, "PARALLEL_COMMITS", parallel)
    supplier = _supplier()
    collectors = TaskRecordCollectors(
        ProducerSettings("unused:9092", "c", {}, frozenset([CHANGELOG]), client_supplier=supplier), "app"
    )
    try:
        for task in (T0, T1):
            send(collectors.for_task(task))
        supplier.cluster.fence("app-0_1")
        outcomes = collectors.commit_all(
            [(T0, [TopicPartition("in", 0, 3)], object()), (T1, [TopicPartition("in", 1, 3)], object())]
        )
        assert outcomes[0] is True
        assert isinstance(outcomes[1], TaskMigratedError) and outcomes[1].task_ids == {T1}
    finally:
        collectors.close()
