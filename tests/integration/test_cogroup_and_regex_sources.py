"""Cogroup and sources by topic pattern on the runtime, against the embedded broker.

* A cogroup of two topics into one RocksDB store with a changelog: the interactive query reads the
  aggregates; an instance restarted on an empty state directory restores the store from the
  changelog (the query answers before any new record) and keeps aggregating from there.
* The cogroup store with ``num_standby_replicas=1`` on two instances: the instance holding the
  standby answers queries with ``allow_stale`` from what it replicated from the changelog.
* ``builder.stream(re.compile(...))``: tasks for every matching topic that exists at start (not
  the others), records of each flowing through; a matching topic created while the app runs is
  read without a restart (the count store keeps its earlier counts), a non-matching one never.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import pytest

from streams_runtime import (
    Consumed,
    KafkaStreams,
    KafkaStreamsState,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
)
from tests.integration.streams_support import (
    latest_until,
    make_topics,
    produce,
    streams_config,
    wait_running,
    wait_until,
)

PARTITIONS = 2
S = Serdes.String()


def cogroup_app(clicks: str, purchases: str, sink: str) -> Any:
    builder = StreamsBuilder()
    grouped_purchases = builder.stream(purchases, Consumed.with_(S, S)).group_by_key()
    (
        builder.stream(clicks, Consumed.with_(S, S))
        .group_by_key()
        .cogroup(lambda key, value, agg: agg + 1)
        .cogroup(grouped_purchases, lambda key, value, agg: agg + 100)
        .aggregate(lambda: 0, Materialized.as_("activity").with_value_serde(Serdes.Long()))
        .to_stream()
        .to(sink, Produced.with_(S, Serdes.Long()))
    )
    return builder.build()


def decode_long(msg: Any) -> tuple[str, int]:
    return msg.key().decode(), struct.unpack(">q", msg.value())[0]


def _records(keys: list[str]) -> list[tuple[bytes, bytes]]:
    """Keyed records for Kafka's default partitioner, which the interactive query routes by too."""
    return [(k.encode(), b"x") for k in keys]


def _query(client: KafkaStreams, key: str) -> Any:
    value = client.store("activity").get(key)
    return getattr(value, "value", value)


def _run_cogroup(
    bootstrap: str, app: str, state_dir: Any, topics: tuple[str, str, str], inputs: Any, want: dict
) -> dict:
    client = KafkaStreams(
        cogroup_app(*topics), streams_config(bootstrap, app, state_dir, num_stream_threads=1)
    )
    try:
        client.start()
        wait_running(client, timeout=30)
        restored: dict = {}
        if not inputs:
            wait_until(
                lambda: all(_safe_query(client, k) == v for k, v in want.items()),
                30,
                "the restored store to answer every key",
            )
            restored = {k: _query(client, k) for k in want}
        for topic, keys in inputs:
            produce(bootstrap, topic, _records(keys))
        if inputs:
            got = latest_until(bootstrap, topics[2], PARTITIONS, decode_long, lambda latest: latest == want)
            assert got == want
            wait_until(
                lambda: all(_safe_query(client, k) == v for k, v in want.items()),
                20,
                lambda: f"queries: { ({k: _safe_query(client, k) for k in want}) }",
            )
            restored = {k: _query(client, k) for k in want}
    finally:
        closed = client.close(timeout=30)
    assert closed and client.state is KafkaStreamsState.NOT_RUNNING and not client.errors
    return restored


def test_cogroup_store_standby_answers_stale_queries(bootstrap_servers, unique_name, tmp_path):
    clicks, purchases, sink = (unique_name(n) for n in ("clicks", "purchases", "activity-out"))
    make_topics(bootstrap_servers, **{clicks: 1, purchases: 1, sink: 1})
    produce(bootstrap_servers, clicks, _records(["ann", "bob", "ann"]))
    produce(bootstrap_servers, purchases, _records(["ann"]))
    want = {"ann": 102, "bob": 1}
    app = unique_name("cogroup-standby")
    clients = [
        KafkaStreams(
            cogroup_app(clicks, purchases, sink),
            streams_config(bootstrap_servers, app, tmp_path / f"i{i}", num_standby_replicas=1),
        )
        for i in range(2)
    ]

    def standby_holder() -> KafkaStreams | None:
        for client in clients:
            threads = client.metadata_for_local_threads()
            if any(t.standby_tasks for t in threads) and not any(t.active_tasks for t in threads):
                return client
        return None

    def stale(client: KafkaStreams) -> dict:
        try:
            view = client.store("activity", allow_stale=True)
            return {k: getattr(view.get(k), "value", view.get(k)) for k in want}
        except Exception:  # noqa: BLE001 - not yet replicated or still assigning
            return {}

    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=60)
        wait_until(lambda: standby_holder() is not None, 60, "a standby task to be assigned")
        holder = standby_holder()
        assert holder is not None
        wait_until(lambda: stale(holder) == want, 60, lambda: f"standby answers {stale(holder)}")
        assert not any(t.active_tasks for t in holder.metadata_for_local_threads())
    finally:
        closed = [client.close(timeout=30) for client in clients]
    assert all(closed) and not any(client.errors for client in clients)


def _safe_query(client: KafkaStreams, key: str) -> Any:
    try:
        return _query(client, key)
    except Exception:  # noqa: BLE001 - restoring or rebalancing: not answerable yet
        return None


