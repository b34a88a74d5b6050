"""The baselines of bench/runtime_throughput.py: hand-written confluent-kafka loops.

What a careful engineer writes without a framework, doing the same work as the framework's
topologies (see ``runtime_throughput.py`` for those), with the same client profile
(``streams_runtime.kafka.profile``) and the same commit interval:

The loops have the shape a fast hand-written loop has: ``consume`` batches of up to
:data:`BATCH` records with a short timeout, orjson (the library behind ``Serdes.Json``) for JSON,
``produce`` per output record with ``poll(0)`` once per batch, no per-record callback.

- :func:`stateless_loop`: consume, parse the value, keep ``amount > THRESHOLD``, add the
  enrichment fields (:func:`enrich`), write compact JSON, produce to the output topic keyed as the
  input;
- :func:`stateful_loop`: consume, parse the value (the framework's source deserializes it too),
  count per key (updates since the last commit in a dict, read through to rocksdict on a miss),
  and at each commit write the latest count of every key touched since the last commit to the
  output topic and to a compacted changelog topic (what a KTable's cache emits), then the counts
  to rocksdict in one ``WriteBatch``;
- both commit every ``commit_interval_s``: flush the producer, then commit the consumed offsets
  synchronously (the framework's order: output durable before input is marked done).

Each loop reads its partitions with manual ``assign()`` from the beginning and returns when all
``ends`` (partition -> end offset) are consumed and committed. Timing starts after ``assign()``.
"""

from __future__ import annotations

import resource
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from rocksdict import Options, Rdict, WriteBatch

from streams_runtime.kafka.profile import client_config

THRESHOLD = 30.0
LONG = struct.Struct(">q")
#: Records per ``consume`` call and its timeout: a full batch when backlogged, 10 ms otherwise.
BATCH = 10_000
POLL_TIMEOUT_S = 0.01
loads = orjson.loads


def keep(value: dict) -> bool:
    """The filter of the stateless pipeline."""
    return value["amount"] > THRESHOLD


def enrich(value: dict) -> dict:
    """The enrichment of the stateless pipeline (same function in both runs)."""
    tier = "gold" if value["amount"] > 80 else "std"
    return {**value, "amount_cents": int(value["amount"] * 100), "tier": tier}


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, as ``Serdes.Json`` writes it."""
    return orjson.dumps(value)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _clients(servers: str, group: str, topic: str, ends: Mapping[int, int]) -> tuple[Consumer, Producer]:
    consumer = Consumer(client_config("consumer", servers, {"group.id": group}))
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
    producer = Producer(client_config("producer", servers))
    return consumer, producer


def _produce(producer: Producer, topic: str, key: bytes | None, value: bytes) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key)
            return
        except BufferError:
            producer.poll(0.05)


def _run(
    consumer: Consumer,
    producer: Producer,
    topic: str,
    ends: Mapping[int, int],
    handle: Callable[[list[Any]], None],
    on_commit: Callable[[], None],
    commit_interval_s: float,
) -> dict[str, float]:
    """The shared consume -> handle -> (commit) loop; returns timing of the measured part."""
    positions: dict[int, int] = {}
    done = {p: end <= 0 for p, end in ends.items()}
    started, cpu0 = time.perf_counter(), _cpu()
    next_commit = started + commit_interval_s

    def commit() -> None:
        on_commit()
        producer.flush()
        if positions:
            consumer.commit(
                offsets=[TopicPartition(topic, p, o) for p, o in positions.items()], asynchronous=False
            )

    while not all(done.values()):
        batch = consumer.consume(num_messages=BATCH, timeout=POLL_TIMEOUT_S)
        for msg in batch:
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
        if batch:
            handle(batch)
            for msg in batch:
                positions[msg.partition()] = msg.offset() + 1
            for p, pos in positions.items():
                if pos >= ends[p]:
                    done[p] = True
            producer.poll(0)
        if time.perf_counter() >= next_commit:
            commit()
            next_commit = time.perf_counter() + commit_interval_s
    commit()
    elapsed, cpu = time.perf_counter() - started, _cpu() - cpu0
    consumer.close()
    return {"seconds": elapsed, "cpu_s": cpu}


def stateless_loop(
    servers: str, group: str, topic: str, output: str, ends: Mapping[int, int], commit_interval_s: float
) -> dict[str, float]:
    """Filter and enrich JSON records by hand (module docstring); returns timing."""
    consumer, producer = _clients(servers, group, topic, ends)

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            value = loads(msg.value())
            if keep(value):
                _produce(producer, output, msg.key(), dumps(enrich(value)))

    return _run(consumer, producer, topic, ends, handle, lambda: None, commit_interval_s)


def stateful_loop(
    servers: str,
    group: str,
    topic: str,
    output: str,
    changelog: str,
    ends: Mapping[int, int],
    commit_interval_s: float,
    db_path: str,
) -> dict[str, float]:
    """Count per key in rocksdict by hand (module docstring); returns timing."""
    consumer, producer = _clients(servers, group, topic, ends)
    db = Rdict(db_path, Options(raw_mode=True))
    dirty: dict[bytes, int] = {}

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            loads(msg.value())
            key = msg.key()
            count = dirty.get(key)
            if count is None:
                raw = db.get(key)
                count = LONG.unpack(raw)[0] if raw is not None else 0
            dirty[key] = count + 1

    def on_commit() -> None:
        if not dirty:
            return
        write = WriteBatch(raw_mode=True)
        for key, count in dirty.items():
            value = LONG.pack(count)
            _produce(producer, output, key, value)
            _produce(producer, changelog, key, value)
            write.put(key, value)
        db.write(write)
        dirty.clear()

    try:
        return _run(consumer, producer, topic, ends, handle, on_commit, commit_interval_s)
    finally:
        db.close()
