"""StreamThread without a broker: the thread loop, rebalances, task migration and commit failures,
driven through the in-memory client supplier (as Kafka Streams' StreamThreadTest does with its
MockClientSupplier). Each test runs a real StreamThread, TaskManager, RecordCollector, changelog
reader and GroupMember; only the Kafka clients are in memory."""

from __future__ import annotations

from typing import Any

import pytest

from streams_runtime import KafkaStreams
from streams_runtime.errors import StreamsError, TransactionError
from streams_runtime.kafka.clients import KafkaError, KafkaException
from streams_runtime.processor.internals.stream_thread import DEAD, RUNNING
from streams_runtime.processor.task_id import TaskId
from streams_runtime.testing import InMemoryClientSupplier
from streams_runtime.testing.in_memory_cluster import fenced_error, kafka_error
from tests.conditions import wait_until
from tests.unit.runtime.stream_thread_harness import (
    APP,
    CHANGELOG,
    INPUT,
    INTEGER,
    OUTPUT,
    STRING,
    counting_topology,
    start_thread,
    upper_topology,
)

ALL_TASKS = {"0_0", "0_1", "0_2"}


# ---------------------------------------------------------------------------- poll, process, commit
def test_should_process_records_and_commit_their_offsets_at_the_commit_interval(tmp_path):
    h = start_thread(tmp_path, counting_topology(), commit_interval_ms=100)
    try:
        h.wait_tasks(ALL_TASKS)
        for key in ("a", "a", "b"):
            h.send(0, key, "x")
        h.send(1, "c", "x")
        wait_until(lambda: len(h.outputs()) == 4, 10, lambda: f"4 outputs, have {h.outputs()}")
        assert sorted(h.outputs()) == [("a", 1), ("a", 2), ("b", 1), ("c", 1)]
        # the input offsets are committed by the loop (next offset to read), the thread keeps running
        wait_until(
            lambda: h.committed() == {(INPUT, 0): 3, (INPUT, 1): 1},
            10,
            lambda: f"committed offsets, have {h.committed()}",
        )
        assert h.thread.state == RUNNING
        # the store's writes went to its changelog, partition = the task's partition
        logged = [
            (STRING.deserialize(CHANGELOG, r.key), INTEGER.deserialize(CHANGELOG, r.value))
            for r in h.cluster.records(CHANGELOG, 0)
        ]
        assert logged == [("a", 1), ("a", 2), ("b", 1)]
    finally:
        h.stop()
    assert h.errors == []


def test_should_not_commit_before_the_interval_and_commit_on_a_clean_shutdown(tmp_path):
    h = start_thread(tmp_path, counting_topology(), commit_interval_ms=600_000)
    h.wait_tasks(ALL_TASKS)
    h.send(2, "a", "x")
    h.send(2, "a", "y")
    wait_until(lambda: len(h.outputs()) == 2, 10, lambda: f"2 outputs, have {h.outputs()}")
    assert h.committed() == {}  # processed, but the commit interval has not passed
    h.stop()
    assert h.committed() == {(INPUT, 2): 2}  # closing the tasks cleanly committed them
    assert h.setup.state_directory.read_checkpoint(TaskId(0, 2)) == {(CHANGELOG, 2): 1}
    assert h.errors == []


# ---------------------------------------------------------------------------- rebalance
def test_should_commit_and_close_revoked_tasks_and_restore_assigned_ones(tmp_path):
    supplier = InMemoryClientSupplier(auto_assign=False)
    supplier.cluster.create_topic(CHANGELOG, 3)
    # task 0_2's state, written to its changelog by a previous owner: a=41
    supplier.cluster.append(CHANGELOG, 2, STRING.serialize(CHANGELOG, "a"), INTEGER.serialize(CHANGELOG, 41))
    h = start_thread(tmp_path, counting_topology(), supplier, commit_interval_ms=600_000)
    try:
        wait_until(lambda: supplier.group.members, 10, "the thread's member to join the group")
        supplier.group.assign(0, active=["0_0", "0_1"])
        h.wait_tasks({"0_0", "0_1"})
        h.send(0, "a", "x")
        h.send(1, "b", "x")
        wait_until(lambda: len(h.outputs()) == 2, 10, lambda: f"2 outputs, have {h.outputs()}")
        assert h.committed() == {}

        supplier.group.assign(0, active=["0_1", "0_2"])  # revokes 0_0, assigns 0_2
        h.wait_tasks({"0_1", "0_2"})
        # the revoked task was committed and closed cleanly (checkpoint written), the kept one not
        assert h.committed() == {(INPUT, 0): 1}
        assert h.setup.state_directory.read_checkpoint(TaskId(0, 0)) == {(CHANGELOG, 0): 0}
        assert (INPUT, 0) not in {
            (tp.topic, tp.partition) for tp in supplier.main_consumers()[0].assignment()
        }
        # the assigned task restored a=41 from its changelog before processing
        h.send(2, "a", "x")
        wait_until(lambda: ("a", 42) in h.outputs(), 10, lambda: f"('a', 42) in {h.outputs()}")
        restore = [c for c in supplier.consumers if c.role == "restore"]
        assert restore, "the changelog reader made no restore consumer"
    finally:
        h.stop()
    assert h.errors == []


