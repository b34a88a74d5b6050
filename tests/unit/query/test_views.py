"""Read-only views over local replicas: the owner answers, others raise the clear error."""

from __future__ import annotations

import pytest

from streams_runtime.errors import (
    InvalidStateStoreError,
    InvalidStateStorePartitionError,
    StateStoreMigratedError,
    StreamsNotStartedError,
    UnknownStateStoreError,
)
from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.query import HostInfo, LagInfo
from streams_runtime.state.interfaces import KeyValue
from tests.unit.query.fakes import PARTITIONS, STORE, FakeClient, FakeThread, partition_of

KEYS = [f"k{i}" for i in range(40)]


def _by_partition() -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {p: {} for p in range(PARTITIONS)}
    for i, key in enumerate(KEYS):
        out[partition_of(key)][key] = i
    return out


@pytest.fixture
def client():
    data = _by_partition()
    one, two = FakeThread("t1"), FakeThread("t2")
    one.host(0, data[0])
    two.host(1, data[1])
    two.host(2, data[2], restoring=True)
    return FakeClient([one, two])


def test_should_answer_keys_of_local_running_partitions_under_the_owner_lock(client):
    view = client.interactive_queries.store(STORE)
    for i, key in enumerate(KEYS):
        if partition_of(key) in (0, 1):
            assert view.get(key) == i
    stores = [
        t.task_manager.tasks[task].stores[STORE] for t in client.threads for task in t.task_manager.tasks
    ]
    assert all(s.reads_unlocked == 0 for s in stores)


def test_should_raise_not_hosted_for_a_partition_owned_elsewhere(client):
    key = next(k for k in KEYS if partition_of(k) == 3)
    with pytest.raises(
        InvalidStateStorePartitionError, match=r"store counts partition 3 is not hosted on this"
    ):
        client.interactive_queries.store(STORE).get(key)


def test_should_raise_migrating_for_a_restoring_partition_never_a_value(client):
    key = next(k for k in KEYS if partition_of(k) == 2)
    with pytest.raises(StateStoreMigratedError, match=r"partition 2 is migrating \(restoring\)"):
        client.interactive_queries.store(STORE).get(key)


def test_should_scan_local_partitions_and_refuse_when_one_restores(client):
    with pytest.raises(StateStoreMigratedError):
        client.interactive_queries.store(STORE).all()
    data = _by_partition()
    view = client.interactive_queries.store(STORE, partition=1)
    assert view.all() == sorted(KeyValue(k, v) for k, v in data[1].items())
    assert view.approximate_num_entries() == len(data[1])


def test_should_limit_a_view_to_its_partition(client):
    key = next(k for k in KEYS if partition_of(k) == 0)
    with pytest.raises(InvalidStateStorePartitionError, match="this view reads partition 1 only"):
        client.interactive_queries.store(STORE, partition=1).get(key)
    with pytest.raises(InvalidStateStorePartitionError, match="partitions 0..3"):
        client.interactive_queries.store(STORE, partition=9)


def test_should_read_a_standby_only_when_stale_reads_are_allowed():
    thread = FakeThread("t1")
    key = next(k for k in KEYS if partition_of(k) == 3)
    thread.host_standby(3, {key: 99})
    client = FakeClient([thread])
    with pytest.raises(InvalidStateStorePartitionError, match="allow_stale also reads standbys"):
        client.interactive_queries.store(STORE).get(key)
    assert client.interactive_queries.store(STORE, allow_stale=True).get(key) == 99


def test_should_name_unknown_stores_and_a_stopped_client():
    client = FakeClient([FakeThread("t1")])
    with pytest.raises(UnknownStateStoreError, match="store nope is not a store of this topology"):
        client.interactive_queries.store("nope")
    stopped = FakeClient([FakeThread("t1")], state="NOT_RUNNING")
    with pytest.raises(StreamsNotStartedError, match="not running"):
        stopped.interactive_queries.store(STORE)
    assert issubclass(StreamsNotStartedError, InvalidStateStoreError)


def test_should_find_the_active_and_standby_hosts_of_a_key():
    key = KEYS[5]
    p = partition_of(key)
    assignment = AssignmentInfo(
        partitions_by_host={
            "a:1": frozenset({SourcePartition("input", p)}),
            "b:2": frozenset({SourcePartition("input", (p + 1) % PARTITIONS)}),
        },
        standby_partitions_by_host={"b:2": frozenset({SourcePartition("input", p)})},
    )
    client = FakeClient([FakeThread("t1", assignment)])
    meta = client.query_metadata_for_key(STORE, key)
    assert meta.partition == p
    assert meta.active_host == HostInfo("a", 1)
    assert meta.standby_hosts == frozenset({HostInfo("b", 2)})
    hosts = {str(m.host_info) for m in client.all_metadata_for_store(STORE)}
    assert hosts == {"a:1", "b:2"}


def test_should_report_a_migrating_partition_without_an_active_host():
    client = FakeClient([FakeThread("t1", AssignmentInfo(partitions_by_host={"a:1": frozenset()}))])
    assert client.query_metadata_for_key(STORE, "k1").active_host is None


def test_should_report_local_lags_of_running_and_standby_replicas():
    thread = FakeThread("t1")
    thread.host(0, {})
    thread.host_standby(3, {})
    lags = FakeClient([thread]).all_local_store_partition_lags()
    assert lags[STORE][0] == LagInfo(42, 42, 0)
    assert lags[STORE][3].offset_lag == 7
