"""The runtime next to Kafka Streams on one Apache Kafka: the same smoke workload, the same input.

In the spirit of Apache Kafka's own system-test smoke driver: many keys, min / max / sum / count /
average (a table-table join) / windowed counts / a count behind a repartition
(tests/integration/smoke_app.py and ``SmokeMain`` of jvm/kafka-streams-oracle). Kafka Streams 4.3.1
runs it in one JVM; this runtime as two instances, one of which is stopped and started again after
the first half of the input. The last value of every key of every output must be the same on both
sides, and equal to what a plain computation over the generated input gives.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from streams_runtime.kafka.clients import (
    TopicPartition,
    committed_offsets,
    create_admin,
    create_consumer,
    create_producer,
    existing_topics,
    partition_counts,
)
from streams_runtime.serdes import Serdes
from tests.integration.smoke_app import HOUR_MS
from tests.integration.streams_support import WorkerProcess, make_topics, read_to_end
from tests.oracle.kafka_streams_side import CACHE_DIR, JVM_OPTS, check_built
from tests.partitioning import partition_for

pytestmark = [pytest.mark.kafka, pytest.mark.kafka_only, pytest.mark.timeout(600)]

PARTITIONS = 4
KEYS = 300
RECORDS = 12_000
OUTPUTS = ("min", "max", "sum", "cnt", "avg", "wcnt", "tagg")
# Four hours ago, on the hour; every record 1 s after the previous one. Recent on purpose: Apache
# Kafka deletes a windowed store's changelog records (cleanup.policy compact,delete, retention.ms
# the store's retention plus one day) as soon as their timestamps are older than that, so input
# stamped months ago would leave the restarted instance nothing to restore, on Kafka Streams too.
START_MS = (int(time.time()) // 3600 - 4) * 3_600_000


def _input() -> list[tuple[str, int, int]]:
    """(key, value, timestamp) in production order, the same on every run."""
    rng = random.Random(20261129)
    return [(f"k{rng.randrange(KEYS)}", rng.randrange(1000), START_MS + i * 1000) for i in range(RECORDS)]


def _expected(records: list[tuple[str, int, int]]) -> dict[str, dict[str, float]]:
    values: dict[str, list[int]] = defaultdict(list)
    windows: Counter[str] = Counter()
    groups: Counter[str] = Counter()
    for key, value, ts in records:
        values[key].append(value)
        windows[f"{key}@{ts - ts % HOUR_MS}"] += 1
        groups[f"g{value % 10}"] += 1
    return {
        "min": {k: min(v) for k, v in values.items()},
        "max": {k: max(v) for k, v in values.items()},
        "sum": {k: sum(v) for k, v in values.items()},
        "cnt": {k: len(v) for k, v in values.items()},
        "avg": {k: sum(v) / len(v) for k, v in values.items()},
        "wcnt": dict(windows),
        "tagg": dict(groups),
    }


def _produce(bootstrap: str, topic: str, records: list[tuple[str, int, int]]) -> None:
    long_ = Serdes.Long()
    producer = create_producer(bootstrap)
    for key, value, ts in records:
        producer.produce(
            topic,
            long_.serialize(topic, value),
            key.encode(),
            partition=partition_for(key.encode(), PARTITIONS),
            timestamp=ts,
        )
    assert producer.flush(30) == 0


def _caught_up(bootstrap: str, app_id: str, input_topic: str) -> bool:
    """Every input and repartition offset of ``app_id`` committed up to its partition's end."""
    admin = create_admin(bootstrap)
    topics = [input_topic] + [
        t for t in existing_topics(admin) if t.startswith(app_id) and t.endswith("-repartition")
    ]
    consumer = create_consumer(bootstrap, f"{app_id}-probe", {"enable.auto.commit": False})
    try:
        counts = partition_counts(admin, topics)
        wanted = [(t, p) for t in topics for p in range(counts[t])]
        committed = committed_offsets(bootstrap, app_id, wanted)
        for topic, partition in wanted:
            _, end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            if end > 0 and committed[(topic, partition)] != end:
                return False
        return True
    finally:
        consumer.close()


