"""StreamsProducer and RecordCollector: the producer side of one StreamThread.

Created and owned by a StreamThread; the thread's tasks borrow the collector (their sinks and
change-logging stores call :meth:`RecordCollector.send`), the TaskManager calls
:meth:`RecordCollector.wait_for_acks` at commit step 2.

``StreamsProducer`` is the one seam around the confluent producer: produce, poll, flush, close.
Exactly-once (issue 6) adds ``begin/commit/abort_transaction`` and ``send_offsets`` there, and
nothing else has to change; under at-least-once it is a plain producer with its own batching
(``linger.ms``).

Partitioning: a record with an explicit partition (changelogs: the task's partition; a sink
partitioner) goes there; otherwise the producer's ``murmur2_random`` partitioner places it, which
is Kafka's DefaultPartitioner (murmur2 of the key bytes) for keyed records.

Delivery reports come back through one producer-level callback while the producer is polled
(once per thread loop and during flush, never per record):
  - an error is kept and raised by the next ``send``/``poll``/``wait_for_acks`` (the thread fails, the
    uncaught-exception policy decides), or logged and skipped under
    ``default_production_exception_handler=continue``;
  - the offset of every record written to a changelog topic is kept in :attr:`changelog_offsets`
    ``{(topic, partition): last offset}`` for the state managers' checkpoints.
With no changelog topic in the topology, librdkafka reports errors only (no per-record callback).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import Producer, create_producer

log = logging.getLogger("streams_runtime.processor")


class ProductionError(StreamsError):
    """A record could not be written to Kafka (delivery report error)."""


class StreamsProducer:
    """The thread's producer (see the module docstring); the transaction seam of issue 6."""

    def __init__(self, bootstrap_servers: str, client_id: str, overrides: Mapping[str, Any],
                 on_delivery: Any, errors_only: bool) -> None:
        config = {
            "client.id": client_id,
            "partitioner": "murmur2_random",
            "linger.ms": 5,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
            "on_delivery": on_delivery,
        }
        if errors_only:
            config["delivery.report.only.error"] = True
        config.update(overrides)
        self.producer: Producer = create_producer(bootstrap_servers, config)

    def produce(self, topic: str, key: bytes | None, value: bytes | None, partition: int | None,
                timestamp: int, headers: Any) -> None:
        produce = self.producer.produce
        while True:
            try:
                if partition is None:
                    produce(topic, value, key, timestamp=timestamp, headers=headers)
                else:
                    produce(topic, value, key, partition, timestamp=timestamp, headers=headers)
                return
            except BufferError:  # local queue full: serve delivery reports, then retry
                self.producer.poll(0.05)

    def poll(self) -> None:
        self.producer.poll(0)

    def flush(self, timeout_s: float) -> int:
        return self.producer.flush(timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        self.producer.flush(timeout_s)
        self.producer.close()


class RecordCollector:
    """Sends the records of one thread's tasks; see the module docstring."""

    def __init__(self, bootstrap_servers: str, client_id: str, overrides: Mapping[str, Any],
                 changelog_topics: Iterable[str], continue_on_error: bool = False) -> None:
        self._changelog_topics = frozenset(changelog_topics)
        self.changelog_offsets: dict[tuple[str, int], int] = {}
        self._error: BaseException | None = None
        self._continue_on_error = continue_on_error
        self.producer = StreamsProducer(
            bootstrap_servers, client_id, overrides, self._on_delivery, not self._changelog_topics
        )
        self._produce = self.producer.produce

    def send(self, topic: str, key: bytes | None, value: bytes | None, headers: tuple,
             timestamp: int, partition: int | None) -> None:
        if self._error is not None:
            self._raise_error()
        self._produce(topic, key, value, partition, timestamp, list(headers) if headers else None)

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            if self._continue_on_error:
                log.warning("Error sending record to topic %s: %s; skipped "
                            "(default_production_exception_handler=continue)", msg.topic(), err)
                return
            if self._error is None:
                self._error = ProductionError(
                    f"error sending record to topic {msg.topic()} partition {msg.partition()}: {err}"
                )
            return
        topic = msg.topic()
        if topic in self._changelog_topics:
            self.changelog_offsets[(topic, msg.partition())] = msg.offset()

    def _raise_error(self) -> None:
        error, self._error = self._error, None
        raise error

    def poll(self) -> None:
        """Serve delivery reports (once per thread loop); raise a delivery error if one came."""
        self.producer.poll()
        if self._error is not None:
            self._raise_error()

    def wait_for_acks(self, timeout_s: float = 60.0) -> None:
        """Commit step 2: wait until every record sent so far is acknowledged (or failed).

        Not named ``flush``: StreamTask.commit() calls a collector's ``flush`` per task, and the
        producer must be flushed once per commit, after every task's stores (step 1).
        """
        remaining = self.producer.flush(timeout_s)
        if self._error is not None:
            self._raise_error()
        if remaining:
            raise ProductionError(f"{remaining} records were not acknowledged within {timeout_s}s")

    def close(self, timeout_s: float = 10.0) -> None:
        self.producer.close(timeout_s)