def test_should_retry_listing_a_changelog_while_its_leader_is_lost(tmp_path):
    """The restore asks for a changelog's end while its leader moves (NOT_LEADER_FOR_PARTITION): it
    asks again at the next step instead of failing the thread, then restores."""
    supplier = InMemoryClientSupplier(auto_assign=False)
    supplier.cluster.create_topic(CHANGELOG, 3)
    supplier.cluster.append(CHANGELOG, 2, STRING.serialize(CHANGELOG, "a"), INTEGER.serialize(CHANGELOG, 41))
    not_leader = KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION, "injected", fatal=False, retriable=True)
    supplier.cluster.faults.inject("list_offsets", KafkaException(not_leader), times=3)
    h = start_thread(tmp_path, counting_topology(), supplier, commit_interval_ms=600_000)
    try:
        wait_until(lambda: supplier.group.members, 10, "the thread's member to join the group")
        supplier.group.assign(0, active=["0_2"])
        h.wait_tasks({"0_2"})
        h.send(2, "a", "x")
        wait_until(lambda: ("a", 42) in h.outputs(), 10, lambda: f"('a', 42) in {h.outputs()}")
        assert supplier.cluster.faults.raised["list_offsets"] == 3
        assert h.thread.state != DEAD
    finally:
        h.stop()
    assert h.errors == []


def test_should_close_tasks_dirty_when_the_membership_is_lost_and_process_their_input_again(tmp_path):
    supplier = InMemoryClientSupplier(auto_assign=False)
    h = start_thread(tmp_path, upper_topology(), supplier, commit_interval_ms=600_000)
    try:
        wait_until(lambda: supplier.group.members, 10, "the thread's member to join the group")
        supplier.group.assign(0, active=["0_1"])
        h.wait_tasks({"0_1"})
        h.send(1, "k", "a")
        wait_until(lambda: len(h.outputs(value_serde=STRING)) == 1, 10, "the first output")
        supplier.group.drop(0)  # the session expired: the tasks are lost, not revoked
        wait_until(lambda: not h.thread.active_tasks, 10, lambda: f"no task, have {h.thread.active_tasks}")
        assert h.committed() == {}  # a lost task is closed dirty: nothing committed
        supplier.group.assign(0, active=["0_1"])
        h.wait_tasks({"0_1"})
        # its next owner (here the same thread) processes the uncommitted input again
        wait_until(lambda: h.outputs(value_serde=STRING) == [("k", "A"), ("k", "A")], 10, "the input again")
    finally:
        h.stop()
    assert h.errors == []


class LosingWhilePolling(InMemoryClientSupplier):
    """The group drops the member while the thread's poll is returning records (armed by
    :attr:`armed`): the poll hands the records back only once the member handed the thread the
    change that revokes their task as lost."""

    def __init__(self) -> None:
        super().__init__(auto_assign=False)
        self.armed = False
        self.thread: Any = None

    def get_consumer(self, *args: Any, **kwargs: Any) -> Any:
        consumer = super().get_consumer(*args, **kwargs)
        consume = consumer.consume

        def consume_then_lose(num_messages: int = 1, timeout: float = -1) -> list[Any]:
            messages = consume(num_messages, timeout)
            if self.armed and any(m.error() is None for m in messages):
                self.armed = False
                self.group.drop(0)
                wait_until(lambda: self.thread._changes, 10, "the lost change handed to the thread")  # noqa: SLF001
            return messages

        consumer.consume = consume_then_lose
        return consumer


