"""GlobalKTable on the runtime: the GlobalStreamThread restores the global store to the end of its
topic before any stream record is processed, keeps it updated afterwards, and a restart resumes
from the global checkpoint instead of re-reading the topic."""

from __future__ import annotations

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import (
    count_to_end,
    make_topics,
    produce,
    read_all,
    streams_config,
    wait_running,
    wait_until,
)

S = Serdes.String
STORE = "users-global"


def enrich(orders: str, users: str, sink: str):
    builder = StreamsBuilder()
    table = builder.global_table(users, Consumed.with_(S(), S()), Materialized.as_(STORE))
    (builder.stream(orders, Consumed.with_(S(), S()))
        .join(table, lambda key, value: value.split("|")[0], lambda order, user: f"{order}@{user}")
        .to(sink, Produced.with_(S(), S())))
    return builder.build()


def _orders(ids_and_users):
    return ((f"o{i}".encode(), f"{user}|o{i}".encode()) for i, user in ids_and_users)


def _values(messages):
    return sorted(m.value().decode() for m in messages)


def test_should_join_a_stream_with_a_global_table_restored_before_processing_and_updated(
        bootstrap_servers, unique_name, tmp_path):
    orders, users, sink, app = (unique_name(n) for n in ("orders", "users", "enriched", "global"))
    make_topics(bootstrap_servers, **{orders: 2, users: 1, sink: 2})
    produce(bootstrap_servers, users, ((f"u{i}".encode(), f"name{i}".encode()) for i in range(10)),
            timestamp=1_000)
    first = [(i, f"u{i % 10}") for i in range(20)]
    # produced before start: the very first stream records must already see the users
    produce(bootstrap_servers, orders, _orders(first), timestamp=2_000)
    config = streams_config(bootstrap_servers, app, tmp_path / "state")

    client = KafkaStreams(enrich(orders, users, sink), config)
    try:
        client.start()  # returns once the global store is current
        store = client.global_store(STORE)
        assert all(store.get(f"u{i}") is not None for i in range(10))
        wait_running(client, timeout=30)
        out = read_all(bootstrap_servers, sink, 2, 20)
        assert _values(out) == sorted(f"u{i % 10}|o{i}@name{i % 10}" for i in range(20))

        # a global update after start: later stream records see it
        produce(bootstrap_servers, users, [(b"u0", b"renamed0"), (b"u99", b"new99")], timestamp=3_000)
        wait_until(lambda: store.get("u99") is not None, 20, "the global update u99 in the global store")
        produce(bootstrap_servers, orders, _orders([(100, "u0"), (101, "u99"), (102, "u5")]), timestamp=4_000)
        out = read_all(bootstrap_servers, sink, 2, 23)
        assert {"u0|o100@renamed0", "u99|o101@new99", "u5|o102@name5"} <= set(_values(out))
    finally:
        assert client.close(timeout=30)

    # restart: the global store resumes from its checkpoint (only the record written meanwhile is read)
    produce(bootstrap_servers, users, [(b"u1", b"later1")], timestamp=5_000)
    assert (tmp_path / "state" / app / "global" / ".checkpoint").is_file()
    client = KafkaStreams(enrich(orders, users, sink), config)
    try:
        client.start()
        assert client._global_thread.restored == 1  # noqa: SLF001 (records restored at start)
        produce(bootstrap_servers, orders, _orders([(200, "u1")]), timestamp=6_000)
        wait_running(client, timeout=30)
        out = read_all(bootstrap_servers, sink, 2, 24)
        assert "u1|o200@later1" in _values(out)
        assert count_to_end(bootstrap_servers, sink, 2) == 24  # the first run's input was not processed again
    finally:
        assert client.close(timeout=30)
