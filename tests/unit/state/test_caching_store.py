import pytest

from streams_runtime.errors import InvalidStateStoreError
from streams_runtime.state.internals.caching_store import CachingKeyValueStore
from streams_runtime.state.internals.change_logging_store import ChangeLoggingKeyValueStore
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.record_cache import ENTRY_OVERHEAD_BYTES, ThreadCache


@pytest.fixture
def cached(make_context, flush_listener_factory):
    """Factory: (cache_bytes, send_old_values, logged) -> (store, inner, listener, context)."""

    def make(cache_bytes=10_000, send_old_values=False, logged=False, cache=None, task_id="0_0"):
        context = make_context(cache_bytes, cache=cache, task_id=task_id)
        inner = InMemoryKeyValueStore("store")
        below = ChangeLoggingKeyValueStore(inner) if logged else inner
        store = CachingKeyValueStore(below)
        listener = flush_listener_factory(context)
        assert store.set_flush_listener(listener, send_old_values) is True
        store.init(context)
        return store, inner, listener, context

    return make


def items(iterator):
    with iterator:
        return [(kv.key, kv.value) for kv in iterator]


def test_should_serve_reads_from_the_cache_before_flush(cached):
    store, inner, listener, _ = cached()
    store.put(b"k", b"v")
    assert store.get(b"k") == b"v"
    assert inner.get(b"k") is None
    assert listener.calls == []


def test_should_write_dirty_entries_to_the_store_below_on_flush(cached):
    store, inner, listener, _ = cached()
    store.put(b"a", b"1")
    store.put(b"b", b"2")
    store.flush()
    assert items(inner.all()) == [(b"a", b"1"), (b"b", b"2")]
    assert [call[:2] for call in listener.calls] == [(b"a", b"1"), (b"b", b"2")]


def test_should_collapse_consecutive_updates_of_one_key_on_flush(cached):
    store, _, listener, context = cached()
    for ts, value in ((1, b"1"), (2, b"2"), (3, b"3")):
        context.at(ts)
        store.put(b"k", value)
    store.flush()
    assert listener.calls == [(b"k", b"3", None, 3)]


def test_should_send_old_values_only_when_enabled(cached):
    store, _, listener, _ = cached(send_old_values=True)
    store.put(b"k", b"a")
    store.flush()
    store.put(b"k", b"b")
    store.flush()
    assert [call[:3] for call in listener.calls] == [(b"k", b"a", None), (b"k", b"b", b"a")]

    store2, _, listener2, _ = cached(send_old_values=False, task_id="0_1")
    store2.put(b"k", b"a")
    store2.flush()
    store2.put(b"k", b"b")
    store2.flush()
    assert [call[:3] for call in listener2.calls] == [(b"k", b"a", None), (b"k", b"b", None)]


def test_should_replay_the_entry_record_context_during_the_listener_call(cached):
    store, _, listener, context = cached()
    context.at(5, offset=50)
    store.put(b"k", b"v")
    context.at(9, offset=90)
    store.flush()
    assert listener.contexts_seen[0].timestamp == 5 and listener.contexts_seen[0].offset == 50
    assert context.record_context().timestamp == 9


def test_should_log_flushed_entries_with_their_own_timestamp(cached):
    store, _, _, context = cached(logged=True)
    context.at(5)
    store.put(b"k", b"v")
    context.at(9)
    store.flush()
    assert [(c.key, c.value, c.timestamp) for c in context.logged] == [(b"k", b"v", 5)]


def test_should_hide_deleted_keys_that_were_flushed_before_the_delete(cached):
    store, inner, listener, _ = cached()
    store.put(b"a", b"1")
    store.flush()
    assert store.delete(b"a") == b"1"
    assert store.get(b"a") is None
    assert items(store.range(b"a", b"b")) == []
    assert items(store.all()) == []
    assert inner.get(b"a") == b"1"  # still below until flushed
    store.flush()
    assert inner.get(b"a") is None
    assert listener.calls[-1][:2] == (b"a", None)


def test_should_not_forward_a_delete_of_a_key_that_never_reached_the_store(cached):
    store, inner, listener, context = cached(logged=True)
    store.put(b"a", b"1")
    store.delete(b"a")
    store.flush()
    assert listener.calls == []
    assert context.logged == []
    assert inner.approximate_num_entries() == 0


