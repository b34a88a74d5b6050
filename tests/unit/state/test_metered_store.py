import pytest

from streams_runtime.errors import InvalidStateStoreError, SerializationError, StreamsConfigError
from streams_runtime.serdes import Serdes
from streams_runtime.state.internals.caching_store import CachingKeyValueStore
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.metered_store import MeteredKeyValueStore
from streams_runtime.state.internals.store_metrics import COUNT_BATCH, Sensor


@pytest.fixture
def metered(context):
    inner = InMemoryKeyValueStore("store")
    store = MeteredKeyValueStore(inner, Serdes.String(), Serdes.Long(), metrics_scope="in-memory")
    store.init(context)
    return store, inner


def items(iterator):
    with iterator:
        return [tuple(kv) for kv in iterator]


def test_should_serialize_keys_and_values_for_the_bytes_store(metered):
    store, inner = metered
    store.put("a", 1)
    assert inner.get(b"a") == (1).to_bytes(8, "big")
    assert store.get("a") == 1
    assert store.get("missing") is None


def test_should_return_typed_old_values(metered):
    store, _ = metered
    assert store.put_if_absent("a", 1) is None
    assert store.put_if_absent("a", 2) == 1
    assert store.delete("a") == 1
    assert store.delete("a") is None


def test_should_iterate_typed_entries(metered):
    store, _ = metered
    store.put_all([("b", 2), ("a", 1), ("c", 3)])
    assert items(store.all()) == [("a", 1), ("b", 2), ("c", 3)]
    assert items(store.reverse_all()) == [("c", 3), ("b", 2), ("a", 1)]
    assert items(store.range("a", "b")) == [("a", 1), ("b", 2)]
    assert items(store.reverse_range("b", None)) == [("c", 3), ("b", 2)]


def test_should_serialize_the_prefix_with_the_prefix_serde(metered):
    store, _ = metered
    store.put_all([("user-1", 1), ("user-2", 2), ("admin", 3)])
    assert items(store.prefix_scan("user-", Serdes.String())) == [("user-1", 1), ("user-2", 2)]
    assert items(store.prefix_scan("adm")) == [("admin", 3)]


def test_should_name_changelog_topic_side_and_serde_when_serialization_fails(metered):
    store, _ = metered
    with pytest.raises(SerializationError) as info:
        store.put("a", "not a long")
    assert (info.value.topic, info.value.side, info.value.serde) == (
        "app-store-changelog",
        "value",
        "Serdes.Long",
    )
    with pytest.raises(SerializationError, match="key"):
        store.get(5)


def test_should_reject_none_keys(metered):
    store, _ = metered
    with pytest.raises(TypeError):
        store.put(None, 1)


def test_should_meter_operations_and_size(metered):
    store, _ = metered
    store.put("a", 1)
    store.put("b", 2)
    store.get("a")
    store.delete("b")
    with store.all() as iterator:
        list(iterator)
    snapshot = store.store_metrics.snapshot()
    assert snapshot["put-total"] == 2
    assert snapshot["get-total"] == 1
    assert snapshot["delete-total"] == 1
    assert snapshot["all-total"] == 1
    assert snapshot["size"] == 1
    assert snapshot["put-rate"] > 0
    assert snapshot["put-latency-avg"] >= 0 and snapshot["put-latency-max"] >= snapshot["put-latency-avg"]
    assert store.store_metrics.tags == {"task-id": "0_0", "store-type": "in-memory", "store-name": "store"}


def test_should_compute_rate_over_a_sliding_window():
    now = [1000.0]
    sensor = Sensor(window_seconds=10, clock=lambda: now[0])
    now[0] = 1010.0
    for _ in range(20):
        sensor.record(1_000_000)
    assert sensor.rate() == pytest.approx(2.0)
    now[0] = 1030.0
    assert sensor.rate() == 0.0
    assert sensor.latency_avg_ms() == pytest.approx(1.0)


def test_should_count_operations_without_a_clock_read_each_and_keep_the_rate() -> None:
    now = [1000.0]
    reads = [0]

    def clock() -> float:
        reads[0] += 1
        return now[0]

    sensor = Sensor(window_seconds=10, clock=clock)
    reads[0] = 0
    for _ in range(1000):
        sensor.record_count()
    assert sensor.count == 1000  # the total is exact at once
    assert reads[0] <= 1000 // COUNT_BATCH  # one clock read per batch, not per operation
    now[0] = 1005.0
    assert sensor.rate() == pytest.approx(1000 / 5)  # every counted operation is in the window
    now[0] = 1020.0
    assert sensor.rate() == 0.0


def test_should_take_default_serdes_from_the_app_config(make_context):
    context = make_context(
        app_configs={"default_key_serde": Serdes.String(), "default_value_serde": Serdes.Integer}
    )
    store = MeteredKeyValueStore(InMemoryKeyValueStore("store"), None, None)
    store.init(context)
    store.put("k", 7)
    assert store.get("k") == 7


def test_should_fail_init_without_any_serde(context):
    store = MeteredKeyValueStore(InMemoryKeyValueStore("store"), None, Serdes.Long())
    with pytest.raises(StreamsConfigError, match="default_key_serde"):
        store.init(context)


def test_should_refuse_operations_before_init():
    store = MeteredKeyValueStore(InMemoryKeyValueStore("store"), Serdes.String(), Serdes.Long())
    with pytest.raises(InvalidStateStoreError):
        store.get("a")


def test_should_deserialize_for_the_flush_listener(make_context):
    context = make_context(10_000)
    store = MeteredKeyValueStore(
        CachingKeyValueStore(InMemoryKeyValueStore("store")), Serdes.String(), Serdes.Long()
    )
    calls = []
    assert store.set_flush_listener(lambda *args: calls.append(args), send_old_values=True) is True
    store.init(context.at(3))
    store.put("a", 1)
    store.flush()
    store.put("a", 2)
    store.flush()
    assert calls == [("a", 1, None, 3), ("a", 2, 1, 3)]


def test_should_report_no_caching_layer_to_the_flush_listener_caller(metered):
    store, _ = metered
    assert store.set_flush_listener(lambda *args: None) is False
