"""A co-partitioned stream-table join across 2 instances is correct; mismatched
partition counts fail the start with a message naming the topics and their counts."""

from __future__ import annotations

import pytest

from streams_runtime import (
    Consumed,
    KafkaStreams,
    KafkaStreamsState,
    Produced,
    Serdes,
    StreamsBuilder,
    TopologyError,
)
from tests.integration.streams_support import (
    make_topics,
    produce,
    read_all,
    streams_config,
    wait_running,
)

USERS = 60


def enrich(orders: str, users: str, sink: str):
    builder = StreamsBuilder()
    table = builder.table(users, Consumed.with_(Serdes.String(), Serdes.String()))
    (
        builder.stream(orders, Consumed.with_(Serdes.String(), Serdes.String()))
        .join(table, lambda order, user: f"{order}@{user}")
        .to(sink, Produced.with_(Serdes.String(), Serdes.String()))
    )
    return builder.build()


def test_should_join_a_stream_with_a_co_partitioned_table_across_two_instances(
    bootstrap_servers, unique_name, tmp_path
):
    orders, users, sink, app = (unique_name(n) for n in ("orders", "users", "enriched", "join"))
    make_topics(bootstrap_servers, **{orders: 4, users: 4, sink: 4})
    produce(
        bootstrap_servers,
        users,
        ((f"u{i}".encode(), f"name{i}".encode()) for i in range(USERS)),
        timestamp=1_000,
    )
    clients = [
        KafkaStreams(
            enrich(orders, users, sink),
            streams_config(bootstrap_servers, app, tmp_path / f"i{i}", max_task_idle_ms=1000),
        )
        for i in range(2)
    ]
    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=45)
        produce(
            bootstrap_servers,
            orders,
            ((f"u{i % USERS}".encode(), f"order{i}".encode()) for i in range(600)),
            timestamp=2_000,
        )
        out = read_all(bootstrap_servers, sink, 4, 600)
        owned = [sum(len(t.active_tasks) for t in c.metadata_for_local_threads()) for c in clients]
        # what each instance was doing, for a short read (once, in a CI run: no output at all)
        seen = [
            (
                c.state.name,
                [(t.thread_state, sorted(map(str, t.active_tasks))) for t in c.metadata_for_local_threads()],
            )
            for c in clients
        ]
    finally:
        for client in clients:
            client.close(timeout=30)
    assert sorted(m.value().decode() for m in out) == sorted(
        f"order{i}@name{i % USERS}" for i in range(600)
    ), (
        len(out),
        seen,
    )
    for m in out:
        order = int(m.value().decode().split("@")[0][len("order") :])
        assert m.key().decode() == f"u{order % USERS}"
    assert sorted(owned) == [2, 2]


def test_should_fail_the_start_when_joined_topics_have_different_partition_counts(
    bootstrap_servers, unique_name, tmp_path
):
    orders, users, sink, app = (unique_name(n) for n in ("orders", "users", "enriched", "join"))
    make_topics(bootstrap_servers, **{orders: 4, users: 3, sink: 4})
    streams = KafkaStreams(enrich(orders, users, sink), streams_config(bootstrap_servers, app, tmp_path))
    with pytest.raises(TopologyError) as failure:
        streams.start()
    message = str(failure.value)
    assert f"'{orders}': 4" in message and f"'{users}': 3" in message
    assert "co-partition" in message
    assert streams.state is KafkaStreamsState.CREATED
