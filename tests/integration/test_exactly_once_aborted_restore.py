"""Exactly-once restore never applies a changelog record of an aborted transaction.

Tansu hands aborted records to read_committed readers (it sends no aborted-transaction list), so
a restore that trusted the consumer would put a fenced writer's aborted increments into the
state. Here a count app runs under exactly_once_v2 and closes; then an aborted transaction
writes a bogus count for ``k1`` into the changelog (as a fenced zombie's last transaction
would). A restart on an empty state directory restores the whole changelog: the aborted count
is left out (the log's markers say ABORT), and the next input counts on from the committed value.
"""

from __future__ import annotations

import struct
from collections import Counter

import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_runtime.kafka.clients import create_producer
from streams_runtime.testing import read_committed_topic
from tests.integration.streams_support import (
    make_topics,
    produce_to,
    streams_config,
    wait_running,
    wait_until,
)

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

PARTITIONS = 2


def _count_app(source: str, sink: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build()


def _committed_counts(bootstrap: str, sink: str) -> dict[str, int]:
    return {
        m.key().decode(): struct.unpack(">q", m.value())[0]
        for m in read_committed_topic(bootstrap, sink, PARTITIONS, timeout_s=20)
    }


def _run(
    bootstrap: str, source: str, sink: str, app: str, state_dir, keys: list[str], expected: Counter
) -> None:
    config = streams_config(
        bootstrap, app, state_dir, processing_guarantee="exactly_once_v2", statestore_cache_max_bytes=0
    )
    config.pop("commit_interval_ms")
    with KafkaStreams(_count_app(source, sink), config) as streams:
        streams.start()
        wait_running(streams)
        produce_to(bootstrap, source, [(k.encode(), b"x", int(k[1:]) % PARTITIONS) for k in keys])
        expected.update(keys)
        want = dict(expected)
        wait_until(lambda: _committed_counts(bootstrap, sink) == want, 45, f"committed counts {want}")


def test_restore_leaves_out_the_records_of_an_aborted_changelog_transaction(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("eos-abort")
    make_topics(bootstrap_servers, **{source: PARTITIONS, sink: PARTITIONS})
    expected: Counter = Counter()
    _run(bootstrap_servers, source, sink, app, tmp_path / "first", [f"k{i % 6}" for i in range(60)], expected)

    changelog = f"{app}-counts-changelog"
    zombie = create_producer(bootstrap_servers, {"transactional.id": unique_name("zombie")})
    zombie.init_transactions(10)
    zombie.begin_transaction()
    zombie.produce(changelog, struct.pack(">q", 999), b"k1", partition=1)
    zombie.produce(changelog, struct.pack(">q", 777), b"k3", partition=1)
    zombie.flush(10)
    zombie.abort_transaction(10)

    # an empty state directory: the restore replays the whole changelog, aborted records included
    _run(bootstrap_servers, source, sink, app, tmp_path / "second", ["k1", "k3", "k0"], expected)
    assert expected["k1"] == 11 and expected["k3"] == 11
