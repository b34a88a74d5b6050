"""The suppression buffer: the semantics of Kafka Streams' TimeOrderedKeyValueBufferTest."""

from types import SimpleNamespace

import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state.internals.time_ordered_buffer import (
    BufferRecordContext,
    TimeOrderedKeyValueBufferBuilder,
)


def change(new, old=None):
    return SimpleNamespace(new_value=new, old_value=old)


def ctx(timestamp, offset=0, topic="topic", headers=()):
    return BufferRecordContext(topic, 0, offset, timestamp, headers)


@pytest.fixture
def make_buffer(context):
    def make(logging=True):
        builder = TimeOrderedKeyValueBufferBuilder("buf", Serdes.String(), Serdes.String())
        buffer = (builder if logging else builder.with_logging_disabled()).build()
        buffer.init(context)
        return buffer

    return make


@pytest.fixture
def buffer(make_buffer):
    return make_buffer()


def evict_all(buffer):
    evicted = []
    buffer.evict_while(lambda: True, evicted.append)
    return evicted


def test_should_start_empty_with_max_min_timestamp(buffer):
    assert (buffer.num_records(), buffer.buffer_size(), buffer.min_timestamp()) == (0, 0, 2**63 - 1)


def test_should_track_count_and_min_timestamp_across_puts_and_evictions(buffer):
    buffer.put(1, "asdf", change("eyt"), ctx(1))
    buffer.put(0, "zxcv", change("rtg"), ctx(0))
    assert (buffer.num_records(), buffer.min_timestamp()) == (2, 0)
    buffer.put(2, "asdf", change("2093j"), ctx(2))  # replaces the value, keeps its buffer time 1
    assert (buffer.num_records(), buffer.min_timestamp()) == (2, 0)
    buffer.evict_while(lambda: buffer.num_records() > 1, lambda e: None)
    assert (buffer.num_records(), buffer.min_timestamp()) == (1, 1)


def test_should_keep_eviction_order_when_a_buffered_key_changes(buffer):
    """Kafka Streams' buffer is non-resetting: an update keeps the key's first buffer time."""
    buffer.put(1, "zxcv", change("o23i4"), ctx(1))
    buffer.put(0, "asdf", change("3l"), ctx(0))
    buffer.put(5, "zxcv", change("qfowin"), ctx(5))
    evicted = []
    buffer.evict_while(lambda: buffer.min_timestamp() <= 1, evicted.append)
    assert [(e.key, e.new_value) for e in evicted] == [("asdf", "3l"), ("zxcv", "qfowin")]


def test_should_evict_oldest_first_while_the_predicate_holds(buffer):
    buffer.put(1, "zxcv", change("eyt"), ctx(1))
    buffer.put(0, "asdf", change("oin"), ctx(0, offset=5))
    buffer.put(2, "qwer", change("aaa"), ctx(2))
    evicted = []
    buffer.evict_while(lambda: buffer.min_timestamp() < 2, evicted.append)
    assert [(e.key, e.new_value, e.record_context.timestamp) for e in evicted] == [
        ("asdf", "oin", 0),
        ("zxcv", "eyt", 1),
    ]
    assert evicted[0].record_context.offset == 5
    assert buffer.num_records() == 1


def test_should_break_time_ties_by_key_bytes(buffer):
    for key in ("b", "a", "c"):
        buffer.put(5, key, change(key.upper()), ctx(5))
    assert [e.key for e in evict_all(buffer)] == ["a", "b", "c"]


def test_should_track_the_buffer_size_in_bytes(buffer):
    buffer.put(0, "asdf", change("23roni"), ctx(0, topic="topic"))
    # key 4 + time 8 + context (8 + 8 + 4 + topic 5) + new value 6
    assert buffer.buffer_size() == 4 + 8 + 25 + 6
    buffer.put(1, "asdf", change("3l"), ctx(1, topic="topic"))
    assert buffer.buffer_size() == 4 + 8 + 25 + 2
    evict_all(buffer)
    assert buffer.buffer_size() == 0


