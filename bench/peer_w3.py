"""The input and the check of bench/peers.py's W3: re-key, join a table, window, aggregate.

The items table: :data:`ITEMS` items ``sku-NNNNN`` -> ``{"sku", "category"}``, written first with
timestamps a minute before the payments (so every implementation has the table before the
stream: Kafka Streams' timestamp synchronization picks the older table records first), and
partitioned with Kafka's default partitioner (murmur2), as the repartitioned stream it is joined
with is.

The payments: the ~91-byte JSON payments of ``bench/runtime_throughput.py`` keyed by user, each
with one of the items, with event times 100 per millisecond from ``base`` (a backlog of a stream
of 100,000 records/s): a million payments span 10 s and cross one minute boundary, so each item
has up to two windows, and the partitions' progress never differs by more than the 10 s grace (no
record is dropped as late, whatever order the implementations read the partitions in).

The check: for every ``item@window-start`` key, the last output's ``total`` equals the sum of the
amounts of that item's payments in that window; no other key.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter

from confluent_kafka import Consumer, Producer, TopicPartition

from bench import hand_loops
from bench.runtime_throughput import _value
from streams_runtime.kafka.profile import client_config

ITEMS = 100_000
CATEGORIES = 50
#: payments per millisecond of event time
PER_MS = 100


def _producer(servers: str) -> Producer:
    return Producer(client_config("producer", servers, {"linger.ms": 20, "batch.num.messages": 10000}))


def _send(producer: Producer, topic: str, key: bytes, value: bytes, timestamp: int) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key, timestamp=timestamp)
            return
        except BufferError:
            producer.poll(0.05)


def produce(servers: str, source: str, items: str, records: int, keys: int) -> dict:
    """Write the table and the payments; return the source's end offsets and the expected totals."""
    now = int(time.time() * 1000)
    base = now - now % hand_loops.WINDOW_MS - hand_loops.WINDOW_MS - 5_000  # 5 s before a minute
    producer = _producer(servers)
    for n in range(ITEMS):
        sku = f"sku-{n:05d}"
        value = hand_loops.dumps({"sku": sku, "category": f"cat-{n % CATEGORIES}"})
        _send(producer, items, sku.encode(), value, base - hand_loops.WINDOW_MS)
    if producer.flush(60):
        raise RuntimeError("the items table was not delivered within 60 s")
    rng = random.Random(11)
    totals: Counter[str] = Counter()
    for i in range(records):
        user = f"user-{i % keys}"
        value = _value(rng, i, user)
        payment = hand_loops.loads(value)
        ts = base + i // PER_MS
        totals[f"{payment['item']}@{ts - ts % hand_loops.WINDOW_MS}"] += payment["amount"]
        _send(producer, source, user.encode(), value, ts)
    if producer.flush(60):
        raise RuntimeError("the payments were not delivered within 60 s")
    return {"ends": _ends(servers, source), "totals": dict(totals)}


def _ends(servers: str, topic: str) -> dict[int, int]:
    consumer = Consumer(
        client_config("consumer", servers, {"group.id": f"peers-ends-{uuid.uuid4().hex[:6]}"})
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    consumer.close()
    return ends


def check(records: list[tuple[bytes, bytes]], expected: dict) -> str:
    """'ok' or what is wrong with a W3 output."""
    final = {k.decode(): hand_loops.loads(v)["total"] for k, v in records}
    want = expected["totals"]
    wrong = {k: (final.get(k), n) for k, n in want.items() if final.get(k) != n}
    extra = sorted(set(final) - set(want))
    if not wrong and not extra:
        return "ok"
    return (
        f"{len(wrong)} windows wrong, {len(extra)} unexpected, e.g. {sorted(wrong.items())[:3]} {extra[:3]}"
    )
