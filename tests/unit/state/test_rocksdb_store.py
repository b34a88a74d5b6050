import pathlib
import re

import pytest

import streams_runtime
from streams_runtime.errors import ProcessorStateError
from streams_runtime.state.internals import rocksdb_store
from streams_runtime.state.internals.rocksdb_store import (
    RocksDBStore,
    configure_shared_memory,
    shared_block_cache,
    shared_memory_usage,
)


def open_store(context, name="db"):
    store = RocksDBStore(name)
    store.init(context)
    return store


def test_should_open_under_state_dir_then_store_name(context):
    store = open_store(context, "counts")
    assert store.path == context.state_dir / "counts"
    assert store.path.is_dir()
    assert store.persistent is True
    store.close()


def test_should_keep_data_across_close_and_reopen(context):
    store = open_store(context)
    store.put(b"k", b"v")
    store.put(b"gone", b"x")
    store.delete(b"gone")
    store.close()
    reopened = open_store(context)
    assert [(kv.key, kv.value) for kv in reopened.all()] == [(b"k", b"v")]
    reopened.close()


def test_should_have_no_committed_offset_before_any_commit(context):
    store = open_store(context)
    assert store.committed_offset() is None
    store.close()


def test_should_store_restored_records_and_their_offset_together(context):
    store = open_store(context)
    store.restore_batch([(b"a", b"1"), (b"b", b"2"), (b"a", None)], changelog_offset=41)
    store.close()
    reopened = open_store(context)
    assert reopened.committed_offset() == 41
    assert [(kv.key, kv.value) for kv in reopened.all()] == [(b"b", b"2")]
    reopened.close()


def test_should_write_data_and_offset_in_one_write_batch(context, monkeypatch):
    store = open_store(context)
    batches = []
    real_write_batch = rocksdb_store.WriteBatch

    def recording_write_batch(*args, **kwargs):
        batch = real_write_batch(*args, **kwargs)
        batches.append(batch)
        return batch

    monkeypatch.setattr(rocksdb_store, "WriteBatch", recording_write_batch)
    store.restore_batch([(b"a", b"1"), (b"b", None)], changelog_offset=7)
    assert len(batches) == 1  # the records and the offset: one atomic batch
    assert store.committed_offset() == 7
    assert store.get(b"a") == b"1"
    store.close()


def test_should_keep_offset_when_restoring_without_one(context):
    store = open_store(context)
    store.restore_batch([(b"a", b"1")], changelog_offset=5)
    store.restore_batch([(b"b", b"2")])
    assert store.committed_offset() == 5
    store.close()


def test_should_restore_non_bytes_records_through_the_checked_path_without_partial_writes(context):
    store = open_store(context)
    store.restore_batch([(b"a", b"1"), (bytearray(b"b"), memoryview(b"2"))], changelog_offset=4)
    assert store.get(b"b") == b"2" and store.committed_offset() == 4
    with pytest.raises(TypeError):
        store.restore_batch([(b"c", b"3"), ("not-bytes", b"4")], changelog_offset=9)
    assert store.get(b"c") is None and store.committed_offset() == 4  # nothing of the batch written
    store.close()


def test_should_commit_offset_for_processed_writes(context):
    store = open_store(context)
    store.put(b"a", b"1")
    store.commit_offset(100)
    store.flush()
    store.close()
    reopened = open_store(context)
    assert reopened.committed_offset() == 100
    reopened.close()


def test_should_not_show_the_offset_in_scans(context):
    store = open_store(context)
    store.restore_batch([(b"a", b"1")], changelog_offset=3)
    assert [kv.key for kv in store.all()] == [b"a"]
    assert store.get(b"changelog_offset") is None
    store.close()


def test_should_raise_processor_state_error_when_directory_cannot_be_created(make_context, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    context = make_context()
    context.state_dir = blocker
    with pytest.raises(ProcessorStateError, match="db"):
        RocksDBStore("db").init(context)


def test_should_share_one_block_cache_between_stores(context):
    cache = shared_block_cache()
    store_a, store_b = open_store(context, "a"), open_store(context, "b")
    assert shared_block_cache() is cache
    store_a.put(b"k", b"v" * 1000)
    assert shared_memory_usage() > 0
    store_a.close()
    store_b.close()


def test_should_reject_a_memory_budget_where_memtables_exceed_the_cache():
    with pytest.raises(ValueError):
        configure_shared_memory(block_cache_bytes=10, write_buffer_bytes=20)


def test_should_resize_the_shared_memory_budget():
    configure_shared_memory(block_cache_bytes=32 * 1024 * 1024, write_buffer_bytes=8 * 1024 * 1024)
    configure_shared_memory(
        block_cache_bytes=rocksdb_store.DEFAULT_BLOCK_CACHE_BYTES,
        write_buffer_bytes=rocksdb_store.DEFAULT_WRITE_BUFFER_BYTES,
    )


def test_should_grow_the_memtable_budget_with_the_number_of_open_stores(context):
    manager = shared_block_cache() and rocksdb_store._SHARED.write_buffer_manager  # noqa: SLF001
    before = manager.get_buffer_size()
    stores = [open_store(context, f"s{i}") for i in range(3)]
    per_store = rocksdb_store.WRITE_BUFFER_BYTES_PER_STORE
    assert manager.get_buffer_size() == before + 3 * per_store
    stores[0].close()
    assert manager.get_buffer_size() == before + 2 * per_store
    for store in stores[1:]:
        store.close()
    assert manager.get_buffer_size() == before


def test_should_import_rocksdict_only_in_the_rocksdb_modules():
    package = pathlib.Path(streams_runtime.__file__).parent
    importers = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(r"^\s*(import rocksdict|from rocksdict)", path.read_text(), re.MULTILINE)
    ]
    # The key-value store and the window/session segments; both share one memory budget.
    assert sorted(importers) == ["state/internals/rocksdb_segments.py", "state/internals/rocksdb_store.py"]


def test_should_buffer_puts_until_commit_and_read_them_back_before(context, monkeypatch):
    store = open_store(context)
    batches = []
    real_write_batch = rocksdb_store.WriteBatch

    def recording_write_batch(*args, **kwargs):
        batches.append(real_write_batch(*args, **kwargs))
        return batches[-1]

    monkeypatch.setattr(rocksdb_store, "WriteBatch", recording_write_batch)
    store.put(b"a", b"1")
    store.put(b"b", b"2")
    store.delete(b"b")
    assert batches == []
    assert store.get(b"a") == b"1"
    assert store.get(b"b") is None
    store.flush()
    store.commit_offset(41)
    assert len(batches) == 2  # the buffered data in one batch, then the offset
    store.put(b"c", b"3")
    assert [k for k, _ in store.all()] == [b"a", b"c"]  # a scan writes what is buffered first
    store.close()
    reopened = open_store(context)
    assert reopened.get(b"a") == b"1" and reopened.get(b"c") == b"3" and reopened.committed_offset() == 41
    reopened.close()


def test_should_write_buffered_puts_once_the_buffer_is_full(context, monkeypatch):
    monkeypatch.setattr(rocksdb_store, "MAX_PENDING_KEYS", 3)
    store = open_store(context)
    for i in range(3):
        store.put(b"k%d" % i, b"v")
    assert store.pending == {}
    store.close()
