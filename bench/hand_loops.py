"""The baselines of bench/runtime_throughput.py: hand-written confluent-kafka loops.

What a careful engineer writes without a framework for the two workloads of the peer comparison
(see ``runtime_throughput.py``), built the way the fastest plain loop is built, so that the
framework / hand-loop ratios are against that loop and not against a slow one:

- ``consume`` batches of up to :data:`BATCH` records with a :data:`POLL_TIMEOUT_S` timeout (a full
  batch when backlogged, 10 ms otherwise);
- orjson for JSON both ways (the library behind ``Serdes.Json``);
- one ``produce`` per output record with no per-message delivery callback, ``poll(0)`` once per
  batch; an idempotent producer with ``acks=all`` (the default of current Kafka clients), 5 ms
  linger and 10,000-message batches (:data:`PRODUCER`);
- every ``commit_interval_s`` (5 s by default): flush the producer, then commit the consumed
  offsets synchronously (output durable before the input is marked done).

The work:

- :func:`stateless_loop` (W1): parse the value, keep it when its ``amount`` is even
  (:func:`keep`), add ``amount_cents`` (:func:`enrich`), write it as JSON to the output topic keyed
  as the input;
- :func:`stateful_loop` (W2): parse the value, count per key in a dict, and for every record write
  ``{"key": <key>, "count": <count>}`` as JSON to the output topic and the count to a compacted
  changelog topic, on the input's partition (what a changelogged count without a record cache
  must do). No restore: each run starts from empty state;
- :func:`windowed_join_loop` (W3): read the items table (:func:`join_item`'s other side) into a
  dict first, then per payment look up its item, add the amount to the item's 1-minute window
  (:data:`WINDOW_MS`; a record older than the window's end plus :data:`GRACE_MS` behind the
  highest timestamp seen is dropped), and at every commit write each changed window's
  ``{"total"}`` to the output and to a changelog topic (what a record cache flushes). One process
  owns every partition, so the loop needs no repartition: the practical limit, not the same
  topology.

Each loop reads its partitions with manual ``assign()`` from the beginning and returns when all
``ends`` (partition -> end offset) are consumed and committed. Timing starts after ``assign()``.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

#: Records per ``consume`` call and its timeout.
BATCH = 10_000
POLL_TIMEOUT_S = 0.01
#: Client settings of both the loops and the framework runs (``runtime_workloads.py``): the
#: consumer's session and fetch waits suited to the embedded broker.
CONSUMER: dict[str, Any] = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 2000,
    "fetch.queue.backoff.ms": 10,
    "fetch.wait.max.ms": 20,
    "allow.auto.create.topics": False,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}
PRODUCER: dict[str, Any] = {
    "linger.ms": 5,
    "batch.num.messages": 10_000,
    "queue.buffering.max.messages": 500_000,
    "acks": "all",
    "enable.idempotence": True,
    "allow.auto.create.topics": False,
}
loads = orjson.loads
dumps = orjson.dumps


def keep(value: dict) -> bool:
    """The filter of the stateless workload: an even amount."""
    return value["amount"] % 2 == 0


def enrich(value: dict) -> dict:
    """The enrichment of the stateless workload (same function in both runs)."""
    value["amount_cents"] = value["amount"] * 100
    return value


def count_update(key: str, count: int) -> dict:
    """The output of the stateful workload for one update."""
    return {"key": key, "count": count}


#: W3's tumbling windows: 1 minute, 10 s grace.
WINDOW_MS = 60_000
GRACE_MS = 10_000


def join_item(payment: dict, item: dict) -> dict:
    """W3's joiner: the payment's user and amount with its item's category."""
    return {"user": payment["user"], "amount": payment["amount"], "category": item["category"]}


