"""Window/session store stacks: caching collapse, changelog records, restore, builders and configs."""

import pytest

from streams_runtime.errors import InvalidStateStoreError, SerializationError
from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores, ValueAndTimestamp
from streams_runtime.state.internals.caching_window_store import CachingSessionStore, CachingWindowStore
from streams_runtime.state.internals.change_logging_window_store import (
    ChangeLoggingSessionBytesStore,
    ChangeLoggingWindowBytesStore,
)
from streams_runtime.state.internals.metered_window_store import (
    MeteredSessionStore,
    MeteredTimestampedWindowStore,
    MeteredWindowStore,
)
from streams_runtime.state.internals.session_store import SessionBytesStore
from streams_runtime.state.internals.timestamped import record_converter_for
from streams_runtime.state.internals.window_store import WindowBytesStore
from streams_runtime.windowed import SessionWindow, TimeWindow, Windowed

DAY = 86_400_000


def layers(store):
    found = []
    while store is not None:
        found.append(type(store))
        store = getattr(store, "wrapped", None)
    return found


def window_builder(supplier=Stores.in_memory_window_store, retain_duplicates=False, timestamped=False):
    make = Stores.timestamped_window_store_builder if timestamped else Stores.window_store_builder
    return make(supplier("w", 1000, 10, retain_duplicates), Serdes.String(), Serdes.Long())


def items(iterator):
    with iterator:
        return [tuple(kv) for kv in iterator]


def long_bytes(value):
    return value.to_bytes(8, "big", signed=True)


def test_should_stack_metered_caching_logging_inner_for_window_stores():
    store = window_builder(Stores.persistent_window_store).with_caching_enabled().build()
    assert layers(store) == [
        MeteredWindowStore,
        CachingWindowStore,
        ChangeLoggingWindowBytesStore,
        WindowBytesStore,
    ]
    store = window_builder(timestamped=True).with_logging_disabled().build()
    assert layers(store) == [MeteredTimestampedWindowStore, WindowBytesStore]


def test_should_never_cache_window_stores_that_retain_duplicates():
    builder = window_builder(retain_duplicates=True).with_caching_enabled()
    assert builder.caching_enabled is False
    assert CachingWindowStore not in layers(builder.build())


def test_should_stack_session_stores():
    builder = Stores.session_store_builder(
        Stores.in_memory_session_store("s", 100), Serdes.String(), Serdes.Long()
    )
    store = builder.with_caching_enabled().build()
    assert layers(store) == [
        MeteredSessionStore,
        CachingSessionStore,
        ChangeLoggingSessionBytesStore,
        SessionBytesStore,
    ]


def test_should_configure_windowed_changelogs_as_compact_delete_with_retention_plus_one_day():
    builder = window_builder()
    assert builder.log_config == {"cleanup.policy": "compact,delete", "retention.ms": str(1000 + DAY)}
    assert builder.changelog_config(additional_retention_ms=5)["retention.ms"] == "1005"
    builder.with_logging_enabled({"segment.ms": 100, "retention.ms": "7"})
    assert builder.log_config == {
        "cleanup.policy": "compact,delete",
        "retention.ms": "7",
        "segment.ms": "100",
    }
    assert builder.with_logging_disabled().log_config == {}
    session_builder = Stores.session_store_builder(Stores.persistent_session_store("s", 500))
    assert session_builder.log_config == {"cleanup.policy": "compact,delete", "retention.ms": str(500 + DAY)}


def test_should_log_window_writes_with_kafka_streams_changelog_keys(context):
    store = window_builder().build()
    store.init(context)
    context.at(42)
    store.put("k", 7, 10)
    store.put("k", None, 10)
    key = b"k" + long_bytes(10) + (0).to_bytes(4, "big")
    assert [(c.key, c.value, c.timestamp) for c in context.logged] == [
        (key, long_bytes(7), 42),
        (key, None, 42),
    ]
    assert context.registered[-1].changelog_topic == "app-w-changelog"
    assert context.registered[-1].store is store


def test_should_log_duplicates_with_increasing_sequence_numbers(context):
    store = window_builder(retain_duplicates=True).build()
    store.init(context)
    store.put("k", 1, 10)
    store.put("k", 2, 10)
    assert [c.key[-4:] for c in context.logged] == [(1).to_bytes(4, "big"), (2).to_bytes(4, "big")]


def test_should_not_log_writes_the_store_dropped_as_expired(context):
    store = window_builder().build()
    store.init(context)
    store.put("k", 1, 5000)
    store.put("k", 2, 0)
    assert len(context.logged) == 1


def test_should_log_session_writes_as_key_end_start(context):
    store = Stores.session_store_builder(
        Stores.in_memory_session_store("s", 100), Serdes.String(), Serdes.Long()
    ).build()
    store.init(context)
    store.put(Windowed("k", SessionWindow(3, 9)), 1)
    store.remove(Windowed("k", SessionWindow(3, 9)))
    key = b"k" + long_bytes(9) + long_bytes(3)
    assert [(c.key, c.value) for c in context.logged] == [(key, long_bytes(1)), (key, None)]


