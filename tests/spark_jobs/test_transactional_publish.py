"""The backfill's publish step against the embedded broker: one transaction per interval.

No Spark here: :func:`publish_transactionally` is driven directly, with a records iterator that
can pause (to look at the broker while the transaction is open) or fail after N records.

On Tansu aborted records stay visible to read_committed readers, so the Tansu tests identify
each attempt by its ``backfill.publish_id`` header and assert what Tansu does enforce: nothing is
visible to read_committed while a transaction is open (the last stable offset blocks), a failed
attempt aborts (the LSO moves past it), a retry with the same transactional.id fences the attempt
before it, and the retry's transaction holds every record exactly once. That the failed attempt's
records are invisible after its abort is the ``kafka_only`` test at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from spark_jobs.payments_backfill.publish import (
    PublishError,
    PublishFencedError,
    publish_transactionally,
    records_digest,
    transactional_id,
)
from streams_runtime.kafka.clients import (
    PARTITION_EOF,
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_topics,
)

pytestmark = pytest.mark.kafka

N = 40


def interval_records(n: int = N) -> list[tuple[bytes, bytes]]:
    return [(f"user-{i % 7}".encode(), f'{{"i": {i}}}'.encode()) for i in range(n)]


def read_to_end(
    bootstrap: str, topic: str, *, committed: bool, settled: bool = True, timeout: float = 20.0
) -> list[Any]:
    """Every record of ``topic`` (one partition) up to its end for the isolation level: for
    read_committed the last stable offset, so an open transaction's records are not returned.

    ``settled`` (read_committed): read on until the last stable offset reaches the high watermark,
    i.e. every transaction's marker is written. Apache Kafka answers ``commit_transaction`` once
    the coordinator has logged the decision and writes the markers after it, so a read_committed
    reader right after a commit may still stop before the committed records. ``False`` to look
    while a transaction is open.
    """
    consumer = create_consumer(
        bootstrap,
        f"publish-reader-{time.monotonic_ns()}",
        {"enable.partition.eof": True},
        low_latency=True,
        read_committed=committed,
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}: no end of partition within {timeout}s")
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    out.append(msg)
                elif msg.error().code() == PARTITION_EOF:
                    if not (committed and settled) or msg.offset() >= high_watermark(bootstrap, topic):
                        return out
    finally:
        consumer.close()


def high_watermark(bootstrap: str, topic: str) -> int:
    """The partition's high watermark, asked by a read_uncommitted client (ListOffsets from a
    read_committed one answers the last stable offset)."""
    consumer = create_consumer(bootstrap, f"publish-hw-{time.monotonic_ns()}", read_committed=False)
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1])
    finally:
        consumer.close()


def publish_id_of(msg: Any) -> str:
    return dict(msg.headers() or [])["backfill.publish_id"].decode()


def by_attempt(messages: list[Any]) -> dict[str, list[tuple[bytes, bytes]]]:
    attempts: dict[str, list[tuple[bytes, bytes]]] = {}
    for msg in messages:
        attempts.setdefault(publish_id_of(msg), []).append((msg.key(), msg.value()))
    return attempts


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def pausing(records: list[tuple[bytes, bytes]], after: int, action: Callable[[], None]) -> Iterator:
    """Yield ``records``, running ``action`` once ``after`` of them were handed to the producer."""
    for i, record in enumerate(records):
        if i == after:
            action()
        yield record


@pytest.fixture
def out_topic(bootstrap_servers: str, unique_name: Callable[[str], str]) -> str:
    topic = unique_name("spend")
    create_topics(create_admin(bootstrap_servers), [TopicSpec(topic, 1)])
    return topic


def test_should_make_a_committed_publish_visible_to_read_committed_readers_exactly_once(
    bootstrap_servers, out_topic
):
    records = interval_records()
    txn = transactional_id("payments_backfill", out_topic, "20240101T000000Z_20240102T000000Z")

    result = publish_transactionally(
        bootstrap_servers, out_topic, records, txn, headers={"backfill.interval_id": "i1"}
    )

    visible = read_to_end(bootstrap_servers, out_topic, committed=True)
    assert result.records == N and result.transactional_id == txn
    assert result.digest == records_digest(records)
    assert sorted((m.key(), m.value()) for m in visible) == sorted(records)
    assert {publish_id_of(m) for m in visible} == {result.publish_id}
    assert {dict(m.headers())["backfill.interval_id"] for m in visible} == {b"i1"}


def test_should_show_read_committed_readers_nothing_while_the_publish_transaction_is_open(
    bootstrap_servers, out_topic
):
    records = interval_records()
    seen_open: dict[str, int] = {}

    def look() -> None:
        wait_for(
            lambda: len(read_to_end(bootstrap_servers, out_topic, committed=False)) >= N // 2,
            "the open transaction's records to reach the broker",
        )
        seen_open["committed"] = len(read_to_end(bootstrap_servers, out_topic, committed=True, settled=False))

    publish_transactionally(
        bootstrap_servers,
        out_topic,
        pausing(records, N // 2, look),
        transactional_id("payments_backfill", out_topic, "open"),
    )

    assert seen_open == {"committed": 0}, "the last stable offset hid the open transaction"
    assert len(read_to_end(bootstrap_servers, out_topic, committed=True)) == N


def test_should_abort_a_publish_that_fails_midway_and_publish_exactly_once_on_retry(
    bootstrap_servers, out_topic
):
    records = interval_records()
    txn = transactional_id("payments_backfill", out_topic, "retried")

    def fail() -> None:
        wait_for(
            lambda: len(read_to_end(bootstrap_servers, out_topic, committed=False)) >= N // 2,
            "the failing attempt's records to reach the broker",
        )
        assert read_to_end(bootstrap_servers, out_topic, committed=True, settled=False) == []
        raise RuntimeError("injected failure mid-publish")

    with pytest.raises(PublishError) as failed:
        publish_transactionally(bootstrap_servers, out_topic, pausing(records, N // 2, fail), txn)
    assert failed.value.aborted and failed.value.sent == N // 2
    assert not isinstance(failed.value, PublishFencedError)
    assert "injected failure mid-publish" in str(failed.value)

    retry = publish_transactionally(bootstrap_servers, out_topic, records, txn)

    # the failed attempt's records did reach the broker: the abort, not luck, keeps them out
    uncommitted = by_attempt(read_to_end(bootstrap_servers, out_topic, committed=False))
    assert len(uncommitted[failed.value.publish_id]) == N // 2
    committed = by_attempt(read_to_end(bootstrap_servers, out_topic, committed=True))
    assert sorted(committed[retry.publish_id]) == sorted(records), "the retry's transaction: each record once"
    assert set(committed) <= {retry.publish_id, failed.value.publish_id}


def test_should_fence_a_zombie_attempt_when_a_retry_takes_its_transactional_id(bootstrap_servers, out_topic):
    records = interval_records()
    txn = transactional_id("payments_backfill", out_topic, "zombie")
    retry: dict[str, Any] = {}

    def retry_meanwhile() -> None:
        wait_for(
            lambda: len(read_to_end(bootstrap_servers, out_topic, committed=False)) >= N // 2,
            "the zombie's records to reach the broker",
        )
        retry["result"] = publish_transactionally(bootstrap_servers, out_topic, records, txn)

    with pytest.raises(PublishFencedError) as fenced:
        publish_transactionally(bootstrap_servers, out_topic, pausing(records, N // 2, retry_meanwhile), txn)

    assert not fenced.value.aborted, "a fenced producer has nothing of its own left to abort"
    winner = retry["result"]
    committed = by_attempt(read_to_end(bootstrap_servers, out_topic, committed=True))
    assert sorted(committed[winner.publish_id]) == sorted(records)
    assert set(committed) <= {winner.publish_id, fenced.value.publish_id}
    assert len(committed.get(fenced.value.publish_id, [])) <= N // 2, (
        "the zombie sent nothing after the fence"
    )


# ---------------------------------------------------------------------- kafka_only (Tansu lacks this)
@pytest.mark.kafka_only
def test_should_hide_a_failed_attempt_from_read_committed_readers_after_its_abort(
    bootstrap_servers, out_topic
):
    records = interval_records()
    txn = transactional_id("payments_backfill", out_topic, "aborted")

    def fail() -> None:
        wait_for(
            lambda: len(read_to_end(bootstrap_servers, out_topic, committed=False)) >= N // 2,
            "the failing attempt's records to reach the broker",
        )
        raise RuntimeError("injected failure mid-publish")

    with pytest.raises(PublishError):
        publish_transactionally(bootstrap_servers, out_topic, pausing(records, N // 2, fail), txn)
    retry = publish_transactionally(bootstrap_servers, out_topic, records, txn)

    committed = read_to_end(bootstrap_servers, out_topic, committed=True)
    assert by_attempt(committed) == {retry.publish_id: by_attempt(committed)[retry.publish_id]}
    assert sorted((m.key(), m.value()) for m in committed) == sorted(records)
