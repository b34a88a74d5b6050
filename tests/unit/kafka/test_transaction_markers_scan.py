"""The aborted-record rule of ``transaction_markers`` without a broker: several writers on one
partition (an output topic written by every task), and a marker that lies beyond the records a
reader was handed."""

from __future__ import annotations

from typing import Any

from streams_runtime.brokers.tansu import transaction_markers
from streams_runtime.brokers.tansu.transaction_markers import AbortedFilter, _PartitionScan
from tests.fakes import FakeMessage

COMMIT, ABORT = 1, 0
A, B, C = 1, 2, 3  # producer ids


def _scan(log: list[tuple[int, int, int, bool, int | None]]) -> Any:
    scan = _PartitionScan(0, 0)
    for batch in log:
        scan.add(*batch)
    return scan


def test_a_transaction_begun_earlier_and_aborted_later_is_still_aborted():
    # A writes 0-1 and B 2-3; B is aborted first (marker 4), A later (marker 5); C commits 6-7
    scan = _scan(
        [
            (0, 1, A, True, None),
            (2, 3, B, True, None),
            (4, 4, B, True, ABORT),
            (5, 5, A, True, ABORT),
            (6, 7, C, True, None),
            (8, 8, C, True, COMMIT),
            (9, 9, -1, False, None),
        ]
    )
    assert [o for o in range(10) if scan.is_aborted(o)] == [0, 1, 2, 3]


def test_interleaved_transactions_of_three_writers():
    scan = _scan(
        [
            (0, 0, A, True, None),
            (1, 1, B, True, None),
            (2, 2, C, True, None),
            (3, 3, A, True, None),
            (4, 4, C, True, ABORT),
            (5, 5, B, True, COMMIT),
            (6, 6, A, True, ABORT),
            (7, 7, B, True, None),
            (8, 8, B, True, ABORT),
        ]
    )
    assert [o for o in range(9) if scan.is_aborted(o)] == [0, 2, 3, 7]


def test_the_filter_reads_on_until_the_marker_of_every_record_it_was_handed(monkeypatch):
    """The reader was handed offsets 0-2: A's records 0-1 (marker not yet scanned) and B's 2,
    committed at 3; A's ABORT marker comes at 4, beyond the last record handed over."""
    fetches = iter(
        [
            (4, [(0, 1, A, True, None), (2, 2, B, True, None), (3, 3, B, True, COMMIT)]),
            (5, [(4, 4, A, True, ABORT)]),
        ]
    )
    monkeypatch.setattr(transaction_markers, "batches", lambda data: data)
    monkeypatch.setattr(AbortedFilter, "_fetch", lambda self, tp, offset: next(fetches, (5, [])))
    handed = [FakeMessage(o, topic="out", partition=0) for o in range(3)]
    kept = AbortedFilter("unused:9092").committed(("out", 0), handed)
    assert [m.offset() for m in kept] == [2]


def _batch(base: int, count: int, pid: int, transactional: bool, control: int | None = None) -> bytes:
    """One v2 record batch as a broker writes it; a control batch holds one COMMIT/ABORT record."""
    import struct

    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        2, 0, transactional, pid, 0 if pid >= 0 else -1, 0 if pid >= 0 else -1, 1 << 20
    )
    for i in range(count):
        key = struct.pack(">hh", 0, control) if control is not None else b"k%d" % i
        builder.append(
            i, timestamp=1000 + i, key=key, value=None if control is not None else b"v", headers=[]
        )
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, base)
    if control is not None:  # the attributes' control bit (kafka-python's builder writes data batches only)
        struct.pack_into(">h", raw, 21, struct.unpack_from(">h", raw, 21)[0] | 0x20)
    return bytes(raw)


def test_the_batches_of_a_fetch_are_decoded_and_a_partial_last_batch_is_left_out():
    log = (
        _batch(0, 2, A, True)
        + _batch(2, 1, -1, False)
        + _batch(3, 1, A, True, control=ABORT)
        + _batch(4, 3, B, True)
        + _batch(7, 1, B, True, control=COMMIT)
    )
    partial = _batch(8, 2, C, True)[:-5]
    assert list(transaction_markers.batches(memoryview(log + partial))) == [
        (0, 1, A, True, None),
        (2, 2, -1, False, None),
        (3, 3, A, True, ABORT),
        (4, 6, B, True, None),
        (7, 7, B, True, COMMIT),
    ]
