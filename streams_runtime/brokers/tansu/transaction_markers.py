"""Transaction markers read from the log itself: which records belong to aborted transactions.

Why: a read_committed consumer relies on the broker to say which records were aborted (the
fetch response's aborted-transaction list). The embedded broker (Tansu) sends no such list, so
librdkafka hands aborted records to read_committed readers; librdkafka never shows control
records (the COMMIT/ABORT markers) to the application either. This module reads the markers
itself: it fetches the raw record batches of a partition (Fetch v4, ``read_uncommitted``, over a
plain socket: no client the runtime uses hands control batches to the application) and decodes
them with kafka-python's record-batch classes (``MemoryRecords``, ``DefaultRecordBatch``): the
batch headers, plus the one control record of each control batch.

The rule (the log's own semantics, so it is right on Apache Kafka as well): every record batch
written inside a transaction carries its producer id and the transactional flag; the transaction
ends with a control batch of the same producer id whose record says COMMIT or ABORT. So, scanning
a partition in offset order, keep per producer id the offset ranges of its transactional batches
since its last marker; an ABORT marker makes those ranges aborted, a COMMIT marker forgets them.
A record is aborted when its offset falls in an aborted range. Non-transactional records are
never aborted.

When is a scan complete enough? A read_committed fetch delivers a record only below the last
stable offset, i.e. once its transaction has ended, so its marker is already in the log: scanning
up to the high watermark seen after the record was delivered always finds it. :class:`AbortedFilter`
scans lazily: only when a delivered record lies beyond what was scanned, and from where the last
scan stopped (the open transactions are carried over), so each changelog byte is fetched twice at
most (once by the consumer, once by the scan).

Owner: a StoreChangelogReader under exactly-once (restore and standby replay), and the
read_committed readers of the tests and the demo (:mod:`streams_runtime.testing.topics`).
"""

from __future__ import annotations

import bisect
import socket
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

__all__ = ["AbortedFilter", "scan_markers"]

_FETCH, _METADATA = 1, 3
_FETCH_VERSION, _METADATA_VERSION = 4, 1
_FETCH_BYTES = 8 * 1024 * 1024
#: Tansu answers a fetch with ``max_wait_ms=0`` with no partition at all; a broker with data
#: answers at once anyway
_FETCH_WAIT_MS = 500
_ABORT = 0

TopicPartition = tuple[str, int]


class MarkerScanError(Exception):
    """The log could not be read (connection, protocol or broker error)."""


# ---------------------------------------------------------------------------- wire protocol
def _string(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">h", len(raw)) + raw


class _Connection:
    """One blocking connection to one broker; requests are answered in order."""

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise MarkerScanError(f"cannot connect to {host}:{port}: {exc}") from exc
        self._correlation = 0

    def request(self, api_key: int, version: int, body: bytes) -> memoryview:
        self._correlation += 1
        header = struct.pack(">hhi", api_key, version, self._correlation) + _string("streams-markers")
        payload = header + body
        try:
            self._sock.sendall(struct.pack(">i", len(payload)) + payload)
            (size,) = struct.unpack(">i", self._read(4))
            response = memoryview(self._read(size))
        except OSError as exc:
            raise MarkerScanError(f"request failed: {exc}") from exc
        (correlation,) = struct.unpack_from(">i", response, 0)
        if correlation != self._correlation:
            raise MarkerScanError(f"correlation id {correlation}, expected {self._correlation}")
        return response[4:]

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                raise MarkerScanError("connection closed by the broker")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self._sock.close()


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data, self.pos = data, 0

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def string(self) -> str | None:
        (n,) = self.unpack(">h")
        if n < 0:
            return None
        value = bytes(self.data[self.pos : self.pos + n]).decode()
        self.pos += n
        return value

    def bytes_(self) -> memoryview:
        (n,) = self.unpack(">i")
        if n < 0:
            return memoryview(b"")
        value = self.data[self.pos : self.pos + n]
        self.pos += n
        return value


def _leaders(conn: _Connection) -> tuple[dict[int, tuple[str, int]], dict[TopicPartition, int]]:
    """Metadata v1 for every topic (never naming one: some brokers create a named topic)."""
    r = _Reader(conn.request(_METADATA, _METADATA_VERSION, struct.pack(">i", -1)))
    brokers = {}
    for _ in range(r.unpack(">i")[0]):
        (node,) = r.unpack(">i")
        host = r.string()
        (port,) = r.unpack(">i")
        r.string()  # rack
        brokers[node] = (host or "", port)
    r.unpack(">i")  # controller
    leaders = {}
    for _ in range(r.unpack(">i")[0]):
        r.unpack(">h")
        topic = r.string() or ""
        r.unpack(">?")
        for _ in range(r.unpack(">i")[0]):
            _, partition, leader = r.unpack(">hii")
            r.unpack(f">{r.unpack('>i')[0]}i")  # replicas
            r.unpack(f">{r.unpack('>i')[0]}i")  # isr
            leaders[(topic, partition)] = leader
    return brokers, leaders


