import pytest

from streams_runtime.errors import StreamsError
from streams_runtime.state.internals.record_cache import (
    ENTRY_OVERHEAD_BYTES,
    LRUCacheEntry,
    ThreadCache,
)

NS = "0_0-store"


class Recorder:
    def __init__(self):
        self.batches = []

    def __call__(self, entries):
        self.batches.append([(e.key, e.new_value) for e in entries])

    @property
    def flat(self):
        return [item for batch in self.batches for item in batch]


def dirty(value, context=None):
    return LRUCacheEntry(value, is_dirty=True, record_context=context)


def entry_bytes(key, value):
    return len(key) + len(value or b"") + ENTRY_OVERHEAD_BYTES


@pytest.fixture
def recorder():
    return Recorder()


def cache_with(recorder, max_bytes=10_000, namespace=NS):
    cache = ThreadCache(max_bytes)
    cache.add_dirty_entry_flush_listener(namespace, recorder)
    return cache


def test_should_name_a_store_cache_by_task_and_store():
    assert ThreadCache.namespace("0_1", "counts") == "0_1-counts"


def test_should_get_what_was_put(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v"))
    assert cache.get(NS, b"k").value == b"v"
    assert cache.get(NS, b"missing") is None
    assert cache.get("other", b"k") is None


def test_should_account_bytes_of_key_value_and_overhead(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"key", dirty(b"value"))
    assert cache.size_bytes() == entry_bytes(b"key", b"value")
    cache.put(NS, b"key", dirty(b"v"))
    assert cache.size_bytes() == entry_bytes(b"key", b"v")
    cache.delete(NS, b"key")
    assert cache.size_bytes() == 0


def test_should_count_topic_and_header_bytes_of_the_record_context(recorder):
    class Context:
        topic = "topic"
        headers = [("h", b"12")]

    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v", Context()))
    assert cache.size_bytes() == entry_bytes(b"k", b"v") + len("topic") + 3


def test_should_flush_dirty_keys_in_last_write_order(recorder):
    cache = cache_with(recorder)
    for key in (b"a", b"b", b"c"):
        cache.put(NS, key, dirty(key))
    cache.put(NS, b"a", dirty(b"a2"))
    cache.flush(NS)
    assert recorder.flat == [(b"b", b"b"), (b"c", b"c"), (b"a", b"a2")]


def test_should_collapse_consecutive_updates_of_one_key_on_flush(recorder):
    cache = cache_with(recorder)
    for value in (b"1", b"2", b"3"):
        cache.put(NS, b"k", dirty(value))
    cache.flush(NS)
    assert recorder.flat == [(b"k", b"3")]


def test_should_mark_entries_clean_after_flush(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v"))
    cache.flush(NS)
    cache.flush(NS)
    assert len(recorder.batches) == 1
    assert cache.get(NS, b"k").is_dirty is False


def test_should_drop_flushed_tombstones_from_the_cache(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(None))
    cache.flush(NS)
    assert recorder.flat == [(b"k", None)]
    assert cache.get(NS, b"k") is None
    assert cache.size() == 0 and cache.size_bytes() == 0


def test_should_keep_a_tombstone_key_the_listener_wrote_again(recorder):
    cache = ThreadCache(10_000)

    def rewrite(entries):
        cache.put(NS, b"k", dirty(b"again"))

    cache.add_dirty_entry_flush_listener(NS, rewrite)
    cache.put(NS, b"k", dirty(None))
    cache.flush(NS)
    assert cache.get(NS, b"k").value == b"again"


def test_should_evict_least_recently_used_entry_when_over_the_byte_bound(recorder):
    one = entry_bytes(b"a", b"1")
    cache = cache_with(recorder, max_bytes=2 * one)
    cache.put(NS, b"a", LRUCacheEntry(b"1"))
    cache.put(NS, b"b", LRUCacheEntry(b"2"))
    cache.get(NS, b"a")  # a is now most recently used
    cache.put(NS, b"c", LRUCacheEntry(b"3"))
    assert cache.get(NS, b"b") is None
    assert cache.get(NS, b"a") is not None and cache.get(NS, b"c") is not None
    assert cache.size_bytes() <= 2 * one
    assert cache.evicts == 1
    assert recorder.batches == []  # clean entries are dropped silently


def test_should_flush_all_dirty_entries_evicted_one_first_when_a_dirty_entry_is_evicted(recorder):
    one = entry_bytes(b"a", b"1")
    cache = cache_with(recorder, max_bytes=3 * one)
    cache.put(NS, b"a", dirty(b"1"))
    cache.put(NS, b"b", dirty(b"2"))
    cache.put(NS, b"c", dirty(b"3"))
    cache.put(NS, b"d", dirty(b"4"))
    assert recorder.batches == [[(b"a", b"1"), (b"b", b"2"), (b"c", b"3"), (b"d", b"4")]]
    assert cache.get(NS, b"a") is None
    assert cache.get(NS, b"d").is_dirty is False


def test_should_evict_only_from_the_store_being_written(recorder):
    one = entry_bytes(b"a", b"1")
    cache = cache_with(recorder, max_bytes=2 * one)
    other = Recorder()
    cache.add_dirty_entry_flush_listener("0_1-other", other)
    cache.put("0_1-other", b"x", dirty(b"1"))
    cache.put(NS, b"a", dirty(b"1"))
    cache.put(NS, b"b", dirty(b"2"))
    assert other.batches == []
    assert recorder.flat == [(b"a", b"1"), (b"b", b"2")]
    assert cache.get("0_1-other", b"x") is not None


def test_should_flush_every_put_with_a_zero_byte_bound(recorder):
    cache = cache_with(recorder, max_bytes=0)
    cache.put(NS, b"a", dirty(b"1"))
    cache.put(NS, b"a", dirty(b"2"))
    assert recorder.flat == [(b"a", b"1"), (b"a", b"2")]
    assert cache.size() == 0


def test_should_refuse_a_clean_entry_over_a_dirty_one(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v"))
    with pytest.raises(StreamsError, match="dirty"):
        cache.put(NS, b"k", LRUCacheEntry(b"clean"))


def test_should_refuse_to_flush_without_a_listener():
    cache_without = ThreadCache(10_000)
    cache_without.put("ns", b"k", dirty(b"v"))
    with pytest.raises(StreamsError, match="listener"):
        cache_without.flush("ns")


def test_should_range_over_cached_keys_in_order_with_tombstones(recorder):
    cache = cache_with(recorder)
    for key, value in ((b"c", b"3"), (b"a", b"1"), (b"b", None), (b"d", b"4")):
        cache.put(NS, key, dirty(value))
    assert list(cache.range(NS, b"a", b"c")) == [(b"a", b"1"), (b"b", None), (b"c", b"3")]
    assert list(cache.range(NS, None, None, reverse=True))[0] == (b"d", b"4")
    assert list(cache.range(NS, b"a", b"c", upper_inclusive=False)) == [(b"a", b"1"), (b"b", None)]
    assert list(cache.range("unknown", None, None)) == []


def test_should_skip_keys_removed_while_a_range_is_open(recorder):
    cache = cache_with(recorder)
    for key in (b"a", b"b", b"c"):
        cache.put(NS, key, dirty(key))
    entries = cache.range(NS, None, None)
    assert next(entries) == (b"a", b"a")
    cache.delete(NS, b"b")
    assert list(entries) == [(b"c", b"c")]


def test_should_shrink_round_robin_on_resize(recorder):
    cache = cache_with(recorder)
    cache.add_dirty_entry_flush_listener("0_1-other", Recorder())
    for key in (b"a", b"b"):
        cache.put(NS, key, LRUCacheEntry(key))
        cache.put("0_1-other", key, LRUCacheEntry(key))
    cache.resize(2 * entry_bytes(b"a", b"a"))
    assert cache.size() == 2
    assert cache.named_cache(NS).size_bytes() == cache.named_cache("0_1-other").size_bytes()


def test_should_forget_a_closed_store_cache(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v"))
    cache.close(NS)
    assert cache.size() == 0 and cache.get(NS, b"k") is None


def test_should_track_hits_misses_and_operation_counts(recorder):
    cache = cache_with(recorder)
    cache.put(NS, b"k", dirty(b"v"))
    cache.get(NS, b"k")
    cache.get(NS, b"nope")
    named = cache.named_cache(NS)
    assert (named.hits, named.misses, named.hit_ratio()) == (1, 1, 0.5)
    assert (cache.puts, cache.gets) == (1, 2)


def test_should_reject_a_negative_bound():
    with pytest.raises(ValueError):
        ThreadCache(-1)
