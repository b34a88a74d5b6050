"""Transaction ends on the embedded broker: the race the gate removes, and what the gate costs.

Starts its own embedded broker (warnings logged) and measures:

* rounds of six transactional producers committing together (a barrier before each of their
  ``--commits`` commits, every commit with an input offset of its own), then a seventh producer
  committing once: a round counts as pending when the seventh's input offset does not show as
  committed within 8 s. Run both ways, interleaved: ``ungated`` (confluent-kafka producers ending
  transactions freely) and ``gated`` (the runtime's ``StreamsProducer``, whose transaction ends
  take :mod:`streams_runtime.brokers.tansu.end_txn_gate`). Also the broker's WARN lines of each way (Tansu
  logs ``otherwise=Some(Committed)`` when an EndTxn completes a transaction still writing markers);
* ``init_transactions`` round trips (20 new transactional ids), which the gate makes sequential
  when a rebalance creates several tasks;
* the gate's own cost uncontended (20,000 enter/exit).

Run:  .venv/bin/python bench/transaction_ends.py [--rounds 10] [--commits 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streams_runtime.brokers import EmbeddedBroker  # noqa: E402
from streams_runtime.brokers.tansu.end_txn_gate import EndTxnGate  # noqa: E402
from streams_runtime.kafka.clients import Producer, TopicPartition, create_consumer  # noqa: E402
from streams_runtime.processor.internals.record_collector import StreamsProducer  # noqa: E402
from tests.integration.streams_support import make_topics  # noqa: E402

PRODUCERS, PARTITIONS = 6, 4


class _Plain:
    """A confluent-kafka transactional producer with StreamsProducer's method names, no gate."""

    def __init__(self, bootstrap: str, tid: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 1})

    def init_transactions(self, timeout_s: float) -> None:
        self.producer.init_transactions(timeout_s)

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def produce(self, topic: str, key: bytes, value: bytes, partition: int, ts: int, headers: Any) -> None:
        self.producer.produce(topic, value, key, partition)

    def flush(self, timeout_s: float) -> int:
        return self.producer.flush(timeout_s)

    def send_offsets(self, offsets: list, metadata: Any, timeout_s: float) -> None:
        self.producer.send_offsets_to_transaction(offsets, metadata, timeout_s)

    def commit_transaction(self, timeout_s: float) -> None:
        self.producer.commit_transaction(timeout_s)


def _producer(bootstrap: str, tid: str, gated: bool) -> Any:
    producer: Any
    if gated:
        producer = StreamsProducer(
            bootstrap, tid, {"transactional.id": tid, "linger.ms": 1}, _no_report, True
        )
    else:
        producer = _Plain(bootstrap, tid)
    producer.init_transactions(30)
    return producer


def _no_report(err: Any, msg: Any) -> None:
    if err is not None:
        raise RuntimeError(err)


def _commit(producer: Any, topic: str, offsets: list, metadata: Any, barrier: Any = None) -> None:
    producer.begin_transaction()
    for partition in range(PARTITIONS):
        producer.produce(topic, b"k", b"v", partition, 0, None)
    producer.flush(30)
    producer.send_offsets(offsets, metadata, 30)
    if barrier is not None:
        barrier.wait(60)
    producer.commit_transaction(30)


def one_round(bootstrap: str, gated: bool, commits: int) -> bool:
    """Whether the late transaction completed (its input offset shows within 8 s)."""
    run = uuid.uuid4().hex[:8]
    topic, source = f"ends-{run}", f"ends-src-{run}"
    make_topics(bootstrap, **{topic: PARTITIONS, source: PRODUCERS + 1})
    consumer = create_consumer(bootstrap, f"ends-group-{run}")
    metadata = consumer.consumer_group_metadata()
    barrier = threading.Barrier(PRODUCERS)

    def work(i: int) -> None:
        producer = _producer(bootstrap, f"{run}-{i}", gated)
        for n in range(commits):
            _commit(producer, topic, [TopicPartition(source, i, n + 1)], metadata, barrier)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(PRODUCERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    late = _producer(bootstrap, f"{run}-late", gated)
    _commit(late, topic, [TopicPartition(source, PRODUCERS, 1)], metadata)
    deadline = time.monotonic() + 8
    try:
        while time.monotonic() < deadline:
            [tp] = consumer.committed([TopicPartition(source, PRODUCERS)], timeout=10)
            if tp.offset == 1:
                return True
            time.sleep(0.1)
        return False
    finally:
        consumer.close()


def _warnings(log: Path) -> int:
    lines = log.read_text(errors="replace").splitlines()
    return sum("WARN" in line and "otherwise" in line for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--commits", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("RUST_LOG", "warn")
    with tempfile.TemporaryDirectory() as root:
        log = Path(root) / "broker.log"
        with EmbeddedBroker(log_file=log) as broker:
            bootstrap = broker.bootstrap_servers
            pending = {"ungated": 0, "gated": 0}
            warns = {"ungated": 0, "gated": 0}
            for r in range(args.rounds):
                for way in ("ungated", "gated"):
                    before = _warnings(log)
                    done = one_round(bootstrap, way == "gated", args.commits)
                    pending[way] += not done
                    warns[way] += _warnings(log) - before
                    outcome = "completed" if done else "PENDING"
                    print(f"round {r + 1}/{args.rounds} {way}: late transaction {outcome}")
            for way in ("ungated", "gated"):
                print(
                    f"{way}: late transaction pending in {pending[way]} of {args.rounds} rounds; "
                    f"broker warnings {warns[way]}"
                )
            times = []
            for _ in range(20):
                producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": uuid.uuid4().hex})
                started = time.perf_counter()
                producer.init_transactions(30)
                times.append(time.perf_counter() - started)
            print(
                f"init_transactions: median {1000 * statistics.median(times):.1f} ms, "
                f"max {1000 * max(times):.1f} ms (20 new transactional ids)"
            )
    gate = EndTxnGate("127.0.0.1:1", directory=tempfile.gettempdir())
    n = 20_000
    started = time.perf_counter()
    for _ in range(n):
        with gate.held():
            pass
    print(f"gate, uncontended: {1e6 * (time.perf_counter() - started) / n:.2f} us per transaction end")


if __name__ == "__main__":
    main()