def test_should_process_no_record_of_a_task_lost_while_its_records_were_polled(tmp_path):
    supplier = LosingWhilePolling()
    h = start_thread(tmp_path, upper_topology(), supplier, commit_interval_ms=600_000)
    supplier.thread = h.thread
    try:
        wait_until(lambda: supplier.group.members, 10, "the thread's member to join the group")
        supplier.group.assign(0, active=["0_1"])
        h.wait_tasks({"0_1"})
        supplier.armed = True
        h.send(1, "k", "a")
        wait_until(lambda: not supplier.armed, 10, "the record polled")
        wait_until(lambda: not h.thread.active_tasks, 10, lambda: f"no task, have {h.thread.active_tasks}")
        assert h.outputs(value_serde=STRING) == []  # the group's, no longer this thread's
        supplier.group.assign(0, active=["0_1"])
        h.wait_tasks({"0_1"})
        wait_until(lambda: h.outputs(value_serde=STRING) == [("k", "A")], 10, "the input, by its owner")
    finally:
        h.stop()
    assert h.errors == []


# ---------------------------------------------------------------------------- task migrated
def test_should_close_a_fenced_task_dirty_rejoin_and_process_its_input_once(tmp_path):
    h = start_thread(tmp_path, upper_topology(), processing_guarantee="exactly_once_v2")
    transactional_id = f"{APP}-0_0"
    try:
        h.wait_tasks(ALL_TASKS)
        h.send(0, "k", "a")
        wait_until(
            lambda: h.outputs(read_committed=True, value_serde=STRING) == [("k", "A")],
            10,
            lambda: f"the first output committed, have {h.outputs(value_serde=STRING)}",
        )
        member = h.supplier.coordination_consumers[0]
        rejoins = member.rejoin_requests
        fenced = h.supplier.transactional_producers(transactional_id)[-1]  # the task's producer now
        h.supplier.cluster.fence(transactional_id)  # a newer producer took the task's id
        h.send(0, "k", "b")
        wait_until(
            lambda: h.outputs(read_committed=True, value_serde=STRING) == [("k", "A"), ("k", "B")],
            10,
            lambda: f"the second output committed, have {h.outputs(value_serde=STRING)}",
        )
        successor = h.supplier.transactional_producers(transactional_id)[-1]
        assert successor is not fenced, "the task was not created again with a new producer"
        assert successor.transaction_calls[0] == "init" and "commit" in successor.transaction_calls
        assert member.rejoin_requests > rejoins  # the thread asked the group for a rebalance
        wait_until(lambda: fenced.closed, 10, "the fenced producer to be closed")
        assert fenced.transaction_calls.count("commit") == 1  # fenced: it committed nothing after
        assert h.committed() == {(INPUT, 0): 2}
        assert h.thread.state == RUNNING
    finally:
        h.stop()
    assert h.errors == []


def test_should_count_exactly_once_when_a_task_is_fenced_while_committing(tmp_path):
    """The fenced transaction (output a=2 and its changelog write) is aborted by the next owner's
    init_transactions; the task is created again, its dirty state wiped and restored from the
    committed changelog (a=1), and the input is counted again, once."""
    h = start_thread(tmp_path, counting_topology(), processing_guarantee="exactly_once_v2")
    try:
        h.wait_tasks(ALL_TASKS)
        h.send(0, "a", "x")
        wait_until(
            lambda: h.outputs(read_committed=True) == [("a", 1)], 10, lambda: f"a=1, have {h.outputs()}"
        )
        h.cluster.faults.inject("commit_transaction", fenced_error(f"{APP}-0_0"))
        h.send(0, "a", "y")
        wait_until(
            lambda: h.outputs(read_committed=True) == [("a", 1), ("a", 2)],
            10,
            lambda: f"a=1, a=2 committed, have {h.outputs()} (committed {h.outputs(read_committed=True)})",
        )
        assert h.outputs() == [("a", 1), ("a", 2), ("a", 2)]  # the fenced attempt's a=2 is aborted
        changelog = [
            INTEGER.deserialize(CHANGELOG, r.value)
            for r in h.cluster.records(CHANGELOG, 0, read_committed=True)
        ]
        assert changelog == [1, 2]
        assert h.committed() == {(INPUT, 0): 2}
    finally:
        h.stop()
    assert h.errors == []


# ---------------------------------------------------------------------------- commit failures
def test_should_retry_a_transient_offset_commit_failure_within_the_task_timeout(tmp_path):
    h = start_thread(tmp_path, counting_topology(), commit_interval_ms=100, task_timeout_ms=30_000)
    try:
        h.wait_tasks(ALL_TASKS)
        h.cluster.faults.inject("commit", kafka_error(KafkaError.REQUEST_TIMED_OUT, retriable=True), times=2)
        h.send(1, "a", "x")
        wait_until(lambda: h.committed() == {(INPUT, 1): 1}, 10, lambda: f"the commit, have {h.committed()}")
        assert h.cluster.faults.raised["commit"] == 2
        h.wait_state(RUNNING)  # the thread rode the failures out
    finally:
        h.stop()
    assert h.errors == []