def test_should_log_timestamped_window_values_plain_with_the_stored_timestamp(context):
    store = window_builder(timestamped=True).build()
    store.init(context)
    context.at(99)
    store.put("k", ValueAndTimestamp(7, 55), 10)
    assert [(c.value, c.timestamp) for c in context.logged] == [(long_bytes(7), 55)]
    assert store.fetch("k", 10) == ValueAndTimestamp(7, 55)


@pytest.mark.parametrize("supplier", [Stores.in_memory_window_store, Stores.persistent_window_store])
def test_should_restore_a_window_store_from_its_changelog(make_context, supplier):
    source_context = make_context(task_id="0_0")
    source = window_builder(supplier, timestamped=True).build()
    source.init(source_context)
    source.put("a", ValueAndTimestamp(1, 5), 0)
    source.put("b", ValueAndTimestamp(2, 6), 10)
    source.put("a", None, 0)
    source.close()

    target_context = make_context(task_id="0_1", application_id="other")
    target = window_builder(supplier, timestamped=True).build()
    target.init(target_context)
    registration = target_context.registered[-1]
    convert = record_converter_for(registration.store)
    registration.restore_callback([convert(c.key, c.value, c.timestamp) for c in source_context.logged], 3)
    assert items(target.all()) == [(Windowed("b", TimeWindow(10, 20)), ValueAndTimestamp(2, 6))]
    if supplier is Stores.persistent_window_store:
        assert target.inner().committed_offset() == 3


def test_should_reopen_a_persistent_window_store_with_its_data_and_stream_time(make_context):
    context = make_context()
    store = window_builder(Stores.persistent_window_store).build()
    store.init(context)
    store.put("a", 1, 0)
    store.put("a", 2, 900)
    store.close()
    reopened = window_builder(Stores.persistent_window_store).build()
    reopened.init(context)
    assert items(reopened.fetch("a", 0, 1000)) == [(0, 1), (900, 2)]
    assert reopened.inner().observed_stream_time == 900


@pytest.fixture
def cached_window(make_context, flush_listener_factory):
    """(store, listener, context) for a cached, logged in-memory window store."""
    context = make_context(100_000)
    store = window_builder().with_caching_enabled().build()
    store.init(context)
    listener = flush_listener_factory(context)
    assert store.set_flush_listener(listener, True) is True
    return store, listener, context


def test_should_collapse_consecutive_updates_of_one_window_in_the_cache(cached_window):
    store, listener, context = cached_window
    for timestamp, value in ((1, 1), (2, 2), (3, 3)):
        context.at(timestamp)
        store.put("k", value, 0)
    assert context.logged == [] and listener.calls == []
    store.flush()
    assert listener.calls == [(Windowed("k", TimeWindow(0, 10)), 3, None, 3)]
    assert [(c.value, c.timestamp) for c in context.logged] == [(long_bytes(3), 3)]
    store.put("k", 4, 0)
    store.flush()
    assert listener.calls[-1][1:3] == (4, 3)


def test_should_forward_deletes_of_stored_windows_only(cached_window):
    store, listener, _ = cached_window
    store.put("never-stored", 1, 0)
    store.put("never-stored", None, 0)
    store.flush()
    assert listener.calls == []


def test_should_merge_cache_and_store_in_window_order_with_cached_deletes_hiding_entries(cached_window):
    store, _, _ = cached_window
    store.put("a", 1, 0)
    store.put("b", 2, 10)
    store.flush()
    store.put("a", None, 0)
    store.put("a", 3, 20)
    store.put("c", 4, 10)
    assert items(store.fetch("a", 0, 100)) == [(20, 3)]
    assert store.fetch("a", 0) is None
    assert items(store.fetch_all(0, 100)) == [
        (Windowed("b", TimeWindow(10, 20)), 2),
        (Windowed("c", TimeWindow(10, 20)), 4),
        (Windowed("a", TimeWindow(20, 30)), 3),
    ]
    assert [kv[0].key for kv in items(store.backward_fetch("a", "b", 0, 100))] == ["a", "b"]


@pytest.mark.parametrize("level", ["info", "debug"])
def test_should_count_window_puts_and_point_fetches_and_time_them_at_debug(make_context, level):
    store = window_builder().build()
    store.init(make_context(app_configs={"metrics_recording_level": level}))
    store.put("k", 7, 10)
    store.put("k", 8, 20)
    assert store.fetch("k", 10) == 7 and store.fetch("missing", 10) is None
    sensors = store.store_metrics.sensors
    assert (sensors["put"].count, sensors["fetch"].count) == (2, 2)
    timed = 2 if level == "debug" else 0  # info: counted only, no clock read
    assert (sensors["put"].timed, sensors["fetch"].timed) == (timed, timed)
    with pytest.raises(SerializationError):  # a failed put is counted too, as a KV store's is
        store.put(object(), 1, 30)
    assert sensors["put"].count == 3


def test_should_refuse_window_operations_before_init():
    store = window_builder().build()
    with pytest.raises(InvalidStateStoreError):
        store.put("k", 1, 10)
    with pytest.raises(InvalidStateStoreError):
        store.fetch("k", 10)
