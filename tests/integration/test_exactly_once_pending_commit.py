"""A restore under exactly-once takes a changelog's end only where no transaction on it is still
pending: the previous owner's last transaction ended (EndTxn answered) but the broker had not
completed it yet, so its input offsets were not committed yet either.

On the embedded broker that is the normal case for a while after EndTxn: Tansu completes a
transaction (moves the last stable offset, commits its offsets) only once every transaction
overlapping it on some partition has ended too, here another producer's open transaction on a
shared output partition. A restore that took the stable offset as the end would leave out the
pending transaction's state while its output stays committed, and the new owner would write that
output again. On Apache Kafka the transaction is complete when EndTxn returns and the restore
reads it at once; the assertions hold there too."""

from __future__ import annotations

import time

import pytest

from streams_runtime.kafka.clients import create_producer
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
from tests.integration.streams_support import make_topics
from tests.unit.runtime.helpers import changelog, contents, make_task, state_topology

pytestmark = pytest.mark.kafka

T0 = TaskId(0, 0)


def _transactional(bootstrap: str, transactional_id: str) -> object:
    producer = create_producer(bootstrap, {"transactional.id": transactional_id, "linger.ms": 0})
    producer.init_transactions(10)
    return producer


def test_a_restore_waits_for_the_previous_owners_pending_transaction(
    bootstrap_servers, unique_name, tmp_path
):
    app = unique_name("pending")
    rocks, shared = changelog(app, "rocks"), unique_name("shared-out")
    make_topics(bootstrap_servers, **{rocks: 1, shared: 1})
    owner = _transactional(bootstrap_servers, f"{app}-0_0")
    owner.begin_transaction()
    owner.produce(rocks, b"1", b"a", partition=0)
    owner.commit_transaction(10)
    other = _transactional(bootstrap_servers, unique_name("other-task"))
    other.begin_transaction()  # another task's transaction, open on the shared output partition
    other.produce(shared, b"x", b"x", partition=0)
    assert other.flush(10) == 0
    owner.begin_transaction()  # the owner's last transaction: state and output
    owner.produce(rocks, b"2", b"b", partition=0)
    owner.produce(shared, b"out-b", b"b", partition=0)
    owner.commit_transaction(10)

    directory = StateDirectory(tmp_path, app)
    assert directory.lock(T0)
    task, manager = make_task(directory, app, T0, topology=state_topology(("rocks",)))
    reader = StoreChangelogReader(bootstrap_servers, skip_aborted=True, max_batch_records=100)
    try:
        reader.register(manager)
        finished: set = set()
        other_open_until = time.monotonic() + 1.5
        while T0 not in finished and time.monotonic() < other_open_until:
            finished |= reader.restore(0.05)
        other.commit_transaction(10)  # now the broker can complete the owner's transaction too
        deadline = time.monotonic() + 20
        while T0 not in finished:
            assert time.monotonic() < deadline, "the restore did not finish after the transaction completed"
            finished |= reader.restore(0.05)
        assert contents(task.stores["rocks"]) == {"a": "1", "b": "2"}
    finally:
        reader.close()
        task.close()
        directory.close()