def test_should_count_the_old_value_of_a_key_put_again_even_when_it_equals_the_prior(buffer):
    """A key's first put has its old value as prior value, counted once; a put of a key already
    buffered brings an old value of its own, counted next to the prior one, as Kafka Streams
    counts them (tests/oracle found the bounded buffers emitting early at other times)."""
    base = 4 + 8 + 25
    buffer.put(0, "asdf", change("b", "a"), ctx(0, topic="topic"))
    assert buffer.buffer_size() == base + 1 + 1  # prior ("a", the old value) + new
    buffer.put(1, "asdf", change("c", "a"), ctx(1, topic="topic"))
    assert buffer.buffer_size() == base + 1 + 1 + 1  # prior "a" + old "a" + new
    evict_all(buffer)
    assert buffer.buffer_size() == 0


def test_should_keep_the_prior_value_of_the_first_buffered_change(buffer):
    buffer.put(0, "asdf", change("v1", "v0"), ctx(0))
    buffer.put(1, "asdf", change("v2", "v1"), ctx(1))
    assert buffer.prior_value_for_buffered("asdf") == (True, "v0")
    assert buffer.prior_value_for_buffered("other") == (False, None)
    [eviction] = evict_all(buffer)
    assert (eviction.new_value, eviction.old_value) == ("v2", "v1")
    assert buffer.prior_value_for_buffered("asdf") == (False, None)


def test_should_log_only_the_latest_state_of_changed_keys_at_flush(buffer, context):
    buffer.put(0, "asdf", change("a"), ctx(0))
    buffer.put(1, "asdf", change("b"), ctx(1))
    buffer.put(2, "zxcv", change("c"), ctx(2))
    assert context.logged == []
    buffer.flush()
    assert [(c.key, c.timestamp) for c in context.logged] == [(b"asdf", 1), (b"zxcv", 2)]
    buffer.evict_while(lambda: buffer.min_timestamp() < 2, lambda e: None)
    buffer.flush()
    assert (context.logged[-1].key, context.logged[-1].value) == (b"asdf", None)
    assert context.registered[-1].changelog_topic == "app-buf-changelog"


def test_should_not_log_when_logging_is_disabled(make_buffer, context):
    buffer = make_buffer(logging=False)
    buffer.put(0, "asdf", change("a"), ctx(0))
    buffer.flush()
    assert context.logged == []
    assert context.registered[-1].changelog_topic is None


def test_should_restore_the_buffer_from_its_changelog(buffer, context, make_context):
    headers = (("h", b"v"),)
    buffer.put(2, "zxcv", change("c", "z0"), ctx(2, offset=9, headers=headers))
    buffer.put(0, "asdf", change("a1", "a0"), ctx(0))
    buffer.put(1, "asdf", change("a2", "a1"), ctx(1))
    buffer.put(3, "gone", change("x"), ctx(3))
    buffer.flush()
    buffer.evict_while(lambda: buffer.min_timestamp() < 2, lambda e: None)
    buffer.flush()

    target_context = make_context(task_id="0_1")
    target = TimeOrderedKeyValueBufferBuilder("buf", Serdes.String(), Serdes.String()).build()
    target.init(target_context)
    target.restore_batch([(c.key, c.value, c.timestamp) for c in context.logged])
    assert (target.num_records(), target.min_timestamp(), target.buffer_size()) == (
        buffer.num_records(),
        buffer.min_timestamp(),
        buffer.buffer_size(),
    )
    evicted = evict_all(target)
    assert [(e.key, e.new_value, e.old_value) for e in evicted] == [("zxcv", "c", "z0"), ("gone", "x", None)]
    assert evicted[0].record_context == ctx(2, offset=9, headers=headers)


def test_should_refuse_caching_for_the_buffer():
    with pytest.raises(ValueError):
        TimeOrderedKeyValueBufferBuilder("buf").with_caching_enabled()