def cpu_seconds() -> float:
    """User + system CPU seconds of this process, every thread (the benchmarks' CPU figure)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _clients(servers: str, group: str, topic: str, ends: Mapping[int, int]) -> tuple[Consumer, Producer]:
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, **CONSUMER})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
    producer = Producer({"bootstrap.servers": servers, **PRODUCER})
    return consumer, producer


def _run(
    consumer: Consumer,
    producer: Producer,
    topic: str,
    ends: Mapping[int, int],
    handle: Callable[[list[Any]], None],
    commit_interval_s: float,
    before_commit: Callable[[], None] | None = None,
) -> dict[str, float]:
    """The shared consume -> handle -> (commit) loop; returns timing of the measured part.

    Completion is checked once per batch from the consumer's positions (no per-record
    bookkeeping); a commit stores the consumed positions, as ``commit()`` without offsets does.
    """
    pending = {p for p, end in ends.items() if end > 0}
    started, cpu0 = time.perf_counter(), cpu_seconds()
    next_commit = started + commit_interval_s

    consumed = False  # records consumed since the last commit (else there is no offset to store)

    def commit() -> None:
        nonlocal consumed
        if before_commit is not None:
            before_commit()
        producer.flush()
        if consumed:
            consumer.commit(asynchronous=False)
            consumed = False

    while pending:
        batch = consumer.consume(BATCH, POLL_TIMEOUT_S)
        if batch:
            consumed = True
            handle(batch)
            producer.poll(0)
            for tp in consumer.position([TopicPartition(topic, p) for p in pending]):
                if tp.offset >= ends[tp.partition]:
                    pending.discard(tp.partition)
        if time.perf_counter() >= next_commit:
            commit()
            next_commit = time.perf_counter() + commit_interval_s
    processed, processed_cpu = time.perf_counter() - started, cpu_seconds() - cpu0
    commit()
    elapsed = time.perf_counter() - started
    consumer.close()
    return {"seconds": processed, "cpu_s": processed_cpu, "seconds_to_commit": elapsed}


def _sender(producer: Producer) -> Callable[..., None]:
    """``send(topic, value, key, partition)``: produce, serving delivery reports while the local
    queue is full."""
    produce, poll = producer.produce, producer.poll

    def send(topic: str, value: bytes, key: bytes, partition: int = -1) -> None:
        while True:
            try:
                produce(topic, value, key, partition=partition)
                return
            except BufferError:
                poll(0.01)

    return send


def stateless_loop(
    servers: str, group: str, topic: str, output: str, ends: Mapping[int, int], commit_interval_s: float
) -> dict[str, float]:
    """Filter and enrich JSON records by hand (module docstring); returns timing."""
    consumer, producer = _clients(servers, group, topic, ends)
    send = _sender(producer)

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
            value = loads(msg.value())
            if keep(value):
                send(output, dumps(enrich(value)), msg.key())

    return _run(consumer, producer, topic, ends, handle, commit_interval_s)


def stateful_loop(
    servers: str,
    group: str,
    topic: str,
    output: str,
    changelog: str,
    ends: Mapping[int, int],
    commit_interval_s: float,
) -> dict[str, float]:
    """Count per key by hand, emitting every update (module docstring); returns timing."""
    consumer, producer = _clients(servers, group, topic, ends)
    send = _sender(producer)
    counts: dict[bytes, int] = {}

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
            key = msg.key()
            value = loads(msg.value())  # parsed, as a JSON-typed source topic is
            count = counts.get(key, 0) + 1
            counts[key] = count
            send(output, dumps(count_update(value["user"], count)), key)
            send(changelog, b"%d" % count, key, msg.partition())

    return _run(consumer, producer, topic, ends, handle, commit_interval_s)


def _read_table(servers: str, group: str, topic: str) -> dict[bytes, dict]:
    """Every key's latest value of ``topic``, read from the beginning to its end."""
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, **CONSUMER})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    table: dict[bytes, dict] = {}
    pending = {p for p, end in ends.items() if end > 0}
    while pending:
        for msg in consumer.consume(BATCH, POLL_TIMEOUT_S):
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
            table[msg.key()] = loads(msg.value())
            if msg.offset() + 1 >= ends[msg.partition()]:
                pending.discard(msg.partition())
    consumer.close()
    return table


def windowed_join_loop(
    servers: str,
    group: str,
    topic: str,
    items: str,
    output: str,
    ends: Mapping[int, int],
    commit_interval_s: float,
    changelog: str,
) -> dict[str, float]:
    """Join payments with the items table and total them per item and window (module docstring)."""
    started, cpu0 = time.perf_counter(), cpu_seconds()
    table = _read_table(servers, f"{group}-items", items)
    loaded, loaded_cpu = time.perf_counter() - started, cpu_seconds() - cpu0
    consumer, producer = _clients(servers, group, topic, ends)
    send = _sender(producer)
    totals: dict[tuple[bytes, int], int] = {}
    dirty: set[tuple[bytes, int]] = set()
    stream_time = [-1]

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
            payment = loads(msg.value())
            item = payment["item"].encode()
            if table.get(item) is None:
                continue
            ts = msg.timestamp()[1]
            if ts > stream_time[0]:
                stream_time[0] = ts
            start = ts - ts % WINDOW_MS
            if start + WINDOW_MS + GRACE_MS <= stream_time[0]:
                continue  # the window has closed
            key = (item, start)
            totals[key] = totals.get(key, 0) + payment["amount"]
            dirty.add(key)

    def flush() -> None:
        for key in dirty:
            item, start = key
            name = b"%s@%d" % (item, start)
            send(output, dumps({"total": totals[key]}), name)
            send(changelog, b"%d" % totals[key], name)
        dirty.clear()

    timing = _run(consumer, producer, topic, ends, handle, commit_interval_s, before_commit=flush)
    return {
        "seconds": timing["seconds"] + loaded,
        "cpu_s": timing["cpu_s"] + loaded_cpu,
        "seconds_to_commit": timing["seconds_to_commit"] + loaded,
    }
