"""CPU per record of the stream threads' source partitioning check, without a broker.

The check (``streams_runtime/processor/internals/partitioning_check.py``) sees every run of one
partition of a poll batch as the task executor hands the runs to the tasks' queues (the cut of the
batch into runs is the executor's, made anyway). This times its ``check_run`` over the runs of
poll-sized batches of real confluent-kafka ``Message`` objects (``--batch`` records in runs of one
partition, ``--partitions`` partitions, keys ``user-<i>`` placed by murmur2 as Kafka's default
partitioner does), in three regimes:

* ``steady``: every partition is past its first ``FULL_CHECKS`` records, one record in
  ``SAMPLE_EVERY`` is hashed (what a running application pays);
* ``first``: every record is hashed (the first ``FULL_CHECKS`` records of each partition);
* ``hash``: the hash alone (``partition_for``) of one key, for scale.

Figures are the best of ``--rounds`` rounds (nanoseconds per record, one core). For the order of
magnitude they are compared against: a whole per-key count costs about 18 us of CPU per record
in the peer harness (docs/decisions/0003-threads-and-processes.md).

Run:  .venv/bin/python bench/partitioning_check.py [--batch 2000] [--partitions 8] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Message  # noqa: E402

from streams_runtime.kafka.partitioner import partition_for  # noqa: E402
from streams_runtime.processor.internals.metrics import StreamsMetrics  # noqa: E402
from streams_runtime.processor.internals.partitioning_check import (  # noqa: E402
    SAMPLE_EVERY,
    SourcePartitioningCheck,
)

TOPIC = "payments"


def batch(size: int, partitions: int) -> list[Message]:
    """``size`` records in runs of one partition, each key on its murmur2 partition."""
    by_partition: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    i = 0
    while min(len(keys) for keys in by_partition.values()) < size // partitions:
        key = f"user-{i}".encode()
        by_partition[partition_for(key, partitions)].append(key)
        i += 1
    out: list[Message] = []
    for p, keys in by_partition.items():
        for offset, key in enumerate(keys[: size // partitions]):
            out.append(Message(topic=TOPIC, partition=p, key=key, value=b"{}", offset=offset))
    return out


def runs_of(messages: list[Message]) -> list[tuple[str, int, list[Message]]]:
    """The batch cut into runs of one partition, as the task executor cuts it."""
    runs: list[tuple[str, int, list[Message]]] = []
    for msg in messages:
        if runs and runs[-1][1] == msg.partition():
            runs[-1][2].append(msg)
        else:
            runs.append((TOPIC, msg.partition(), [msg]))
    return runs


def per_record_ns(check: SourcePartitioningCheck, messages: list[Message], rounds: int) -> float:
    number = 50
    runs = runs_of(messages)

    def one_batch() -> None:
        for topic, partition, run in runs:
            check.check_run(topic, partition, run)

    best = min(timeit.repeat(one_batch, number=number, repeat=rounds))
    return best / number / len(messages) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=2000, help="records per poll batch (default 2000)")
    parser.add_argument("--partitions", type=int, default=8, help="partitions of the topic (default 8)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, the best is kept (default 5)")
    args = parser.parse_args()
    messages = batch(args.batch, args.partitions)
    counts = {TOPIC: args.partitions}

    def make(full_checks: int) -> SourcePartitioningCheck:
        return SourcePartitioningCheck(lambda: counts, lambda: {}, StreamsMetrics(), full_checks=full_checks)

    steady = make(full_checks=0)
    steady.check(messages)  # every partition known
    first = make(full_checks=10**12)
    hash_ns = min(timeit.repeat(lambda: partition_for(b"user-12345", 8), number=100_000, repeat=args.rounds))
    print(f"batch {len(messages)} records, {args.partitions} partitions, best of {args.rounds}")
    steady_ns = per_record_ns(steady, messages, args.rounds)
    print(f"steady (1 in {SAMPLE_EVERY} hashed):  {steady_ns:8.1f} ns/record")
    print(f"first records (every one hashed): {per_record_ns(first, messages, args.rounds):8.1f} ns/record")
    print(f"hash of a 10-byte key alone:       {hash_ns / 100_000 * 1e9:8.1f} ns")


if __name__ == "__main__":
    main()
