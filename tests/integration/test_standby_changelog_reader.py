"""The StoreChangelogReader's standby mode on the embedded broker: a standby task's changelog
replays after active restoration (paused meanwhile), never completes, follows new writes, and
reports its lag; the listener hears of the active task only."""

from __future__ import annotations

import pytest

from streams_runtime.config import as_config
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.standby_task import StandbyTask
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.task_id import TaskId
from tests.conditions import wait_until
from tests.integration.ha_support import produce_keys
from tests.integration.streams_support import make_topics
from tests.integration.test_restore import RecordingListener
from tests.unit.runtime.helpers import changelog, make_task, state_topology

pytestmark = pytest.mark.kafka

ACTIVE, STANDBY = TaskId(0, 0), TaskId(0, 1)
RECORDS = 30_000


def test_should_replay_standbys_after_active_restoration_and_keep_following(
    bootstrap_servers, unique_name, tmp_path
):
    app = unique_name("sbr")
    rocks, mem = changelog(app, "rocks"), changelog(app, "mem")
    make_topics(bootstrap_servers, **{rocks: 2, mem: 2})
    produce_keys(bootstrap_servers, rocks, RECORDS, value=b"v", partition=0)
    produce_keys(bootstrap_servers, rocks, RECORDS, value=b"v", partition=1)
    directory = StateDirectory(tmp_path, app)
    assert directory.lock(ACTIVE) and directory.lock(STANDBY)
    task, manager = make_task(directory, app, ACTIVE)
    topology = state_topology()
    standby = StandbyTask(
        STANDBY,
        ["rocks", "mem"],
        {n: e.builder for n, e in topology.internal_builder.stores.items()},
        as_config({"application_id": app, "state_dir": str(tmp_path)}),
        StreamsMetrics(),
        directory,
        lambda: 0,
    )
    standby.initialize()
    listener = RecordingListener()
    reader = StoreChangelogReader(bootstrap_servers, restore_listener=listener, max_batch_records=2_000)
    try:
        reader.register(manager)
        reader.register(standby.state_manager, standby=True)
        standby_offset = lambda: standby.state_manager.checkpointed_offsets().get((rocks, 1))  # noqa: E731
        finished, steps = set(), 0
        while ACTIVE not in finished:
            finished |= reader.restore(0.05)
            steps += 1
            assert steps < 500, "the active task did not finish restoring"
            if ACTIVE not in finished:  # active restoration first: the standby got nothing yet
                assert standby_offset() is None
        assert task.stores["rocks"].get("k0000001") == "v"
        for _ in range(500):
            if standby_offset() == RECORDS - 1:
                break
            assert STANDBY not in reader.restore(0.05)  # a standby never completes
        assert standby_offset() == RECORDS - 1
        assert standby.stores["rocks"].get("k0000001") == "v"
        assert reader.standby_lags() == {STANDBY: {(rocks, 1): 0, (mem, 1): 0}}

        produce_keys(bootstrap_servers, rocks, 100, prefix="new", value=b"w", partition=1)
        for _ in range(200):
            if standby_offset() == RECORDS + 99:
                break
            reader.restore(0.05)
        assert standby_offset() == RECORDS + 99 and standby.stores["rocks"].get("new0000099") == "w"
        assert {e[1] for e in listener.events} == {(rocks, 0)}  # the listener hears of the active only
        assert reader.restore_progress() == {ACTIVE: (RECORDS, RECORDS)}
    finally:
        reader.close()
        task.close()
        standby.close()
        directory.close()


def test_should_read_true_changelog_ends_for_the_leaders_lags(bootstrap_servers, unique_name):
    from streams_runtime.processor.internals.changelog_ends import ChangelogEndOffsets

    app = unique_name("ends")
    rocks, mem = changelog(app, "rocks"), changelog(app, "mem")
    make_topics(bootstrap_servers, **{rocks: 3, mem: 3})
    produce_keys(bootstrap_servers, rocks, 5_000, value=b"v", partition=0)
    produce_keys(bootstrap_servers, rocks, 7, value=b"v", partition=1)
    produce_keys(bootstrap_servers, mem, 20, value=b"v", partition=1)
    ends = ChangelogEndOffsets(bootstrap_servers, {0: [rocks, mem]})
    try:
        tasks = [TaskId(0, p) for p in range(3)]
        # offset sums are sums of LAST offsets (as in checkpoints): caught-up replicas have lag 0
        assert ends(tasks) == {TaskId(0, 0): 4_999, TaskId(0, 1): 6 + 19, TaskId(0, 2): 0}
        produce_keys(bootstrap_servers, rocks, 10, prefix="more", value=b"v", partition=2)
        assert ends(tasks)[TaskId(0, 2)] == 9
        assert ends.last_duration_s < 1.0
    finally:
        ends.close()


