"""The aborted-record rule of ``transaction_markers`` without a broker: several writers on one
partition (an output topic written by every task), and a marker that lies beyond the records a
reader was handed."""

from __future__ import annotations

from typing import Any

from streams_runtime.kafka.tansu import transaction_markers
from streams_runtime.kafka.tansu.transaction_markers import AbortedFilter, _PartitionScan
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
