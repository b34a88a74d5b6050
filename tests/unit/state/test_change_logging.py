import time

import pytest

from streams_runtime.state.internals.change_logging_store import (
    ChangeLoggingKeyValueStore,
    ChangeLoggingTimestampedKeyValueStore,
    changelog_topic_name,
)
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.timestamped import raw_value_to_timestamped


@pytest.fixture
def logged(context):
    inner = InMemoryKeyValueStore("store")
    store = ChangeLoggingKeyValueStore(inner)
    store.init(context)
    return store, inner, context


def changes(context):
    return [(c.store_name, c.key, c.value, c.timestamp) for c in context.logged]


def test_should_name_the_changelog_topic_after_application_and_store():
    assert changelog_topic_name("app", "counts") == "app-counts-changelog"


def test_should_register_the_inner_store_with_the_changelog_topic(logged):
    store, inner, context = logged
    registration = context.registered[-1]
    assert registration.changelog_topic == "app-store-changelog"
    assert registration.store is store
    assert registration.restore_callback == inner.restore_batch
    assert store.changelog_topic == "app-store-changelog"


def test_should_log_a_put_after_writing_it_with_the_record_timestamp(logged):
    store, inner, context = logged
    seen_in_store = []
    context.log_change = lambda name, key, value, ts, headers=None: seen_in_store.append(inner.get(key))
    context.at(42)
    store.put(b"k", b"v")
    assert seen_in_store == [b"v"]


def test_should_log_puts_with_the_current_record_timestamp(logged):
    store, _, context = logged
    context.at(42)
    store.put(b"k", b"v")
    assert changes(context) == [("store", b"k", b"v", 42)]


def test_should_log_deletes_as_tombstones(logged):
    store, inner, context = logged
    store.put(b"k", b"v")
    context.at(7)
    assert store.delete(b"k") == b"v"
    store.put(b"j", None)
    assert changes(context)[1:] == [("store", b"k", None, 7), ("store", b"j", None, 7)]
    assert inner.get(b"k") is None


def test_should_log_put_if_absent_only_when_it_wrote(logged):
    store, _, context = logged
    assert store.put_if_absent(b"k", b"1") is None
    assert store.put_if_absent(b"k", b"2") == b"1"
    assert [c[2] for c in changes(context)] == [b"1"]


def test_should_log_each_entry_of_put_all(logged):
    store, _, context = logged
    store.put_all([(b"a", b"1"), (b"b", None)])
    assert [(c[1], c[2]) for c in changes(context)] == [(b"a", b"1"), (b"b", None)]


def test_should_not_log_reads(logged):
    store, _, context = logged
    store.get(b"k")
    list(store.all())
    assert context.logged == []


def test_should_stamp_with_wall_clock_time_outside_record_processing(logged):
    store, _, context = logged
    context.set_record_context(None)
    before = int(time.time() * 1000)
    store.put(b"k", b"v")
    assert before <= context.logged[0].timestamp <= int(time.time() * 1000)


def test_should_log_plain_value_and_stored_timestamp_for_timestamped_stores(context):
    store = ChangeLoggingTimestampedKeyValueStore(InMemoryKeyValueStore("ts"))
    store.init(context)
    context.at(999)
    store.put(b"k", raw_value_to_timestamped(b"v", 123))
    store.delete(b"k")
    assert changes(context) == [("ts", b"k", b"v", 123), ("ts", b"k", None, 999)]
