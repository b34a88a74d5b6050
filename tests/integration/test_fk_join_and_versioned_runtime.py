"""Foreign-key joins and versioned tables on the runtime, against the embedded broker.

* an FK join (orders on 4 partitions joined with customers on 2): the subscription and response
  topics and the subscription store's changelog are created with the partition counts Kafka
  would give them, results are correct, and after a restart on a fresh state directory (state
  restored from the changelogs) a customer update still reaches every subscribed order;
* an FK join materialized as a queryable store on two clients with one standby: the owner of a
  key answers it, the other client answers it from its standby (stale reads), updates included;
* a table on a versioned store: interactive queries for the latest value and as of a past
  timestamp, the same answers after a restart that restores the versions from the changelog.
"""

from __future__ import annotations

from streams_runtime import (
    Consumed,
    KafkaStreams,
    Materialized,
    Produced,
    Serdes,
    Stores,
    StreamsBuilder,
    TableJoined,
)
from streams_runtime.kafka.clients import create_admin, partition_counts
from tests.integration.streams_support import (
    latest_until,
    make_topics,
    produce,
    streams_config,
    wait_running,
    wait_until,
)
from tests.ports import free_port

ORDERS = 40


def _fk_topology(orders: str, customers: str, sink: str):
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()
    order_table = builder.table(orders, strings, Materialized.as_("orders"))
    customer_table = builder.table(customers, strings, Materialized.as_("customers"))
    order_table.join(
        customer_table,
        lambda order: order.split(":")[0],
        lambda order, customer: f"{order}/{customer}",
        TableJoined.as_("by-customer"),
    ).to_stream().to(sink, Produced.with_(Serdes.String(), Serdes.String()))
    return builder.build()


def _decode(msg):
    return msg.key().decode(), None if msg.value() is None else msg.value().decode()


def _expected(customer_names: dict[str, str]) -> dict[str, str]:
    return {f"o{i}": f"c{i % 5}:item{i}/{customer_names[f'c{i % 5}']}" for i in range(ORDERS)}


def test_fk_join_creates_its_topics_joins_and_restores_after_a_restart(
    bootstrap_servers, unique_name, tmp_path
):
    orders, customers, sink, app = (unique_name(n) for n in ("orders", "customers", "enriched", "fkjoin"))
    make_topics(bootstrap_servers, **{orders: 4, customers: 2, sink: 4})
    names = {f"c{c}": f"name{c}" for c in range(5)}
    produce(
        bootstrap_servers, customers, ((k.encode(), v.encode()) for k, v in names.items()), timestamp=1_000
    )
    produce(
        bootstrap_servers,
        orders,
        ((f"o{i}".encode(), f"c{i % 5}:item{i}".encode()) for i in range(ORDERS)),
        timestamp=2_000,
    )
    client = KafkaStreams(
        _fk_topology(orders, customers, sink), streams_config(bootstrap_servers, app, tmp_path / "a")
    )
    try:
        client.start()
        wait_running(client, timeout=45)
        got = latest_until(bootstrap_servers, sink, 4, _decode, lambda latest: latest == _expected(names))
        assert got == _expected(names)
    finally:
        client.close(timeout=30)
    counts = partition_counts(
        create_admin(bootstrap_servers),
        [
            f"{app}-by-customer-subscription-registration-topic",
            f"{app}-by-customer-subscription-response-topic",
            f"{app}-by-customer-subscription-store-changelog",
        ],
    )
    assert counts == {
        f"{app}-by-customer-subscription-registration-topic": 2,
        f"{app}-by-customer-subscription-response-topic": 4,
        f"{app}-by-customer-subscription-store-changelog": 2,
    }
    # restart on an empty state directory: the subscription store must come back from its changelog
    restarted = KafkaStreams(
        _fk_topology(orders, customers, sink), streams_config(bootstrap_servers, app, tmp_path / "b")
    )
    try:
        restarted.start()
        wait_running(restarted, timeout=45)
        names["c3"] = "renamed3"
        produce(bootstrap_servers, customers, [(b"c3", b"renamed3")], timestamp=3_000)
        got = latest_until(bootstrap_servers, sink, 4, _decode, lambda latest: latest == _expected(names))
        assert got == _expected(names)
    finally:
        restarted.close(timeout=30)


def _versioned_topology(prices: str, sink: str):
    builder = StreamsBuilder()
    supplier = Stores.persistent_versioned_key_value_store("prices", 60_000)
    builder.table(
        prices, Consumed.with_(Serdes.String(), Serdes.String()), Materialized.as_(supplier)
    ).to_stream().to(sink, Produced.with_(Serdes.String(), Serdes.String()))
    return builder.build()


def _query(client, key, as_of=None):
    view = client.store("prices")
    found = view.get(key) if as_of is None else view.get(key, as_of)
    return None if found is None else (found.value, found.timestamp, found.valid_to)