def settled_end(setup, expected: int) -> None:
    """Wait for the leader's end-offset sum of task 0_0 to be ``expected`` after a commit: the
    commit returns once the coordinator logged it, and the markers, with them the last stable
    offset a read_committed ListOffsets answers, follow (Apache Kafka writes them right after)."""
    wait_until(
        lambda: setup.end_offset_sums([TaskId(0, 0)]) == {TaskId(0, 0): expected},
        10,
        lambda: f"the end past the committed transaction: {setup.end_offset_sums([TaskId(0, 0)])}",
    )


def test_should_read_the_ends_a_read_committed_restore_reaches_under_exactly_once(
    bootstrap_servers, unique_name, tmp_path
):
    """Under exactly_once_v2 the leader's probe reads like the restore consumer (read_committed): an
    open transaction's records are not part of the end, as a restore could not reach them."""
    from streams_runtime import Serdes, Stores, Topology
    from streams_runtime.config import as_config
    from streams_runtime.kafka.clients import create_producer
    from streams_runtime.processor.internals.changelog_ends import ChangelogEndOffsets
    from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
    from tests.fakes import NoOpProcessor

    app, source = unique_name("eosends"), unique_name("eosends-in")
    rocks = changelog(app, "rocks")
    make_topics(bootstrap_servers, **{source: 1})
    topology = Topology()
    topology.add_source("src", source, key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_processor("p", NoOpProcessor, "src")
    store = Stores.persistent_key_value_store("rocks")
    topology.add_state_store(Stores.key_value_store_builder(store, Serdes.String(), Serdes.String()), "p")
    config = as_config(
        {
            "application_id": app,
            "state_dir": str(tmp_path),
            "bootstrap_servers": bootstrap_servers,
            "processing_guarantee": "exactly_once_v2",
        }
    )
    setup = RuntimeSetup.prepare(topology, config, bootstrap_servers, "process-1")
    alos_config = as_config({**config.originals(), "processing_guarantee": "at_least_once"})
    alos = RuntimeSetup.prepare(topology, alos_config, bootstrap_servers, "process-2")
    producer = create_producer(bootstrap_servers, {"transactional.id": unique_name("eosends-txn")})
    uncommitted = ChangelogEndOffsets(
        bootstrap_servers, {0: [rocks]}, {"isolation.level": "read_uncommitted"}
    )
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        for i in range(5):
            producer.produce(rocks, b"v", b"k%d" % i, partition=0)
        producer.commit_transaction(30)  # offsets 0-4, the commit marker at 5
        settled_end(setup, 5)
        producer.begin_transaction()
        for i in range(3):
            producer.produce(rocks, b"v", b"open%d" % i, partition=0)
        producer.flush(30)  # offsets 6-8, in a transaction left open
        assert uncommitted([TaskId(0, 0)]) == {TaskId(0, 0): 8}, "read_uncommitted sees the open records"
        assert alos.end_offset_sums([TaskId(0, 0)]) == {TaskId(0, 0): 8}, "as an at-least-once restore"
        # Kafka: the last stable offset 6 (sum 5). Tansu answers a read_committed ListOffsets with 0
        # while a transaction is open; the bound is then its read_uncommitted latest, 7
        # (docs/decisions/0001-embedded-broker.md).
        eos_end = setup.end_offset_sums([TaskId(0, 0)])[TaskId(0, 0)]
        assert eos_end in (5, 6), f"under exactly-once the end stops at the open transaction, got {eos_end}"
        producer.commit_transaction(30)
        settled_end(setup, 9)
        assert uncommitted([TaskId(0, 0)]) == {TaskId(0, 0): 9}
    finally:
        uncommitted.close()
        setup.close()
        alos.close()
