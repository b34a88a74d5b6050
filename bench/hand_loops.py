"""The baselines of bench/runtime_throughput.py: hand-written confluent-kafka loops.

What a careful engineer writes without a framework, doing the same work as the framework's
topologies (see ``runtime_throughput.py`` for those), with the same client profile
(``streams_runtime.kafka.profile``) and the same commit interval:

- :func:`stateless_loop`: consume, ``json.loads`` the value, keep ``amount > THRESHOLD``, add the
  enrichment fields (:func:`enrich`), ``json.dumps`` the same way as ``Serdes.Json``, produce to
  the output topic keyed as the input;
- :func:`stateful_loop`: consume, ``json.loads`` the value (the framework's source deserializes
  it too), count per key in rocksdict (one ``get`` and one put per record, as a store without a
  cache would), and at each commit write the latest count of every key touched since the last
  commit to the output topic and to a compacted changelog topic (what a KTable's cache emits);
- both commit every ``commit_interval_s``: flush the producer, then commit the consumed offsets
  synchronously (the framework's order: output durable before input is marked done).

Each loop reads its partitions with manual ``assign()`` from the beginning and returns when all
``ends`` (partition -> end offset) are consumed and committed. Timing starts after ``assign()``.
"""

from __future__ import annotations

import json
import resource
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from rocksdict import Options, Rdict

from streams_runtime.kafka.profile import client_config

THRESHOLD = 30.0
LONG = struct.Struct(">q")


def keep(value: dict) -> bool:
    """The filter of the stateless pipeline."""
    return value["amount"] > THRESHOLD


def enrich(value: dict) -> dict:
    """The enrichment of the stateless pipeline (same function in both runs)."""
    tier = "gold" if value["amount"] > 80 else "std"
    return {**value, "amount_cents": int(value["amount"] * 100), "tier": tier}


def dumps(value: Any) -> bytes:
    """JSON exactly as ``Serdes.Json`` writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


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
        batch = consumer.consume(num_messages=2000, timeout=0.1)
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
            value = json.loads(msg.value())
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
    db = Rdict(db_path, Options())
    dirty: dict[bytes, int] = {}

    def handle(batch: list[Any]) -> None:
        for msg in batch:
            json.loads(msg.value())
            key = msg.key()
            raw = db.get(key)
            count = (LONG.unpack(raw)[0] if raw is not None else 0) + 1
            db[key] = LONG.pack(count)
            dirty[key] = count

    def on_commit() -> None:
        for key, count in dirty.items():
            value = LONG.pack(count)
            _produce(producer, output, key, value)
            _produce(producer, changelog, key, value)
        dirty.clear()

    try:
        return _run(consumer, producer, topic, ends, handle, on_commit, commit_interval_s)
    finally:
        db.close()