def test_should_flush_evicted_dirty_entries_to_store_and_listener(cached):
    one = len(b"k0") + len(b"v0") + ENTRY_OVERHEAD_BYTES + len("input")
    store, inner, listener, _ = cached(cache_bytes=3 * one)
    for i in range(4):
        store.put(b"k%d" % i, b"v%d" % i)
    assert inner.approximate_num_entries() == 4
    assert [call[0] for call in listener.calls] == [b"k0", b"k1", b"k2", b"k3"]
    assert store.cache.size_bytes() <= 3 * one


def test_should_merge_cache_and_store_in_key_order_with_the_cache_winning(cached):
    store, inner, _, _ = cached()
    store.put(b"a", b"store-a")
    store.put(b"c", b"store-c")
    store.put(b"e", b"store-e")
    store.flush()
    store.put(b"b", b"cache-b")
    store.put(b"c", b"cache-c")
    store.delete(b"e")
    assert items(store.all()) == [(b"a", b"store-a"), (b"b", b"cache-b"), (b"c", b"cache-c")]
    assert items(store.reverse_all()) == [(b"c", b"cache-c"), (b"b", b"cache-b"), (b"a", b"store-a")]
    assert items(store.range(b"b", b"e")) == [(b"b", b"cache-b"), (b"c", b"cache-c")]
    assert items(store.reverse_range(b"a", b"b")) == [(b"b", b"cache-b"), (b"a", b"store-a")]
    assert items(store.range(b"z", b"a")) == []


def test_should_merge_prefix_scans_of_cache_and_store(cached):
    store, _, _, _ = cached()
    store.put(b"p1", b"s")
    store.put(b"p3", b"s")
    store.put(b"q", b"s")
    store.flush()
    store.put(b"p2", b"c")
    store.delete(b"p3")
    assert items(store.prefix_scan(b"p")) == [(b"p1", b"s"), (b"p2", b"c")]


def test_should_cache_store_reads_as_clean_entries(cached):
    store, inner, listener, _ = cached()
    inner.put(b"k", b"v")
    assert store.get(b"k") == b"v"
    entry = store.cache.get(store.namespace, b"k")
    assert entry.value == b"v" and entry.is_dirty is False
    store.flush()
    assert listener.calls == []


def test_should_put_if_absent_against_cache_and_store(cached):
    store, inner, _, _ = cached()
    inner.put(b"stored", b"1")
    assert store.put_if_absent(b"stored", b"2") == b"1"
    assert store.put_if_absent(b"new", b"3") is None
    assert store.put_if_absent(b"new", b"4") == b"3"
    store.put_all([(b"x", b"1"), (b"y", b"2")])
    assert store.get(b"y") == b"2"


def test_should_flush_on_close(cached):
    store, inner, listener, _ = cached()
    store.put(b"k", b"v")
    store.close()
    assert not store.is_open()
    assert listener.calls[0][:2] == (b"k", b"v")
    with pytest.raises(InvalidStateStoreError):
        store.get(b"k")


def test_should_forward_every_update_when_the_context_has_no_cache(make_context, flush_listener_factory):
    context = make_context(None)
    store = CachingKeyValueStore(InMemoryKeyValueStore("store"))
    listener = flush_listener_factory()
    store.set_flush_listener(listener)
    store.init(context)
    store.put(b"k", b"1")
    store.put(b"k", b"2")
    assert [call[1] for call in listener.calls] == [b"1", b"2"]


def test_should_write_to_the_store_below_without_a_listener(make_context):
    context = make_context(10_000)
    inner = InMemoryKeyValueStore("store")
    store = CachingKeyValueStore(inner)
    store.init(context)
    store.put(b"k", b"v")
    store.flush()
    assert inner.get(b"k") == b"v"


def test_should_share_one_thread_cache_between_tasks_stores(cached):
    one = len(b"k0") + len(b"v0") + ENTRY_OVERHEAD_BYTES + len("input")
    shared = ThreadCache(2 * one)
    store_a, _, listener_a, _ = cached(cache=shared, task_id="0_0")
    store_b, _, listener_b, _ = cached(cache=shared, task_id="0_1")
    store_a.put(b"k0", b"v0")
    store_b.put(b"k0", b"v0")
    assert shared.size() == 2
    store_b.put(b"k1", b"v1")  # over the shared bound: store b evicts its own entries
    assert listener_a.calls == []
    assert [call[0] for call in listener_b.calls] == [b"k0", b"k1"]
    assert shared.named_cache("0_0-store") is not None


def test_should_count_entries_of_the_store_below(cached):
    store, inner, _, _ = cached()
    store.put(b"k", b"v")
    assert store.approximate_num_entries() == 0
    store.flush()
    assert store.approximate_num_entries() == 1
