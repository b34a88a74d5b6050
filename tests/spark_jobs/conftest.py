"""Fixtures of the Spark job tests: topic factories (the ``spark`` session is tests/conftest.py's,
shared with the DAG tests).

Modules whose tests use the ``spark`` fixture carry the ``spark`` marker (and ``kafka`` when they
talk to the embedded broker).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest

from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics
from tests.history import KEEP_HISTORY


@dataclass(frozen=True)
class Record:
    """One record to produce: partition, key, value (bytes or a JSON-able object), timestamp (ms)."""

    partition: int
    key: bytes | None
    value: object
    timestamp: int

    def value_bytes(self) -> bytes | None:
        if self.value is None or isinstance(self.value, bytes):
            return self.value
        return json.dumps(self.value).encode()


@pytest.fixture
def make_topic(bootstrap_servers: str, unique_name: Callable[[str], str]) -> Callable[..., str]:
    """Factory: ``make_topic("payments", partitions=3, records=[Record(...)])`` -> topic name.

    Creates the topic explicitly, produces the records to their partitions with their timestamps
    (batched by the producer, so Tansu's ListOffsets-latest is wrong for them:
    docs/decisions/0001-embedded-broker.md), and waits for every delivery. The records are stamped
    in 2024: the topic keeps them (:mod:`tests.history`).
    """

    def make(prefix: str, partitions: int, records: Iterable[Record] = ()) -> str:
        topic = unique_name(prefix)
        create_topics(create_admin(bootstrap_servers), [TopicSpec(topic, partitions, config=KEEP_HISTORY)])
        produce(bootstrap_servers, topic, records)
        return topic

    return make


def produce(bootstrap_servers: str, topic: str, records: Iterable[Record]) -> None:
    """Produce ``records`` to ``topic`` and wait until every one is delivered."""
    producer = create_producer(bootstrap_servers, {"linger.ms": 20})
    errors: list[str] = []
    for r in records:
        producer.produce(
            topic,
            key=r.key,
            value=r.value_bytes(),
            partition=r.partition,
            timestamp=r.timestamp,
            on_delivery=lambda err, _msg: errors.append(str(err)) if err else None,
        )
        producer.poll(0)
    assert producer.flush(30) == 0 and not errors, errors
