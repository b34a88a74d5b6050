import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores, ValueAndTimestamp
from streams_runtime.state.internals.caching_store import CachingKeyValueStore
from streams_runtime.state.internals.change_logging_store import (
    ChangeLoggingKeyValueStore,
    ChangeLoggingTimestampedKeyValueStore,
)
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.metered_store import (
    MeteredKeyValueStore,
    MeteredTimestampedKeyValueStore,
)
from streams_runtime.state.internals.rocksdb_store import RocksDBStore


def layers(store):
    found = []
    while store is not None:
        found.append(type(store))
        store = getattr(store, "wrapped", None)
    return found


def builder(name="s", supplier=Stores.in_memory_key_value_store):
    return Stores.key_value_store_builder(supplier(name), Serdes.String(), Serdes.String())


def test_should_enable_logging_and_disable_caching_by_default():
    b = builder()
    assert (b.name, b.logging_enabled, b.caching_enabled, b.log_config) == ("s", True, False, {})
    assert layers(b.build()) == [MeteredKeyValueStore, ChangeLoggingKeyValueStore, InMemoryKeyValueStore]


def test_should_stack_metered_caching_logging_inner_outermost_first():
    store = builder(supplier=Stores.persistent_key_value_store).with_caching_enabled().build()
    assert layers(store) == [
        MeteredKeyValueStore,
        CachingKeyValueStore,
        ChangeLoggingKeyValueStore,
        RocksDBStore,
    ]


def test_should_leave_out_disabled_layers():
    store = builder().with_caching_enabled().with_caching_disabled().with_logging_disabled().build()
    assert layers(store) == [MeteredKeyValueStore, InMemoryKeyValueStore]


def test_should_keep_the_changelog_topic_config():
    b = builder().with_logging_enabled({"cleanup.policy": "compact", "segment.ms": 100})
    assert b.log_config == {"cleanup.policy": "compact", "segment.ms": "100"}
    b.log_config["x"] = "mutating a copy"
    assert "x" not in b.log_config
    assert builder().with_logging_disabled().log_config == {}


def test_should_build_timestamped_stacks():
    b = Stores.timestamped_key_value_store_builder(
        Stores.persistent_timestamped_key_value_store("t"), Serdes.String(), Serdes.Long()
    )
    assert b.timestamped and b.persistent
    assert layers(b.build()) == [
        MeteredTimestampedKeyValueStore,
        ChangeLoggingTimestampedKeyValueStore,
        RocksDBStore,
    ]


def test_should_build_a_new_stack_per_call():
    b = builder()
    first, second = b.build(), b.build()
    assert first is not second and first.inner() is not second.inner()


@pytest.mark.parametrize("name", ["", "has space", "slash/name", "..", None, "x" * 201])
def test_should_reject_store_names_unfit_for_directories_and_topics(name):
    with pytest.raises(ValueError, match="store name"):
        Stores.in_memory_key_value_store(name)


def test_should_reject_a_missing_supplier():
    with pytest.raises(TypeError):
        Stores.key_value_store_builder(None)


def test_should_run_a_cached_logged_persistent_store_end_to_end(make_context):
    context = make_context(10_000)
    store = (
        Stores.timestamped_key_value_store_builder(
            Stores.persistent_timestamped_key_value_store("counts"), Serdes.String(), Serdes.Long()
        )
        .with_caching_enabled()
        .build()
    )
    forwarded = []
    assert store.set_flush_listener(lambda *call: forwarded.append(call)) is True
    store.init(context.at(10))
    assert store.persistent and store.name == "counts"
    assert context.registered[-1].changelog_topic == "app-counts-changelog"
    store.put("a", ValueAndTimestamp(1, 10))
    store.put("a", ValueAndTimestamp(2, 11))
    assert store.get("a") == ValueAndTimestamp(2, 11)
    assert context.logged == []
    store.flush()
    assert forwarded == [("a", ValueAndTimestamp(2, 11), None, 10)]
    assert [(c.key, c.value, c.timestamp) for c in context.logged] == [(b"a", (2).to_bytes(8, "big"), 11)]
    store.inner().commit_offset(0)
    store.close()

    reopened = Stores.timestamped_key_value_store_builder(
        Stores.persistent_timestamped_key_value_store("counts"), Serdes.String(), Serdes.Long()
    ).build()
    reopened.init(context)
    assert reopened.get("a") == ValueAndTimestamp(2, 11)
    assert reopened.inner().committed_offset() == 0
    reopened.close()
