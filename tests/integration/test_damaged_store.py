"""A task whose RocksDB store cannot be opened heals itself from its changelog.

A stateful count runs on 4 tasks and closes cleanly; the store of ONE task (partition 1) is then
damaged as a disk or an operator might damage it: ``CURRENT`` deleted, the ``MANIFEST`` deleted,
an SST with a flipped block (bad checksum), an SST truncated. The restart wipes that task's
directory (a WARN names the reason), restores it from the whole changelog partition, and the
three other tasks restore nothing and go on: every count comes out exact.
"""

from __future__ import annotations

import logging
import os
import pathlib
import struct
from collections import Counter

import pytest
from rocksdict import Options, Rdict

from streams_runtime.state.internals.rocksdb_store import OFFSETS_COLUMN_FAMILY
from tests.integration.streams_support import latest_until
from tests.integration.test_kafka_streams_restart import PARTITIONS, Case

DAMAGED_PARTITION = 1


def _flush_to_sst(db_dir: pathlib.Path) -> None:
    """Move the store's data from its write-ahead log into an SST file (as RocksDB does once a
    memtable fills), so there is an SST to damage."""
    db = Rdict(
        str(db_dir), Options(raw_mode=True), column_families={OFFSETS_COLUMN_FAMILY: Options(raw_mode=True)}
    )
    db.flush()
    db.close()


def _damage(db_dir: pathlib.Path, kind: str) -> None:
    if kind == "missing-current":
        (db_dir / "CURRENT").unlink()
    elif kind == "missing-manifest":
        manifests = list(db_dir.glob("MANIFEST-*"))
        assert manifests
        for manifest in manifests:
            manifest.unlink()
    else:
        sst = max(db_dir.glob("*.sst"), key=lambda p: p.stat().st_size)
        size = sst.stat().st_size
        if kind == "truncated-sst":
            os.truncate(sst, size // 2)
        else:  # bad checksum: flip bytes inside a data block
            with open(sst, "r+b") as f:
                f.seek(size // 4)
                chunk = f.read(32)
                f.seek(size // 4)
                f.write(bytes(b ^ 0xFF for b in chunk))


@pytest.mark.parametrize("kind", ["missing-current", "missing-manifest", "bad-checksum-sst", "truncated-sst"])
def test_a_damaged_store_is_wiped_and_restored_without_stopping_the_other_tasks(
    bootstrap_servers, unique_name, tmp_path, caplog, kind
):
    case = Case(bootstrap_servers, unique_name, tmp_path / "state")
    # many keys, so partition 1's SST spans several data blocks
    case.run([f"k{i % 4000}" for i in range(8000)])
    db_dir = tmp_path / "state" / case.app / f"0_{DAMAGED_PARTITION}" / "counts"
    _flush_to_sst(db_dir)
    assert list(db_dir.glob("*.sst"))
    _damage(db_dir, kind)

    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    listener = case.run([f"k{i}" for i in range(8)])  # exact counts or it fails

    changelog_partition = (case.changelog, DAMAGED_PARTITION)
    in_changelog = latest_until(
        bootstrap_servers,
        case.changelog,
        PARTITIONS,
        lambda m: (m.key().decode(), struct.unpack(">q", m.value()[-8:])[0]),
        lambda got: got == dict(case.expected),
        timeout=20,
    )
    assert in_changelog == dict(case.expected)
    # the damaged task restored its whole changelog partition; the others restored nothing
    assert set(listener.restored) == {changelog_partition}, listener.ended
    assert listener.restored[changelog_partition] >= 1000
    warnings = [r.getMessage() for r in caplog.records if "local state is damaged" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert f"task 0_{DAMAGED_PARTITION}" in warnings[0] and "counts" in warnings[0]
    assert Counter(case.expected)["k1"] == 3  # 2 from the first run, 1 after the restart