def test_versioned_table_answers_as_of_queries_and_restores_its_history(
    bootstrap_servers, unique_name, tmp_path
):
    prices, sink, app = (unique_name(n) for n in ("prices", "price-updates", "versioned"))
    make_topics(bootstrap_servers, **{prices: 2, sink: 2})
    for value, ts in (("10", 1_000), ("12", 2_000), ("11", 1_500), ("15", 3_000)):  # 11 arrives out of order
        produce(bootstrap_servers, prices, [(b"apple", value.encode())], timestamp=ts)
    produce(bootstrap_servers, prices, [(b"pear", b"7")], timestamp=2_500)
    expected = {
        ("apple", None): ("15", 3_000, None),
        ("apple", 1_700): ("11", 1_500, 2_000),
        ("apple", 999): None,
        ("apple", 2_999): ("12", 2_000, 3_000),
        ("pear", 2_000): None,
        ("pear", None): ("7", 2_500, None),
    }
    # b: a fresh state directory (the versions come from the changelog); a again: the RocksDB files
    for state in ("a", "b", "a"):
        client = KafkaStreams(
            _versioned_topology(prices, sink), streams_config(bootstrap_servers, app, tmp_path / state)
        )
        try:
            client.start()
            wait_running(client, timeout=45)
            wait_until(lambda: _query(client, "pear") is not None, 30, "the table to catch up")  # noqa: B023
            answers = {(key, ts): _query(client, key, ts) for key, ts in expected}
            history = [(r.value, r.timestamp, r.valid_to) for r in client.store("prices").versions("apple")]
        finally:
            client.close(timeout=30)
        assert answers == expected, state
        assert history == [
            ("15", 3_000, None),
            ("12", 2_000, 3_000),
            ("11", 1_500, 2_000),
            ("10", 1_000, 1_500),
        ]


def test_versioned_table_standby_answers_stale_as_of_queries(bootstrap_servers, unique_name, tmp_path):
    """Two clients, one partition, one standby: the client holding the standby answers as-of
    queries with ``allow_stale`` from the versions it replicated from the changelog."""
    prices, sink, app = (unique_name(n) for n in ("prices", "price-updates", "versioned-standby"))
    make_topics(bootstrap_servers, **{prices: 1, sink: 1})
    for value, ts in (("10", 1_000), ("12", 2_000), ("11", 1_500)):
        produce(bootstrap_servers, prices, [(b"apple", value.encode())], timestamp=ts)
    clients = [
        KafkaStreams(
            _versioned_topology(prices, sink),
            streams_config(bootstrap_servers, app, tmp_path / f"i{i}", num_standby_replicas=1),
        )
        for i in range(2)
    ]

    def standby_holder():
        for client in clients:
            if any(t.standby_tasks for t in client.metadata_for_local_threads()):
                return client
        return None

    def stale_answer(client):
        view = client.store("prices", allow_stale=True)
        try:
            found = view.get("apple", 1_700)
        except Exception:  # noqa: BLE001 - not yet replicated or still assigning
            return None
        return None if found is None else (found.value, found.timestamp, found.valid_to)

    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=60)
        wait_until(lambda: standby_holder() is not None, 60, "a standby task to be assigned")
        holder = standby_holder()
        wait_until(
            lambda: stale_answer(holder) == ("11", 1_500, 2_000), 60, lambda: f"{stale_answer(holder)}"
        )
        assert not any(t.active_tasks for t in holder.metadata_for_local_threads())
    finally:
        for client in clients:
            client.close(timeout=30)


def _grace_topology(payments: str, customers: str, sink: str):
    from streams_runtime import Joined

    strings = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()
    table = builder.table(
        customers,
        strings,
        Materialized.as_(Stores.persistent_versioned_key_value_store("customers", 600_000)),
    )
    joined = Joined.with_(Serdes.String(), Serdes.String(), Serdes.String(), "pay").with_grace_period(60_000)
    builder.stream(payments, strings).join(table, lambda p, c: f"{p}/{c}", joined).to(
        sink, Produced.with_(Serdes.String(), Serdes.String())
    )
    return builder.build()


