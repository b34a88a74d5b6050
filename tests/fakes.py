"""Test fakes shared by the unit tests: one definition each.

- :class:`FakeError`, :class:`FakeMessage`: what a confluent consumer returns (records, errors,
  end-of-partition events);
- :class:`FakeEofConsumer`: a consumer over in-memory partitions whose listed end may lag the true
  end, as the embedded broker's ListOffsets does (docs/decisions/0001-embedded-broker.md);
- :class:`FakeStreamsProducer`: the producer seam of the record collectors;
- :class:`NoOpProcessor`: a processor that does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from streams_runtime.kafka.clients import PARTITION_EOF
from streams_runtime.processor.api import Processor


@dataclass(frozen=True)
class FakeError:
    """A consumer error: ``code()`` and ``str()`` as librdkafka's ``KafkaError``."""

    error_code: int
    text: str = "fake error"

    def code(self) -> int:
        return self.error_code

    def fatal(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.text


class FakeMessage:
    """A consumed record, or an error event when ``error`` is given."""

    def __init__(
        self,
        offset: int,
        key: bytes | None = None,
        value: bytes | None = None,
        headers: list | None = None,
        *,
        topic: str = "topic",
        partition: int = 0,
        timestamp: int | None = None,
        error: FakeError | None = None,
    ) -> None:
        self._offset, self._key, self._value, self._headers = offset, key, value, headers
        self._topic, self._partition, self._error = topic, partition, error
        self._timestamp = 1_000 + offset if timestamp is None else timestamp

    def error(self) -> FakeError | None:
        return self._error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, self._timestamp)

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list | None:
        return self._headers


class FakeEofConsumer:
    """A consumer with ``enable.partition.eof`` over in-memory partitions.

    :param partitions: ``(topic, partition) -> (low, listed end, true end)``; the partition holds
        one record at every offset in ``[low, true end)``; ListOffsets answers ``(low, listed end)``.
    :param fail: ``(topic, partition)`` whose first fetch answers a broker error instead.
    :param stall: ``(topic, partition)`` that never reach their end (no EOF event).
    """

    def __init__(
        self,
        partitions: dict[tuple[str, int], tuple[int, int, int]],
        fail: set[tuple[str, int]] | None = None,
        stall: set[tuple[str, int]] | None = None,
    ) -> None:
        self.partitions = partitions
        self.fail = fail or set()
        self.stall = stall or set()
        self.positions: dict[tuple[str, int], int] = {}
        self.assignments: list[list[tuple[str, int, int]]] = []
        self.unassigned = 0

    def get_watermark_offsets(self, tp: Any, timeout: float = 0.0, cached: bool = False) -> tuple[int, int]:
        low, listed, _ = self.partitions[(tp.topic, tp.partition)]
        return low, listed

    def assign(self, tps: list[Any]) -> None:
        self.assignments.append([(tp.topic, tp.partition, tp.offset) for tp in tps])
        self.positions = {(tp.topic, tp.partition): tp.offset for tp in tps}

    def unassign(self) -> None:
        self.positions = {}
        self.unassigned += 1

    def consume(self, num_messages: int = 1, timeout: float = 0.0) -> list[FakeMessage]:
        out: list[FakeMessage] = []
        for tp, position in list(self.positions.items()):
            topic, partition = tp
            if tp in self.fail:
                out.append(FakeMessage(position, topic=topic, partition=partition, error=FakeError(-1)))
                continue
            end = self.partitions[tp][2]
            while position < end and len(out) < num_messages:
                out.append(FakeMessage(position, b"k%d" % position, b"v", topic=topic, partition=partition))
                position += 1
            if position >= end and tp not in self.stall and len(out) < num_messages:
                out.append(FakeMessage(end, topic=topic, partition=partition, error=FakeError(PARTITION_EOF)))
                position += 1  # one EOF event per reaching the end
            self.positions[tp] = position
        return out


class FakeStreamsProducer:
    """``StreamsProducer``'s surface for tests that patch it into ``record_collector``.

    Records every public call (:attr:`calls`) and every record (:attr:`sent`), acknowledges
    pending records when polled or flushed (offsets count from 0 per partition), and fails where
    told to:

    - :attr:`fail`: ``{method name: exception}``, raised once by that method;
    - :attr:`fail_deliveries` (class-wide): every delivery report carries an error;
    - :attr:`on_call` (class-wide): called with each public method's name, after it acted.

    Call :meth:`reset` before each test (the class-wide state is shared).
    """

    instances: ClassVar[list[FakeStreamsProducer]] = []
    fail_deliveries: ClassVar[bool] = False
    on_call: ClassVar[Callable[[str], None] | None] = None

    def __init__(
        self,
        bootstrap_servers: str,
        client_id: str,
        overrides: Any,
        on_delivery: Any,
        errors_only: bool,
        client_supplier: Any = None,
    ) -> None:
        self.client_id = client_id
        self.config = dict(overrides)
        self.on_delivery = on_delivery
        self.errors_only = errors_only
        self.calls: list[str] = []
        self.sent: list[tuple[Any, ...]] = []
        self.pending: list[tuple[str, int]] = []
        self.offsets: dict[tuple[str, int], int] = {}
        self.fail: dict[str, Exception] = {}
        #: the timeout of each transactional call's last invocation, by method name
        self.timeouts: dict[str, float] = {}
        self.wedged = False
        self.producer = self
        FakeStreamsProducer.instances.append(self)

    @classmethod
    def reset(cls) -> None:
        cls.instances.clear()
        cls.fail_deliveries = False
        cls.on_call = None

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise self.fail.pop(name)

    def _done(self, name: str) -> None:
        if FakeStreamsProducer.on_call is not None:
            FakeStreamsProducer.on_call(name)

    def _deliver(self) -> None:
        for topic, partition in self.pending:
            offset = self.offsets.get((topic, partition), -1) + 1
            self.offsets[(topic, partition)] = offset
            error = "broker said no" if FakeStreamsProducer.fail_deliveries else None
            self.on_delivery(error, FakeMessage(offset, topic=topic, partition=partition))
        self.pending.clear()

    def produce(self, topic: str, key: Any, value: Any, partition: Any, timestamp: int, headers: Any) -> None:
        self._call("produce")
        self.sent.append((topic, key, value, partition, timestamp, headers))
        self.pending.append((topic, partition or 0))
        self._done("produce")

    def poll(self) -> None:
        self._call("poll")
        self._deliver()
        self._done("poll")

    def flush(self, timeout_s: float) -> int:
        self._call("flush")
        self._deliver()
        self._done("flush")
        return 0

    def init_transactions(self, timeout_s: float) -> None:
        self.timeouts["init_transactions"] = timeout_s
        self._call("init_transactions")

    def begin_transaction(self) -> None:
        self._call("begin_transaction")

    def send_offsets(self, offsets: list[Any], group_metadata: Any, timeout_s: float) -> None:
        self.timeouts["send_offsets"] = timeout_s
        self._call("send_offsets")

    def commit_transaction(self, timeout_s: float) -> None:
        self.timeouts["commit_transaction"] = timeout_s
        self._call("commit_transaction")

    def abort_transaction(self, timeout_s: float) -> None:
        self._call("abort_transaction")

    def purge(self) -> None:
        self._call("purge")

    def close(self, timeout_s: float = 10.0) -> None:
        self._call("close")
        self._done("close")


class NoOpProcessor(Processor):
    """A processor that does nothing."""

    def process(self, record: Any) -> None:
        pass