def test_cogroup_on_the_runtime_restores_its_store_and_answers_queries(
    bootstrap_servers, unique_name, tmp_path
):
    clicks, purchases, sink = unique_name("clicks"), unique_name("purchases"), unique_name("activity")
    app = unique_name("cogroup")
    make_topics(bootstrap_servers, **{clicks: PARTITIONS, purchases: PARTITIONS, sink: PARTITIONS})
    topics = (clicks, purchases, sink)
    click_keys = [f"k{i % 6}" for i in range(30)]  # 5 clicks per key
    purchase_keys = [f"k{i % 3}" for i in range(6)]  # 2 purchases for k0..k2
    want = {f"k{i}": 5 + (200 if i < 3 else 0) for i in range(6)}
    queried = _run_cogroup(
        bootstrap_servers,
        app,
        tmp_path / "first",
        topics,
        [(clicks, click_keys), (purchases, purchase_keys)],
        want,
    )
    assert queried == want
    # A new instance on an empty state directory: the store comes back from the changelog.
    restored = _run_cogroup(bootstrap_servers, app, tmp_path / "second", topics, [], want)
    assert restored == want
    # ... and aggregates on from the restored values.
    more = dict(want)
    more["k0"] += 100
    more["k5"] += 1
    queried = _run_cogroup(
        bootstrap_servers, app, tmp_path / "third", topics, [(purchases, ["k0"]), (clicks, ["k5"])], more
    )
    assert queried == more


def test_pattern_source_reads_every_matching_topic(bootstrap_servers, unique_name, tmp_path):
    base = unique_name("orders")
    eu, us, other, sink = f"{base}-eu", f"{base}-us", f"{base}x-other", unique_name("out")
    make_topics(bootstrap_servers, **{eu: PARTITIONS, us: PARTITIONS, other: PARTITIONS, sink: PARTITIONS})
    builder = StreamsBuilder()
    (
        builder.stream(re.compile(re.escape(base) + r"-[a-z]+"), Consumed.with_(S, S))
        .group_by_key()
        .count(Materialized.as_("orders-per-key"))
        .to_stream()
        .to(sink, Produced.with_(S, Serdes.Long()))
    )
    client = KafkaStreams(builder.build(), streams_config(bootstrap_servers, unique_name("regex"), tmp_path))
    try:
        client.start()
        wait_running(client, timeout=30)
        tasks = {t for thread in client.metadata_for_local_threads() for t in thread.active_tasks}
        assert len(tasks) == PARTITIONS
        produce(bootstrap_servers, eu, _records(["k0", "k1", "k0"]))
        produce(bootstrap_servers, us, _records(["k0", "k1"]))
        produce(bootstrap_servers, other, _records(["k0", "k0", "k0"]))  # does not match: not read
        want = {"k0": 3, "k1": 2}
        got = latest_until(bootstrap_servers, sink, PARTITIONS, decode_long, lambda latest: latest == want)
        assert got == want
    finally:
        closed = client.close(timeout=30)
    assert closed and not client.errors


def _partitions_read(*clients: KafkaStreams) -> set[tuple[str, int]]:
    return {
        tp
        for client in clients
        for thread in client.metadata_for_local_threads()
        for task in thread.active_tasks
        for tp in task.topic_partitions
    }


@pytest.mark.parametrize(("instances", "threads"), [(1, 2), (2, 1)])
def test_pattern_source_picks_up_a_matching_topic_created_while_running(
    bootstrap_servers, unique_name, tmp_path, instances, threads
):
    base = unique_name("orders")
    eu, us, other, sink = f"{base}-eu", f"{base}-us", f"{base}x-other", unique_name("out")
    make_topics(bootstrap_servers, **{eu: PARTITIONS, sink: PARTITIONS})
    app = unique_name("regex-new")
    clients = []
    for i in range(instances):
        builder = StreamsBuilder()
        (
            builder.stream(re.compile(re.escape(base) + r"-[a-z]+"), Consumed.with_(S, S))
            .group_by_key()
            .count(Materialized.as_("orders-per-key"))
            .to_stream()
            .to(sink, Produced.with_(S, Serdes.Long()))
        )
        config = streams_config(
            bootstrap_servers, app, tmp_path / f"i{i}", metadata_max_age_ms=500, num_stream_threads=threads
        )
        clients.append(KafkaStreams(builder.build(), config))
    try:
        for client in clients:
            client.start()
        wait_running(*clients, timeout=60)
        produce(bootstrap_servers, eu, _records(["k0", "k1", "k0"]))
        want = {"k0": 2, "k1": 1}
        assert latest_until(bootstrap_servers, sink, PARTITIONS, decode_long, lambda got: got == want) == want
        assert {t for t, _ in _partitions_read(*clients)} == {eu}
        make_topics(bootstrap_servers, **{us: PARTITIONS, other: PARTITIONS})
        wait_until(
            lambda: _partitions_read(*clients) == {(t, p) for t in (eu, us) for p in range(PARTITIONS)},
            60,
            lambda: f"partitions read: {sorted(_partitions_read(*clients))}",
        )
        produce(bootstrap_servers, us, _records(["k0", "k1", "k2"]))
        produce(bootstrap_servers, other, _records(["k0", "k0", "k0"]))  # does not match: never read
        want = {"k0": 3, "k1": 2, "k2": 1}  # counted on top of the store's earlier counts
        got = latest_until(bootstrap_servers, sink, PARTITIONS, decode_long, lambda latest: latest == want)
        assert got == want
        produce(bootstrap_servers, us, _records(["k3"]))  # after the non-matching records
        want = {**want, "k3": 1}
        got = latest_until(bootstrap_servers, sink, PARTITIONS, decode_long, lambda latest: "k3" in latest)
        assert got == want
        assert all(client.state is KafkaStreamsState.RUNNING for client in clients)
        assert other not in {t for t, _ in _partitions_read(*clients)}
    finally:
        closed = [client.close(timeout=30) for client in clients]
    assert all(closed) and not any(client.errors for client in clients)