def _wait_caught_up(bootstrap: str, input_topic: str, *app_ids: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(_caught_up(bootstrap, app_id, input_topic) for app_id in app_ids):
        assert time.monotonic() < deadline, f"{app_ids} not caught up with {input_topic} in {timeout:.0f} s"
        time.sleep(1.0)


def _latest(bootstrap: str, topic: str, value_serde) -> dict[str, float]:
    return {
        record.key().decode(): value_serde.deserialize(topic, record.value())
        for record in read_to_end(bootstrap, topic, PARTITIONS, timeout=60)
    }


class KafkaStreamsSmoke:
    """``SmokeMain`` in its own JVM; stopped by closing its standard input."""

    def __init__(self, bootstrap: str, app_id: str, input_topic: str, prefix: str, state_dir: Path) -> None:
        check_built()
        spec = {
            "servers": bootstrap,
            "application_id": app_id,
            "state_dir": str(state_dir),
            "commit_ms": 1000,
            "input": input_topic,
            "output_prefix": prefix,
        }
        self.process = subprocess.Popen(
            [
                "java",
                *JVM_OPTS,
                "-cp",
                f"{CACHE_DIR}/*",
                "io.streamsruntime.oracle.SmokeMain",
                json.dumps(spec),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline().strip()  # type: ignore[union-attr]
        assert line == "RUNNING", line

    def stop(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        assert self.process.wait(timeout=90) == 0


def test_runtime_and_kafka_streams_give_every_key_the_same_plain_answer(kafka_broker, unique_name, tmp_path):
    bootstrap = kafka_broker
    input_topic = unique_name("smoke-in")
    ks_app, py_app = unique_name("smoke-ks"), unique_name("smoke-py")
    ks_out, py_out = f"{ks_app}-", f"{py_app}-"
    make_topics(
        bootstrap,
        **{input_topic: PARTITIONS},
        **{f"{prefix}{name}": PARTITIONS for prefix in (ks_out, py_out) for name in OUTPUTS},
    )
    records = _input()
    half = len(records) // 2
    _produce(bootstrap, input_topic, records[:half])

    settings = {"app": py_app, "input": input_topic, "output_prefix": py_out}
    env = {"SMOKE_TEST_CONFIG": json.dumps(settings)}
    app = "tests.integration.smoke_app:app"
    kafka_streams = KafkaStreamsSmoke(bootstrap, ks_app, input_topic, ks_out, tmp_path / "ks")
    instances = [WorkerProcess(app, i, bootstrap, tmp_path / f"py-{i}", env) for i in range(2)]
    try:
        _wait_caught_up(bootstrap, input_topic, py_app, ks_app)
        instances[1].stop()  # the restart in the middle: a clean stop, then the same instance again
        instances[1] = WorkerProcess(app, 1, bootstrap, tmp_path / "py-1", env)
        _produce(bootstrap, input_topic, records[half:])
        _wait_caught_up(bootstrap, input_topic, py_app, ks_app)
    finally:
        for instance in instances:
            instance.stop()
        kafka_streams.stop()

    expected = _expected(records)
    for name in OUTPUTS:
        serde = Serdes.Double() if name == "avg" else Serdes.Long()
        ours, theirs = (
            _latest(bootstrap, f"{py_out}{name}", serde),
            _latest(bootstrap, f"{ks_out}{name}", serde),
        )
        assert theirs == expected[name], f"Kafka Streams' {name} differs from the plain computation"
        assert ours == theirs, (
            f"{name}: "
            + ", ".join(
                f"{k}: ours {ours.get(k)} theirs {theirs.get(k)}"
                for k in sorted(set(ours) | set(theirs))
                if ours.get(k) != theirs.get(k)
            )[:2000]
        )