def test_grace_buffer_survives_a_restart(bootstrap_servers, unique_name, tmp_path):
    """Stream records held by the grace-period buffer are restored from its changelog after a
    restart on a fresh state directory (the input offsets are committed past them, so only the
    restored buffer can produce them), then joined with the table version at their timestamp."""
    from tests.integration.streams_support import count_to_end, read_all

    payments, customers, sink, app = (unique_name(n) for n in ("payments", "customers", "paid", "grace"))
    make_topics(bootstrap_servers, **{payments: 1, customers: 1, sink: 1})
    produce(bootstrap_servers, customers, [(b"c1", b"Ada")], timestamp=1_000)
    produce(bootstrap_servers, customers, [(b"c1", b"Ada Lovelace")], timestamp=5_000)
    produce(bootstrap_servers, payments, [(b"c1", f"p{i}".encode()) for i in range(3)], timestamp=2_000)
    client = KafkaStreams(
        _grace_topology(payments, customers, sink), streams_config(bootstrap_servers, app, tmp_path / "a")
    )
    try:
        client.start()
        wait_running(client, timeout=45)
        buffered = f"{app}-pay-Buffer-changelog"
        # the three payments (and the stream time) are in the buffer's changelog: processed, held back
        wait_until(lambda: count_to_end(bootstrap_servers, buffered, 1) >= 4, 30, "the buffered payments")
        assert count_to_end(bootstrap_servers, sink, 1) == 0
    finally:
        client.close(timeout=30)
    restarted = KafkaStreams(
        _grace_topology(payments, customers, sink), streams_config(bootstrap_servers, app, tmp_path / "b")
    )
    try:
        restarted.start()
        wait_running(restarted, timeout=45)
        produce(
            bootstrap_servers, payments, [(b"c1", b"late-enough")], timestamp=100_000
        )  # advances stream time
        out = read_all(bootstrap_servers, sink, 1, 3)
    finally:
        restarted.close(timeout=30)
    assert sorted(m.value().decode() for m in out) == ["p0/Ada", "p1/Ada", "p2/Ada"]


def _crc_partition(text: str) -> int:
    """Not the default partitioner: "ID123" goes to partition 0 here, to 3 by murmur2, so a join
    that ignored TableJoined's partitioners would look the foreign row up on the wrong partition."""
    import zlib

    return (zlib.crc32(text.encode()) + 1) % 4


def _key_b(key: str) -> str:
    return key.split("-")[0]


def _custom_partitioner_topology(table1: str, table2: str, output: str):
    from streams_runtime import Repartitioned

    strings = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()

    def repartitioned(name, partition_of):
        return (
            Repartitioned.as_(name)
            .with_key_serde(Serdes.String())
            .with_value_serde(Serdes.String())
            .with_stream_partitioner(lambda topic, key, value: partition_of(key))
            .with_number_of_partitions(4)
        )

    a = builder.stream(table1, strings).repartition(repartitioned("a", lambda k: _crc_partition(_key_b(k))))
    b = builder.stream(table2, strings).repartition(repartitioned("b", _crc_partition))
    joined = TableJoined.with_(
        lambda topic, key, value: _crc_partition(_key_b(key)),  # how the left table is partitioned
        lambda topic, key, value: _crc_partition(key),  # how the foreign table is partitioned
    )
    a.to_table(name="table.a").join(
        b.to_table(name="table.b"),
        _key_b,
        lambda v1, v2: f"value1={v1},value2={v2}",
        joined,
        Materialized.as_("INNER-store1")
        .with_key_serde(Serdes.String())
        .with_value_serde(Serdes.String())
        .with_caching_disabled(),
    ).to_stream().to(output, Produced.with_(Serdes.String(), Serdes.String()))
    return builder.build()


def test_fk_join_with_custom_partitioners_across_instances(bootstrap_servers, unique_name, tmp_path):
    """Mirrors KTableKTableForeignKeyInnerJoinCustomPartitionerIntegrationTest
    .shouldInnerJoinMultiPartitionQueryable: both tables are repartitioned by the foreign-key part
    of their key with a custom partitioner; TableJoined tells the join how, so subscriptions and
    responses reach the right partitions.
    (The Java test's partitioners hash with String.hashCode; here with crc32 + 1, 4 partitions.)"""
    table1, table2, output, app = (unique_name(n) for n in ("table1", "table2", "output", "fk-partitioner"))
    make_topics(bootstrap_servers, **{table1: 4, table2: 4, output: 4})
    produce(bootstrap_servers, table1, [(f"ID123-{i}".encode(), f"ID123-A{i}".encode()) for i in range(1, 5)])
    produce(bootstrap_servers, table2, [(b"ID123", b"BBB")])
    clients = [
        KafkaStreams(
            _custom_partitioner_topology(table1, table2, output),
            streams_config(bootstrap_servers, app, tmp_path / f"i{i}", statestore_cache_max_bytes=0),
        )
        for i in range(2)
    ]
    expected = {f"ID123-{i}": f"value1=ID123-A{i},value2=BBB" for i in range(1, 5)}
    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=60)
        got = latest_until(
            bootstrap_servers, output, 4, _decode, lambda latest: latest == expected, timeout=60
        )
    finally:
        for client in clients:
            client.close(timeout=30)
    assert got == expected