@pytest.mark.parametrize(
    ("error", "task_timeout_ms", "times", "message"),
    [
        (KafkaError.GROUP_AUTHORIZATION_FAILED, 30_000, 1, "GROUP_AUTHORIZATION_FAILED"),
        (KafkaError.REQUEST_TIMED_OUT, 200, 1_000, "task_timeout_ms=200"),
    ],
    ids=["not-transient", "transient-beyond-task-timeout"],
)
def test_should_fail_the_thread_through_the_exception_handler_when_a_commit_cannot_succeed(
    tmp_path, error, task_timeout_ms, times, message
):
    h = start_thread(tmp_path, counting_topology(), commit_interval_ms=100, task_timeout_ms=task_timeout_ms)
    h.wait_tasks(ALL_TASKS)
    h.cluster.faults.inject("commit", kafka_error(error), times=times)
    h.send(0, "a", "x")
    wait_until(lambda: h.thread.state == DEAD, 10, lambda: f"the thread to die, states {h.states}")
    h.stop()
    assert len(h.errors) == 1  # the uncaught-exception policy was asked once
    assert isinstance(h.errors[0], StreamsError)
    assert "committing input offsets failed" in str(h.errors[0]) and message in str(h.errors[0])
    assert h.thread.error is h.errors[0]
    assert h.committed() == {}  # the dirty close committed nothing
    assert h.died == [h.thread]


def test_should_fail_the_thread_when_a_transaction_cannot_commit(tmp_path):
    h = start_thread(tmp_path, upper_topology(), processing_guarantee="exactly_once_v2")
    h.wait_tasks(ALL_TASKS)
    abortable = KafkaError(
        KafkaError.INVALID_TXN_STATE, "injected", fatal=False, retriable=False, txn_requires_abort=True
    )
    h.cluster.faults.inject("commit_transaction", KafkaException(abortable))
    h.send(0, "k", "a")
    wait_until(lambda: h.thread.state == DEAD, 10, lambda: f"the thread to die, states {h.states}")
    h.stop()
    assert len(h.errors) == 1 and isinstance(h.errors[0], TransactionError)
    assert h.outputs(read_committed=True, value_serde=STRING) == []  # aborted: never visible
    assert h.outputs(value_serde=STRING) == [("k", "A")]  # written, then aborted
    assert h.committed() == {}


def test_should_start_a_task_again_from_its_last_commit_when_the_cluster_fails_its_transaction(tmp_path):
    """A commit that times out while the cluster loses brokers (Kafka Streams' TaskCorruptedException):
    the transaction is aborted, the task closed dirty and taken up again, the thread lives on, and
    the input is processed exactly once."""
    h = start_thread(tmp_path, upper_topology(), processing_guarantee="exactly_once_v2")
    h.wait_tasks(ALL_TASKS)
    timed_out = KafkaError(KafkaError.REQUEST_TIMED_OUT, "injected", fatal=False, retriable=False)
    h.cluster.faults.inject("commit_transaction", KafkaException(timed_out))
    h.send(0, "k", "a")
    wait_until(
        lambda: h.outputs(read_committed=True, value_serde=STRING) == [("k", "A")],
        10,
        lambda: f"the output once, committed; states {h.states}",
    )
    assert h.thread.state != DEAD and h.errors == []
    assert h.cluster.faults.raised["commit_transaction"] == 1
    assert h.outputs(value_serde=STRING) == [("k", "A"), ("k", "A")]  # the first write, then aborted
    h.stop()


# ---------------------------------------------------------------------------- the client
def test_should_run_a_kafka_streams_client_on_a_given_client_supplier(tmp_path):
    supplier = InMemoryClientSupplier()
    supplier.cluster.create_topic(INPUT, 2)
    supplier.cluster.create_topic(OUTPUT, 2)
    streams = KafkaStreams(
        counting_topology(),
        {"application_id": APP, "state_dir": str(tmp_path), "poll_ms": 10, "commit_interval_ms": 100},
        client_supplier=supplier,
    )
    streams.start()
    try:
        wait_until(lambda: streams.state.name == "RUNNING", 10, lambda: f"RUNNING, have {streams.state}")
        supplier.cluster.append(INPUT, 1, STRING.serialize(INPUT, "a"), STRING.serialize(INPUT, "x"))
        wait_until(lambda: supplier.cluster.committed(APP).get((INPUT, 1)) == 1, 10, "the input committed")
        assert [INTEGER.deserialize(OUTPUT, r.value) for r in supplier.cluster.records(OUTPUT)] == [1]
    finally:
        assert streams.close(10)
    assert supplier.cluster.topics()[CHANGELOG] == 2  # created at start by the client, in memory