def _fetch(conn: _Connection, tp: TopicPartition, offset: int) -> tuple[int, memoryview]:
    """Fetch v4, read_uncommitted: ``(high watermark, raw record batches)`` from ``offset``."""
    body = (
        struct.pack(">iiiib", -1, _FETCH_WAIT_MS, 1, _FETCH_BYTES, 0)
        + struct.pack(">i", 1)
        + _string(tp[0])
        + struct.pack(">iiqi", 1, tp[1], offset, _FETCH_BYTES)
    )
    r = _Reader(conn.request(_FETCH, _FETCH_VERSION, body))
    r.unpack(">i")  # throttle
    for _ in range(r.unpack(">i")[0]):
        r.string()
        for _ in range(r.unpack(">i")[0]):
            _, error, high_watermark, _ = r.unpack(">ihqq")
            aborted = r.unpack(">i")[0]
            for _ in range(max(aborted, 0)):
                r.unpack(">qq")
            records = r.bytes_()
            if error:
                raise MarkerScanError(f"fetch of {tp[0]}-{tp[1]} at {offset}: error code {error}")
            return high_watermark, records
    return -1, memoryview(b"")  # no partition in the answer: nothing yet


def batches(data: memoryview) -> Iterable[tuple[int, int, int, bool, int | None]]:
    """``(base offset, last offset, producer id, transactional, control type or None)`` of each
    complete v2 batch in ``data`` (a partial batch at the end of a fetch is left out), decoded by
    kafka-python's record-batch classes; a control batch's type is its one record's (0 = ABORT,
    1 = COMMIT)."""
    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        if not isinstance(batch, DefaultRecordBatch):  # magic 0 or 1: written before transactions
            continue
        control = next(iter(batch)).type if batch.is_control_batch else None
        yield batch.base_offset, batch.last_offset, batch.producer_id, batch.is_transactional, control


# ---------------------------------------------------------------------------- the rule
@dataclass
class _PartitionScan:
    """The marker state of one partition, carried from one scan to the next."""

    start: int
    next_offset: int = -1
    open: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    aborted_first: list[int] = field(default_factory=list)  # sorted range starts
    aborted_last: list[int] = field(default_factory=list)

    def add(self, base: int, last: int, pid: int, transactional: bool, control: int | None) -> None:
        if control is not None:
            ranges = self.open.pop(pid, [])
            if control == _ABORT:
                # kept sorted by start for is_aborted: with several writers on a partition, a
                # transaction that began earlier can end (and be aborted) later; batch ranges
                # never overlap, so sorted starts mean sorted ranges
                for first, end in ranges:
                    i = bisect.bisect_left(self.aborted_first, first)
                    self.aborted_first.insert(i, first)
                    self.aborted_last.insert(i, end)
        elif transactional:
            self.open.setdefault(pid, []).append((base, last))
        self.next_offset = last + 1

    def is_aborted(self, offset: int) -> bool:
        i = bisect.bisect_right(self.aborted_first, offset) - 1
        return i >= 0 and offset <= self.aborted_last[i]

    def open_at(self, offset: int) -> bool:
        return any(first <= offset <= last for ranges in self.open.values() for first, last in ranges)

    def open_up_to(self, offset: int) -> bool:
        """Some transaction with a record at or below ``offset`` has no marker yet (in the scan)."""
        return any(first <= offset for ranges in self.open.values() for first, _ in ranges)


def scan_markers(
    bootstrap_servers: str, tp: TopicPartition, start: int = 0, timeout_s: float = 10.0
) -> _PartitionScan:
    """Scan ``tp`` from ``start`` to its high watermark; returns the scan (``is_aborted(offset)``)."""
    f = AbortedFilter(bootstrap_servers, timeout_s=timeout_s)
    try:
        f.ensure_scanned(tp, start, None)
        return f.scan_of(tp)
    finally:
        f.close()


