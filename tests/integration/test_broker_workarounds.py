"""The embedded-broker workarounds are on on Tansu and off on Apache Kafka, decided by what the
broker says it is (its cluster id), never by its address: both brokers run on loopback here.

One test per workaround, each on both brokers: the broker's identity, the transaction-end gate,
the changelog end probe of restores (and of the leader's lag computation), the aborted-record
filter of exactly-once restores, and the repartition gap guard.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from streams_runtime import Consumed, Grouped, Produced, Serdes, StreamsBuilder, StreamsConfig
from streams_runtime.brokers.tansu.gap_guard import RepartitionGapGuard
from streams_runtime.kafka import offsets
from streams_runtime.kafka.broker_identity import identify_broker
from streams_runtime.kafka.clients import create_admin, create_producer
from streams_runtime.processor.internals import changelog_ends
from streams_runtime.processor.internals.changelog_ends import ChangelogEndOffsets
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.record_collector import StreamsProducer
from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
from streams_runtime.processor.task_id import TaskId
from tests.integration.streams_support import make_topics

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

ON_TANSU = {"tansu": True, "kafka": False}


def test_the_broker_says_what_it_is(broker_kind: str, bootstrap_servers: str) -> None:
    identity = identify_broker(create_admin(bootstrap_servers))
    assert bootstrap_servers.startswith("127.0.0.1:")  # both on loopback: the address decides nothing
    assert identity.is_tansu is ON_TANSU[broker_kind]
    if broker_kind == "kafka":
        assert len(identity.cluster_id) == 22  # the storage tool's random id


def test_the_transaction_end_gate_is_on_only_on_tansu(broker_kind: str, bootstrap_servers: str) -> None:
    producer = StreamsProducer(
        bootstrap_servers,
        "gate-probe",
        {"transactional.id": f"gate-{uuid.uuid4().hex[:8]}"},
        lambda err, msg: None,
        True,
    )
    try:
        producer.init_transactions(30)
        assert producer.end_txn_gate.enabled is ON_TANSU[broker_kind]
    finally:
        producer.close(5)


class _SpyConsumer:
    """A restore consumer that records its assignments: the probe is one before the seek to the
    restore's start; a ListOffsets start assigns the seek only."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.assigned: list[tuple[str, int, int]] = []

    def incremental_assign(self, partitions: list[Any]) -> None:
        self.assigned.extend((p.topic, p.partition, p.offset) for p in partitions)
        self._inner.incremental_assign(partitions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _SpySupplier:
    def __init__(self) -> None:
        self.consumers: list[_SpyConsumer] = []
        self.aborted_filters = 0

    def get_restore_consumer(self, bootstrap_servers: str, overrides: Any = None) -> Any:
        spy = _SpyConsumer(DEFAULT_CLIENT_SUPPLIER.get_restore_consumer(bootstrap_servers, overrides))
        self.consumers.append(spy)
        return spy

    def get_aborted_filter(self, bootstrap_servers: str) -> Any:
        self.aborted_filters += 1
        return DEFAULT_CLIENT_SUPPLIER.get_aborted_filter(bootstrap_servers)

    def __getattr__(self, name: str) -> Any:
        return getattr(DEFAULT_CLIENT_SUPPLIER, name)


class _Meta:
    """One store's changelog as the reader sees it: no local state, records collected."""

    def __init__(self, name: str, into: list[Any]) -> None:
        self.name = name
        self.offset: int | None = None
        self.timestamped = False
        self.restore_callback = lambda records, last: into.extend(records)


class _Manager:
    """The least a task's state manager offers the reader: one changelog, nothing local."""

    def __init__(self, changelog: str) -> None:
        self.task_id = TaskId(0, 0)
        self.changelog = changelog
        self.records: list[Any] = []

    def changelog_metadata(self) -> dict[tuple[str, int], _Meta]:
        return {(self.changelog, 0): _Meta("store", self.records)}

    def restored(self, tp: Any, last: int) -> None:
        pass

    def checkpoint(self) -> None:
        pass


@pytest.mark.parametrize("exactly_once", [False, True])
def test_restores_take_listoffsets_as_the_end_on_kafka_and_probe_it_on_tansu(
    broker_kind: str, bootstrap_servers: str, unique_name: Any, exactly_once: bool
) -> None:
    changelog = unique_name("store-changelog")
    make_topics(bootstrap_servers, **{changelog: 1})
    producer = create_producer(bootstrap_servers)
    for i in range(30):
        producer.produce(changelog, b"v%d" % i, b"k%d" % i, 0)
    assert producer.flush(10) == 0
    supplier = _SpySupplier()
    reader = StoreChangelogReader(
        bootstrap_servers,
        skip_aborted=exactly_once,
        client_supplier=supplier,  # type: ignore[arg-type]
        consumer_overrides={"isolation.level": "read_committed" if exactly_once else "read_uncommitted"},
    )
    manager = _Manager(changelog)
    try:
        reader.register(manager)  # type: ignore[arg-type]
        for _ in range(100):
            if reader.restore(0.2):
                break
        assert len(manager.records) == 30  # restored either way
        (consumer,) = supplier.consumers
        if ON_TANSU[broker_kind]:
            assert len(consumer.assigned) == 2, consumer.assigned  # the probe, then the seek
            assert supplier.aborted_filters == (1 if exactly_once else 0)
        else:
            assert consumer.assigned == [(changelog, 0, 0)]  # the seek to restore from 0 only
            assert supplier.aborted_filters == 0  # the consumer leaves aborted records out itself
    finally:
        reader.close()


def test_the_leaders_changelog_ends_read_to_the_end_on_tansu_only(
    broker_kind: str, bootstrap_servers: str, unique_name: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    changelog = unique_name("lag-changelog")
    make_topics(bootstrap_servers, **{changelog: 1})
    producer = create_producer(bootstrap_servers)
    for i in range(12):
        producer.produce(changelog, b"v", b"k%d" % i, 0)
    assert producer.flush(10) == 0
    reads: list[Any] = []

    def counting_read_to_end(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[1])
        return offsets.read_to_end(*args, **kwargs)

    monkeypatch.setattr(changelog_ends, "read_to_end", counting_read_to_end)
    ends = ChangelogEndOffsets(bootstrap_servers, {0: [changelog]}, timeout_s=10.0)
    try:
        assert ends([TaskId(0, 0)]) == {TaskId(0, 0): 11}  # the last record's offset
    finally:
        ends.close()
    assert bool(reads) is ON_TANSU[broker_kind]


def test_the_repartition_gap_guard_exists_on_tansu_only(
    broker_kind: str, bootstrap_servers: str, unique_name: Any, tmp_path: Any
) -> None:
    source, sink, app = unique_name("words"), unique_name("counts-out"), unique_name("guard-app")
    make_topics(bootstrap_servers, **{source: 2, sink: 2})
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by(lambda k, v: v, Grouped.with_(Serdes.String(), Serdes.String(), name="by-word"))
        .count()
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    config = StreamsConfig(
        {"application_id": app, "bootstrap_servers": bootstrap_servers, "state_dir": str(tmp_path)}
    )
    setup = RuntimeSetup.prepare(builder.build({"application_id": app}), config, bootstrap_servers, "p1")
    try:
        assert setup.broker.is_tansu is ON_TANSU[broker_kind]
        guard = RepartitionGapGuard.for_runtime(setup, {}, None)
        assert (guard is not None) is ON_TANSU[broker_kind]
    finally:
        setup.close()