def _fk_queryable_topology(orders: str, customers: str):
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()
    order_table = builder.table(orders, strings, Materialized.as_("orders"))
    customer_table = builder.table(customers, strings, Materialized.as_("customers"))
    order_table.join(
        customer_table,
        lambda order: order.split(":")[0],
        lambda order, customer: f"{order}/{customer}",
        TableJoined.as_("by-customer"),
        # serdes given: the joined value's type is unknown and no default_value_serde is set
        Materialized.as_("fk-result").with_key_serde(Serdes.String()).with_value_serde(Serdes.String()),
    )
    return builder.build()


def test_fk_join_result_is_queryable_and_mirrored_by_a_standby(bootstrap_servers, unique_name, tmp_path):
    """The FK join's materialized result on two clients with one standby each: the owner of a key
    answers it through ``store("fk-result")``, the other client (which does not own it) answers
    the same joined value from its standby with ``allow_stale``, and a customer update reaches both."""
    from streams_runtime.query import partition_for

    orders, customers, app = (unique_name(n) for n in ("orders", "customers", "fk-standby"))
    make_topics(bootstrap_servers, **{orders: 2, customers: 2})
    names = {f"c{c}": f"name{c}" for c in range(3)}
    produce(
        bootstrap_servers, customers, ((k.encode(), v.encode()) for k, v in names.items()), timestamp=1_000
    )
    produce(
        bootstrap_servers,
        orders,
        ((f"o{i}".encode(), f"c{i % 3}:item{i}".encode()) for i in range(10)),
        timestamp=2_000,
    )
    endpoints = [f"127.0.0.1:{free_port()}" for _ in range(2)]
    clients = [
        KafkaStreams(
            _fk_queryable_topology(orders, customers),
            streams_config(
                bootstrap_servers,
                app,
                tmp_path / f"i{i}",
                num_standby_replicas=1,
                application_server=endpoint,
            ),
        )
        for i, endpoint in enumerate(endpoints)
    ]
    keys = [f"o{i}" for i in range(10)]

    def expected() -> dict[str, str]:
        return {f"o{i}": f"c{i % 3}:item{i}/{names[f'c{i % 3}']}" for i in range(10)}

    def settled() -> bool:  # 4 tasks (2 sub-topologies x 2 partitions): 2 active + 2 standby each
        counts = [
            (
                sum(len(t.active_tasks) for t in c.metadata_for_local_threads()),
                sum(len(t.standby_tasks) for t in c.metadata_for_local_threads()),
            )
            for c in clients
        ]
        if counts != [(2, 2), (2, 2)]:
            return False
        # and every client has applied the assignment that placed them: a client can hold the same
        # tasks under the previous generation, whose host maps leave a handed-off partition unowned
        for client in clients:
            for key in keys:
                meta = client.query_metadata_for_key("fk-result", key)
                if meta.active_host is None or len(meta.standby_hosts) != 1:
                    return False
        return True

    def answers(read) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for key in keys:
            try:
                found = read(key)
            except Exception:  # noqa: BLE001 - still assigning or not replicated yet
                found = None
            out[key] = None if found is None else found.value
        return out

    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=60)
        wait_until(settled, 60, "2 active and 2 standby tasks on each client")
        owner_of: dict[str, KafkaStreams] = {}
        other_of: dict[str, KafkaStreams] = {}
        for key in keys:
            meta = clients[0].query_metadata_for_key("fk-result", key)
            assert meta.partition == partition_for(key.encode(), 2)
            owner = endpoints.index(str(meta.active_host))
            assert {str(h) for h in meta.standby_hosts} == {endpoints[1 - owner]}
            owner_of[key], other_of[key] = clients[owner], clients[1 - owner]
        assert {id(c) for c in owner_of.values()} == {id(c) for c in clients}  # each owns some keys

        def active() -> dict[str, str | None]:
            return answers(lambda k: owner_of[k].store("fk-result").get(k))

        def stale() -> dict[str, str | None]:
            return answers(lambda k: other_of[k].store("fk-result", allow_stale=True).get(k))

        wait_until(lambda: active() == expected(), 30, lambda: f"the owners' answers {active()}")
        wait_until(lambda: stale() == expected(), 30, lambda: f"the standbys' answers {stale()}")
        # without allow_stale the non-owner refuses: the stale answers really came from its standby
        assert answers(lambda k: other_of[k].store("fk-result").get(k)) == dict.fromkeys(keys)

        names["c1"] = "renamed1"
        produce(bootstrap_servers, customers, [(b"c1", b"renamed1")], timestamp=3_000)
        wait_until(lambda: active() == expected(), 30, lambda: f"the owners' answers {active()}")
        wait_until(lambda: stale() == expected(), 30, lambda: f"the standbys' answers {stale()}")
    finally:
        for client in clients:
            client.close(timeout=30)
