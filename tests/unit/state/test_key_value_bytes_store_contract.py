"""The contract every inner bytes store keeps, run against both implementations."""

import pytest

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.rocksdb_store import RocksDBStore


@pytest.fixture(params=["in_memory", "rocksdb"])
def store(request, context):
    inner = InMemoryKeyValueStore("s") if request.param == "in_memory" else RocksDBStore("s")
    inner.init(context)
    yield inner
    inner.close()


def keys(iterator):
    with iterator:
        return [kv.key for kv in iterator]


def fill(store, *ks):
    for k in ks:
        store.put(k, b"v" + k)


def test_should_put_and_get(store):
    store.put(b"k", b"v")
    assert store.get(b"k") == b"v"
    assert store.get(b"missing") is None


def test_should_delete_when_putting_none(store):
    store.put(b"k", b"v")
    store.put(b"k", None)
    assert store.get(b"k") is None
    assert keys(store.all()) == []


def test_should_return_old_value_on_delete(store):
    store.put(b"k", b"v")
    assert store.delete(b"k") == b"v"
    assert store.delete(b"k") is None


def test_should_put_if_absent_only_when_absent(store):
    assert store.put_if_absent(b"k", b"1") is None
    assert store.put_if_absent(b"k", b"2") == b"1"
    assert store.get(b"k") == b"1"


def test_should_put_all_including_deletes(store):
    store.put(b"gone", b"x")
    store.put_all([(b"a", b"1"), (b"b", b"2"), (b"gone", None)])
    assert [(kv.key, kv.value) for kv in store.all()] == [(b"a", b"1"), (b"b", b"2")]


def test_should_order_keys_by_unsigned_bytes(store):
    fill(store, b"\xff", b"\x80", b"\x7f", b"\x00", b"\x00\x01", b"")
    assert keys(store.all()) == [b"", b"\x00", b"\x00\x01", b"\x7f", b"\x80", b"\xff"]
    assert keys(store.reverse_all()) == [b"\xff", b"\x80", b"\x7f", b"\x00\x01", b"\x00", b""]


def test_should_include_both_bounds_of_a_range(store):
    fill(store, b"a", b"b", b"c", b"d")
    assert keys(store.range(b"b", b"c")) == [b"b", b"c"]
    assert keys(store.reverse_range(b"b", b"c")) == [b"c", b"b"]


def test_should_treat_none_bounds_as_open(store):
    fill(store, b"a", b"b", b"c")
    assert keys(store.range(None, b"b")) == [b"a", b"b"]
    assert keys(store.range(b"b", None)) == [b"b", b"c"]
    assert keys(store.reverse_range(b"b", None)) == [b"c", b"b"]
    assert keys(store.reverse_range(None, b"b")) == [b"b", b"a"]


def test_should_return_empty_range_when_from_is_above_to(store):
    fill(store, b"a", b"b")
    assert keys(store.range(b"b", b"a")) == []
    assert keys(store.reverse_range(b"b", b"a")) == []


def test_should_scan_a_prefix(store):
    fill(store, b"ab", b"abc", b"ac", b"a", b"b")
    assert keys(store.prefix_scan(b"ab")) == [b"ab", b"abc"]


def test_should_scan_a_prefix_of_ff_bytes(store):
    fill(store, b"\xfe", b"\xff", b"\xff\x00", b"\xff\xff\x01")
    assert keys(store.prefix_scan(b"\xff")) == [b"\xff", b"\xff\x00", b"\xff\xff\x01"]
    assert keys(store.prefix_scan(b"\xff\xff")) == [b"\xff\xff\x01"]


def test_should_yield_key_value_tuples(store):
    store.put(b"k", b"v")
    with store.all() as iterator:
        entry = next(iterator)
    assert entry.key == b"k" and entry.value == b"v"


def test_should_peek_next_key_without_consuming(store):
    fill(store, b"a", b"b")
    with store.all() as iterator:
        assert iterator.peek_next_key() == b"a"
        assert next(iterator).key == b"a"
        assert iterator.peek_next_key() == b"b"
        next(iterator)
        assert not iterator.has_next()


def test_should_close_open_iterators_when_store_closes(store):
    fill(store, b"a", b"b")
    iterator = store.all()
    next(iterator)
    store.close()
    assert iterator.closed
    with pytest.raises(InvalidStateStoreError):
        next(iterator)


def test_should_refuse_operations_on_a_closed_store(store):
    store.close()
    assert not store.is_open()
    for operation in (lambda: store.get(b"k"), lambda: store.put(b"k", b"v"), store.all):
        with pytest.raises(InvalidStateStoreError):
            operation()


def test_should_reject_none_and_non_bytes_keys(store):
    with pytest.raises(TypeError):
        store.put(None, b"v")
    with pytest.raises(TypeError):
        store.get("text")
    with pytest.raises(TypeError):
        store.put(b"k", "text")


def test_should_register_itself_with_its_restore_callback(store, context):
    registration = context.registered[-1]
    assert registration.store is store
    assert registration.restore_callback == store.restore_batch
    assert registration.changelog_topic is None


def test_should_register_the_root_store_when_wrapped(context):
    inner = InMemoryKeyValueStore("s")
    root = object()
    inner.init(context, root)
    assert context.registered[-1].store is root


def test_should_restore_a_batch_of_pairs_and_triples_with_tombstones(store):
    store.put(b"old", b"x")
    store.restore_batch([(b"a", b"1"), (b"b", b"2", 99), (b"old", None), (b"a", b"3")])
    assert [(kv.key, kv.value) for kv in store.all()] == [(b"a", b"3"), (b"b", b"2")]


def test_should_count_entries(store):
    fill(store, b"a", b"b", b"c")
    assert store.approximate_num_entries() >= 1
