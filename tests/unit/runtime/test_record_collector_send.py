"""RecordCollector.send under at-least-once calls the client's own produce: the partition (or -1,
the partitioner's), the record's timestamp and headers reach the client as given, and a full local
queue is not an error (the producer serves delivery reports and the record is sent again)."""

from __future__ import annotations

from typing import Any

from streams_runtime.processor.internals.record_collector import ProducerSettings, RecordCollector


class QueueFullOnce:
    """A producer client whose local queue is full for the first ``full`` produce calls."""

    def __init__(self, full: int = 0) -> None:
        self.full = full
        self.produced: list[tuple[Any, ...]] = []
        self.polls = 0

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: Any = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        if self.full:
            self.full -= 1
            raise BufferError("Local: Queue full")
        self.produced.append((topic, key, value, partition, timestamp, headers))

    def poll(self, timeout: float = -1) -> int:
        self.polls += 1
        return 0


class Supplier:
    def __init__(self, client: QueueFullOnce) -> None:
        self.client = client

    def get_producer(self, bootstrap_servers: str, overrides: Any = None) -> QueueFullOnce:
        return self.client


def _collector(client: QueueFullOnce) -> RecordCollector:
    return RecordCollector(ProducerSettings("b:9092", "c", {}, client_supplier=Supplier(client)))  # type: ignore[arg-type]


def test_should_hand_partition_timestamp_and_headers_to_the_client() -> None:
    client = QueueFullOnce()
    collector = _collector(client)
    collector.send("out", b"k", b"v", (("h", b"1"),), 1_234, None)
    collector.send("changelog", b"k", b"2", (), 1_235, 3)
    assert client.produced == [
        ("out", b"k", b"v", -1, 1_234, [("h", b"1")]),
        ("changelog", b"k", b"2", 3, 1_235, None),
    ]


def test_should_serve_delivery_reports_and_send_again_when_the_local_queue_is_full() -> None:
    client = QueueFullOnce(full=2)
    collector = _collector(client)
    collector.send("out", b"k", b"v", (), 7, None)
    # the direct call and the first retry met a full queue; the producer polled before the retry
    # that went through, and the record was sent exactly once
    assert client.produced == [("out", b"k", b"v", -1, 7, None)]
    assert client.polls >= 1
