"""The platform's main job on the embedded default, as it stands today.

Steps of :func:`run_demo`:
  1. use the configured cluster, or start the embedded broker;
  2. create the ``demo-payments`` topic (3 partitions) explicitly;
  3. produce a batch of JSON payments keyed by user;
  4. consume the topic back until every record is seen (or a deadline passes);
  5. print per-user counts and totals, and check them against what was produced;
  6. with ``keep_running``: keep producing and consuming, printing running totals, until Ctrl-C;
     then stop the broker cleanly.

Later issues replace steps 3-5 with stream workers running a stateful topology.
"""

from __future__ import annotations

import json
import random
import signal
import time
from collections import Counter, defaultdict

from streams_runtime.kafka.broker import bootstrap_or_embedded, runtime_home
from streams_runtime.kafka.clients import (
    TopicPartition,
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
)

TOPIC = "demo-payments"
PARTITIONS = 3
USERS = [f"user-{i}" for i in range(5)]


def _payments(rng: random.Random, n: int, start: int) -> list[tuple[str, dict]]:
    return [
        (user, {"payment_id": start + i, "user": user, "amount": round(rng.uniform(1, 100), 2)})
        for i in range(n)
        for user in [rng.choice(USERS)]
    ]


def _produce(producer, batch: list[tuple[str, dict]]) -> None:
    for user, payment in batch:
        producer.produce(TOPIC, key=user.encode(), value=json.dumps(payment).encode())
    remaining = producer.flush(30)
    if remaining:
        raise RuntimeError(f"{remaining} demo records were not delivered within 30 s")


def _consume(consumer, expected: int, deadline_s: float = 30.0) -> list[dict]:
    seen: list[dict] = []
    deadline = time.monotonic() + deadline_s
    while len(seen) < expected and time.monotonic() < deadline:
        for msg in consumer.consume(num_messages=500, timeout=0.2):
            if msg.error():
                raise RuntimeError(f"consumer error: {msg.error()}")
            seen.append(json.loads(msg.value()))
    return seen


def _table(payments: list[dict]) -> str:
    counts: Counter[str] = Counter()
    totals: dict[str, float] = defaultdict(float)
    for p in payments:
        counts[p["user"]] += 1
        totals[p["user"]] += p["amount"]
    rows = [f"  {'user':<8} {'payments':>8} {'total':>10}"]
    rows += [f"  {u:<8} {counts[u]:>8} {totals[u]:>10.2f}" for u in sorted(counts)]
    return "\n".join(rows)


def run_demo(bootstrap_servers: str | None = None, records: int = 1000, keep_running: bool = False) -> int:
    """Run the demo (steps in the module docstring); return the process exit code."""
    rng = random.Random(42)
    # Step 1
    with bootstrap_or_embedded(bootstrap_servers) as servers:
        print(f"[demo] Kafka at {servers} (logs and state under {runtime_home()})")
        # Step 2
        admin = create_admin(servers)
        created = create_topics(admin, [TopicSpec(TOPIC, PARTITIONS)])
        print(f"[demo] topic {TOPIC} ({PARTITIONS} partitions) {'created' if created else 'exists'}")
        consumer = create_consumer(servers, "demo-reader", low_latency=True)
        consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        producer = create_producer(servers)
        try:
            # Step 3
            batch = _payments(rng, records, 0)
            started = time.monotonic()
            _produce(producer, batch)
            # Step 4
            seen = _consume(consumer, len(batch))
            elapsed = time.monotonic() - started
            print(f"[demo] produced {len(batch)} payments, consumed {len(seen)} in {elapsed:.2f}s")
            # Step 5
            print(_table(seen))
            if sorted(p["payment_id"] for p in seen) != [p["payment_id"] for _, p in batch]:
                print("[demo] FAILED: consumed records differ from produced ones")
                return 1
            print("[demo] OK: every produced payment was consumed exactly once")
            # Step 6
            if keep_running:
                _run_until_interrupted(producer, consumer, rng, seen, start=len(batch))
        finally:
            # Clients go before the broker does, so none of them waits on a dead connection.
            consumer.close()
            del producer, admin
    print("[demo] stopped cleanly")
    return 0


def _run_until_interrupted(producer, consumer, rng: random.Random, seen: list[dict], start: int) -> None:
    stop = False

    def _on_signal(signum, frame):
        nonlocal stop
        stop = True

    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    print("[demo] running until Ctrl-C ...")
    try:
        next_id = start
        while not stop:
            batch = _payments(rng, 50, next_id)
            next_id += len(batch)
            _produce(producer, batch)
            seen.extend(_consume(consumer, len(batch), deadline_s=5))
            print(f"[demo] {len(seen)} payments so far; busiest: {Counter(p['user'] for p in seen).most_common(1)}")
            for _ in range(10):
                if stop:
                    break
                time.sleep(0.1)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    print("[demo] interrupted; stopping")
