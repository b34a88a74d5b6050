"""GlobalKTable on the runtime: the GlobalStreamThread restores the global store to the end of its
topic before any stream record is processed, keeps it updated afterwards, and a restart resumes
from the global checkpoint instead of re-reading the topic. Under ``dead_letter`` a corrupt global
record, met while restoring or afterwards, lands in the dead-letter topic as a stream task writes
it, and the client keeps running."""

from __future__ import annotations

import struct

from streams_runtime import (
    Consumed,
    KafkaStreams,
    KafkaStreamsState,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from streams_runtime.kafka.clients import create_producer
from streams_runtime.state.stores import Stores
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
    (
        builder.stream(orders, Consumed.with_(S(), S()))
        .join(table, lambda key, value: value.split("|")[0], lambda order, user: f"{order}@{user}")
        .to(sink, Produced.with_(S(), S()))
    )
    return builder.build()


def _orders(ids_and_users):
    return ((f"o{i}".encode(), f"{user}|o{i}".encode()) for i, user in ids_and_users)


def _values(messages):
    return sorted(m.value().decode() for m in messages)


def test_should_join_a_stream_with_a_global_table_restored_before_processing_and_updated(
    bootstrap_servers, unique_name, tmp_path
):
    orders, users, sink, app = (unique_name(n) for n in ("orders", "users", "enriched", "global"))
    make_topics(bootstrap_servers, **{orders: 2, users: 1, sink: 2})
    produce(
        bootstrap_servers,
        users,
        ((f"u{i}".encode(), f"name{i}".encode()) for i in range(10)),
        timestamp=1_000,
    )
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


def _scores_enrich(orders: str, scores: str, sink: str, *, in_memory: bool = False):
    builder = StreamsBuilder()
    store = Stores.in_memory_key_value_store(STORE) if in_memory else STORE
    table = builder.global_table(scores, Consumed.with_(S(), Serdes.Integer()), Materialized.as_(store))
    (
        builder.stream(orders, Consumed.with_(S(), S()))
        .join(table, lambda key, value: value, lambda order, score: f"{order}={score}")
        .to(sink, Produced.with_(S(), S()))
    )
    return builder.build()


def _produce_scores(bootstrap: str, topic: str, records, timestamp: int) -> None:
    """(key, value bytes, headers) records, in order, to partition 0."""
    producer = create_producer(bootstrap)
    for key, value, headers in records:
        producer.produce(topic, value, key, 0, timestamp=timestamp, headers=headers)
    assert producer.flush(30) == 0


def _good(i: int):
    return (f"u{i}".encode(), struct.pack(">i", i * 10), None)


def test_should_send_corrupt_global_records_to_the_dead_letter_topic_while_restoring_and_running(
    bootstrap_servers, unique_name, tmp_path
):
    orders, scores, sink, dlq, app = (unique_name(n) for n in ("orders", "scores", "out", "dlq", "gdlq"))
    make_topics(bootstrap_servers, **{orders: 1, scores: 1, sink: 1, dlq: 1})
    # offsets 0-4 good, 5 corrupt (read by the start-up restore), 6-10 good
    _produce_scores(
        bootstrap_servers,
        scores,
        [
            *(_good(i) for i in range(5)),
            (b"bad1", b"xx", [("origin", b"restore")]),
            *(_good(i) for i in range(5, 10)),
        ],
        timestamp=1_000,
    )
    config = streams_config(
        bootstrap_servers,
        app,
        tmp_path / "state",
        default_deserialization_exception_handler="dead_letter",
        dead_letter_topic=dlq,
    )
    client = KafkaStreams(_scores_enrich(orders, scores, sink), config)
    try:
        client.start()  # the restore met the corrupt record and went on
        store = client.global_store(STORE)
        assert [store.get(f"u{i}").value for i in range(10)] == [i * 10 for i in range(10)]  # timestamped
        wait_running(client, timeout=30)
        # offset 11 corrupt (read by the running global thread), 12 good
        _produce_scores(
            bootstrap_servers, scores, [(b"bad2", b"not-an-int", None), _good(10)], timestamp=2_000
        )
        wait_until(lambda: store.get("u10") is not None, 20, "the global update u10 in the global store")
        produce(bootstrap_servers, orders, [(b"o1", b"u10"), (b"o2", b"u3")], timestamp=3_000)
        out = read_all(bootstrap_servers, sink, 1, 2)
        dead = read_all(bootstrap_servers, dlq, 1, 2)
        assert client.state is KafkaStreamsState.RUNNING
        assert client._global_thread.is_alive()  # noqa: SLF001
    finally:
        assert client.close(timeout=30)
    assert _values(out) == ["u10=100", "u3=30"]
    assert [(m.key(), m.value(), m.timestamp()[1]) for m in dead] == [
        (b"bad1", b"xx", 1_000),
        (b"bad2", b"not-an-int", 2_000),
    ]
    for message, offset in zip(dead, (5, 11), strict=True):
        headers = dict(message.headers())
        assert headers["__streams.errors.topic"] == scores.encode()
        assert headers["__streams.errors.partition"] == b"0"
        assert headers["__streams.errors.offset"] == str(offset).encode()
        assert b"SerializationError" in headers["__streams.errors.exception"]
        assert scores.encode() in headers["__streams.errors.message"]
        assert headers["__streams.errors.stacktrace"]
    assert dead[0].headers()[0] == ("origin", b"restore")  # the record's own headers come first

    # a clean restart resumes from the global checkpoint: nothing is dead-lettered twice
    client = KafkaStreams(_scores_enrich(orders, scores, sink), config)
    try:
        client.start()
        assert client._global_thread.restored == 0  # noqa: SLF001
        assert client.global_store(STORE).get("u10").value == 100
    finally:
        assert client.close(timeout=30)
    assert count_to_end(bootstrap_servers, dlq, 1) == 2


def test_should_not_dead_letter_a_corrupt_global_record_again_when_an_in_memory_store_restores(
    bootstrap_servers, unique_name, tmp_path
):
    """An in-memory global store re-reads its whole topic on every start; the corrupt records the
    previous runs dead-lettered (at or below the global checkpoint they wrote) are not sent again,
    a corrupt record new since then is sent once."""
    orders, scores, sink, dlq, app = (unique_name(n) for n in ("orders", "scores", "out", "dlq", "memdlq"))
    make_topics(bootstrap_servers, **{orders: 1, scores: 1, sink: 1, dlq: 1})
    _produce_scores(bootstrap_servers, scores, [_good(0), (b"bad1", b"xx", None), _good(1)], timestamp=1_000)
    config = streams_config(
        bootstrap_servers,
        app,
        tmp_path / "state",
        default_deserialization_exception_handler="dead_letter",
        dead_letter_topic=dlq,
    )

    def run(expect_restored: int, then=None) -> None:
        client = KafkaStreams(_scores_enrich(orders, scores, sink, in_memory=True), config)
        try:
            client.start()
            assert client._global_thread.restored == expect_restored  # noqa: SLF001 (re-read from 0)
            assert client.global_store(STORE).get("u1").value == 10
            if then is not None:
                then(client)
        finally:
            assert client.close(timeout=30)

    def corrupt_while_running(client) -> None:
        wait_running(client, timeout=30)
        _produce_scores(
            bootstrap_servers, scores, [(b"bad2", b"not-an-int", None), _good(2)], timestamp=2_000
        )
        wait_until(lambda: client.global_store(STORE).get("u2") is not None, 20, "the global update u2")

    run(3, corrupt_while_running)
    assert count_to_end(bootstrap_servers, dlq, 1) == 2
    run(5)  # everything re-read, nothing dead-lettered twice
    run(5)
    dead = read_all(bootstrap_servers, dlq, 1, 2)
    assert [dict(m.headers())["__streams.errors.offset"] for m in dead] == [b"1", b"3"]
    assert count_to_end(bootstrap_servers, dlq, 1) == 2