class AbortedFilter:
    """Drops the records of aborted transactions from what a read_committed consumer delivered
    (see the module docstring). Not thread-safe: one per reader."""

    def __init__(self, bootstrap_servers: str, timeout_s: float = 10.0) -> None:
        self._bootstrap = [
            (host, int(port))
            for host, _, port in (s.strip().rpartition(":") for s in bootstrap_servers.split(","))
        ]
        self._timeout_s = timeout_s
        self._scans: dict[TopicPartition, _PartitionScan] = {}
        self._connections: dict[tuple[str, int], _Connection] = {}
        self._leaders: dict[TopicPartition, tuple[str, int]] = {}
        #: records dropped so far because their transaction was aborted
        self.dropped = 0

    def scan_of(self, tp: TopicPartition) -> _PartitionScan:
        return self._scans[tp]

    def reset(self, tp: TopicPartition) -> None:
        """Forget ``tp`` (its reader seeks elsewhere, or it was unassigned)."""
        self._scans.pop(tp, None)

    def committed(self, tp: TopicPartition, messages: list[Any], *, drop_open: bool = False) -> list[Any]:
        """``messages`` (one partition's, in offset order) without those of aborted transactions;
        with ``drop_open`` also without those of transactions that have no marker yet (a reader
        of a finished topic: a writer killed mid-transaction and fenced may leave its records
        unmarked on brokers that do not abort the fenced transaction, and they were never
        committed)."""
        if not messages:
            return messages
        self.ensure_scanned(tp, messages[0].offset(), messages[-1].offset())
        scan = self._scans[tp]
        dropping_open = drop_open and bool(scan.open)
        if not scan.aborted_first and not dropping_open:
            return messages
        kept = [
            m
            for m in messages
            if not scan.is_aborted(m.offset()) and not (dropping_open and scan.open_at(m.offset()))
        ]
        self.dropped += len(messages) - len(kept)
        return kept

    def ensure_scanned(self, tp: TopicPartition, first: int, last: int | None) -> None:
        """Scan ``tp`` until ``last`` (None: the high watermark) and the transaction of every
        record up to it has its marker (one more pass if the first stopped inside one)."""
        scan = self._scans.get(tp)
        if scan is None or first < scan.start:  # a reader that went back before the scan: again
            scan = self._scans[tp] = _PartitionScan(first, first)
        for _ in range(3):
            if last is not None and scan.next_offset > last and not scan.open_up_to(last):
                return
            if not self._scan_to_end(tp, scan) and last is None:
                return

    def _scan_to_end(self, tp: TopicPartition, scan: _PartitionScan) -> bool:
        """Fetch from ``scan.next_offset`` up to the high watermark; returns whether it moved."""
        moved = False
        deadline = time.monotonic() + self._timeout_s
        while True:
            high_watermark, data = self._fetch(tp, scan.next_offset)
            before = scan.next_offset
            for batch in batches(data):
                if batch[1] >= scan.next_offset:
                    scan.add(*batch)
            if scan.next_offset == before:
                if high_watermark < 0 and time.monotonic() < deadline:
                    continue  # an empty answer (see _FETCH_WAIT_MS): ask again
                if before < high_watermark and len(data):
                    raise MarkerScanError(f"{tp[0]}-{tp[1]}: no complete batch at offset {before}")
                return moved
            moved = True
            if scan.next_offset >= high_watermark:
                return moved

    def _fetch(self, tp: TopicPartition, offset: int) -> tuple[int, memoryview]:
        for attempt in range(2):
            address = self._leaders.get(tp) or self._find_leader(tp)
            try:
                return _fetch(self._connection(address), tp, offset)
            except MarkerScanError:
                self._drop(address)
                self._leaders.pop(tp, None)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _find_leader(self, tp: TopicPartition) -> tuple[str, int]:
        errors = []
        for address in self._bootstrap:
            try:
                brokers, leaders = _leaders(self._connection(address))
            except MarkerScanError as exc:
                self._drop(address)
                errors.append(str(exc))
                continue
            for other, node in leaders.items():
                if node in brokers:
                    self._leaders[other] = brokers[node]
            if tp in self._leaders:
                return self._leaders[tp]
            errors.append(f"no leader for {tp[0]}-{tp[1]}")
        raise MarkerScanError("; ".join(errors))

    def _connection(self, address: tuple[str, int]) -> _Connection:
        conn = self._connections.get(address)
        if conn is None:
            conn = self._connections[address] = _Connection(*address, self._timeout_s)
        return conn

    def _drop(self, address: tuple[str, int]) -> None:
        conn = self._connections.pop(address, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for address in list(self._connections):
            self._drop(address)
