"""Replays Kafka Streams' RocksDBVersionedStoreTest against both versioned stores (RocksDB and
in-memory), through the Processor API in the TopologyTestDriver.

Constants are the Java test's: history retention 300000 (which doubles as the grace period), segment
interval retention / 3, base timestamp 10. ``put`` checks the returned validity end (Kafka's
PUT_RETURN_CODE semantics); ``VALID_TO_UNDEFINED`` is the latest version's (our ``valid_to=None``).
"""

import pytest

from streams_runtime import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    Processor,
    Serdes,
    Stores,
    TopologyTestDriver,
)
from streams_runtime.processor import Topology

HISTORY_RETENTION = 300_000
GRACE_PERIOD = HISTORY_RETENTION
SEGMENT_INTERVAL = HISTORY_RETENTION // 3
BASE = 10
UNDEFINED = PUT_RETURN_CODE_VALID_TO_UNDEFINED


class _Noop(Processor):
    def init(self, context):
        pass

    def process(self, record):
        pass


@pytest.fixture(params=["rocksdb", "in_memory"])
def store(request, make_config):
    make = (
        Stores.persistent_versioned_key_value_store
        if request.param == "rocksdb"
        else Stores.in_memory_versioned_key_value_store
    )
    topology = Topology()
    topology.add_source("source", "input")
    topology.add_processor("p", _Noop, "source")
    builder = Stores.versioned_key_value_store_builder(
        make("myversionedrocks", HISTORY_RETENTION), Serdes.String(), Serdes.String()
    )
    topology.add_state_store(builder, "p")
    with TopologyTestDriver(topology, make_config()) as driver:
        yield driver.get_state_store("myversionedrocks")


def put(store, key, value, timestamp, expected):
    assert store.put(key, value, timestamp) == expected


def get_value(store, key, value, timestamp):
    found = store.get(key)
    assert (found.value, found.timestamp, found.valid_to) == (value, timestamp, None)


def get_null(store, key):
    assert store.get(key) is None


def as_of(store, key, as_of_ts, value, timestamp, valid_to):
    found = store.get(key, as_of_ts)
    assert found is not None, f"nothing at {as_of_ts}"
    expected_to = None if valid_to == UNDEFINED else valid_to
    assert (found.value, found.timestamp, found.valid_to) == (value, timestamp, expected_to)


def as_of_null(store, key, as_of_ts):
    assert store.get(key, as_of_ts) is None


def test_should_put_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutLatest."""
    put(store, "k", "v", BASE, UNDEFINED)
    put(store, "k", "v2", BASE + 1, UNDEFINED)
    get_value(store, "k", "v2", BASE + 1)
    as_of(store, "k", BASE, "v", BASE, BASE + 1)
    as_of(store, "k", BASE + 1, "v2", BASE + 1, UNDEFINED)
    as_of(store, "k", BASE + 2, "v2", BASE + 1, UNDEFINED)


def test_should_put_null_as_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutNullAsLatest."""
    put(store, "k", None, BASE, UNDEFINED)
    put(store, "k", None, BASE + 1, UNDEFINED)
    get_null(store, "k")
    for ts in (BASE, BASE + 1, BASE + 2):
        as_of_null(store, "k", ts)


def test_should_put_older_with_non_null_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutOlderWithNonNullLatest."""
    put(store, "k", "v", BASE, UNDEFINED)
    put(store, "k", "v2", BASE - 2, BASE)
    put(store, "k", "v1", BASE - 1, BASE)
    put(store, "k", "v4", BASE - 4, BASE - 2)
    get_value(store, "k", "v", BASE)
    as_of(store, "k", BASE, "v", BASE, UNDEFINED)
    as_of(store, "k", BASE - 1, "v1", BASE - 1, BASE)
    as_of(store, "k", BASE - 2, "v2", BASE - 2, BASE - 1)
    as_of(store, "k", BASE - 3, "v4", BASE - 4, BASE - 2)


def test_should_put_older_with_null_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutOlderWithNullLatest."""
    put(store, "k", None, BASE, UNDEFINED)
    put(store, "k", "v2", BASE - 2, BASE)
    put(store, "k", "v1", BASE - 1, BASE)
    put(store, "k", "v4", BASE - 4, BASE - 2)
    get_null(store, "k")
    as_of_null(store, "k", BASE)
    as_of(store, "k", BASE - 1, "v1", BASE - 1, BASE)
    as_of(store, "k", BASE - 2, "v2", BASE - 2, BASE - 1)
    as_of(store, "k", BASE - 3, "v4", BASE - 4, BASE - 2)


def test_should_put_older_null_with_non_null_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutOlderNullWithNonNullLatest."""
    put(store, "k", "v", BASE, UNDEFINED)
    put(store, "k", None, BASE - 2, BASE)
    put(store, "k", None, BASE - 1, BASE)
    put(store, "k", None, BASE - 4, BASE - 2)
    put(store, "k", "v5", BASE - 5, BASE - 4)
    put(store, "k", "v3", BASE - 3, BASE - 2)
    put(store, "k", None, BASE - 6, BASE - 5)
    get_value(store, "k", "v", BASE)
    as_of(store, "k", BASE, "v", BASE, UNDEFINED)
    as_of_null(store, "k", BASE - 1)
    as_of_null(store, "k", BASE - 2)
    as_of(store, "k", BASE - 3, "v3", BASE - 3, BASE - 2)
    as_of_null(store, "k", BASE - 4)
    as_of(store, "k", BASE - 5, "v5", BASE - 5, BASE - 4)
    as_of_null(store, "k", BASE - 6)


def test_should_put_repeat_timestamp_as_latest(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutRepeatTimestampAsLatest."""
    put(store, "k", "to_be_replaced", BASE, UNDEFINED)
    put(store, "k", "b", BASE, UNDEFINED)
    get_value(store, "k", "b", BASE)
    as_of(store, "k", BASE, "b", BASE, UNDEFINED)
    as_of_null(store, "k", BASE - 1)
    put(store, "k", None, BASE, UNDEFINED)
    get_null(store, "k")
    as_of_null(store, "k", BASE)
    put(store, "k", None, BASE, UNDEFINED)
    get_null(store, "k")
    put(store, "k", "b", BASE, UNDEFINED)
    get_value(store, "k", "b", BASE)
    as_of_null(store, "k", BASE - 1)


def test_should_put_repeat_timestamps(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutRepeatTimestamps."""
    s = SEGMENT_INTERVAL
    put(store, "k", "to_be_replaced", s + 20, UNDEFINED)
    put(store, "k", None, s - 10, s + 20)
    put(store, "k", "to_be_replaced", s - 10, s + 20)
    put(store, "k", None, s - 10, s + 20)
    put(store, "k", "to_be_replaced", s - 1, s + 20)
    put(store, "k", "to_be_replaced", s + 1, s + 20)
    put(store, "k", None, s - 1, s + 1)
    put(store, "k", None, s + 1, s + 20)
    put(store, "k", None, s + 10, s + 20)
    put(store, "k", None, s + 5, s + 10)
    put(store, "k", "vp5", s + 5, s + 10)
    put(store, "k", "to_be_replaced", s - 5, s - 1)
    put(store, "k", "vn5", s - 5, s - 1)
    put(store, "k", None, s + 20, UNDEFINED)
    put(store, "k", None, s + 20, UNDEFINED)
    put(store, "k", "vn6", s - 6, s - 5)
    get_null(store, "k")
    as_of_null(store, "k", s + 30)
    as_of_null(store, "k", s + 15)
    as_of(store, "k", s + 6, "vp5", s + 5, s + 10)
    as_of_null(store, "k", s + 2)
    as_of_null(store, "k", s)
    as_of_null(store, "k", s - 1)
    as_of(store, "k", s - 5, "vn5", s - 5, s - 1)
    as_of(store, "k", s - 6, "vn6", s - 6, s - 5)
    as_of_null(store, "k", s - 8)


def test_should_move_record_to_older_segment_during_put(store):
    """Mirrors RocksDBVersionedStoreTest.shouldMoveRecordToOlderSegmentDuringPut."""
    s = SEGMENT_INTERVAL
    put(store, "k", "vp20", s + 20, UNDEFINED)
    put(store, "k", "vp10", s + 10, s + 20)
    put(store, "k", "vn10", s - 10, s + 10)
    put(store, "k", "vn2", s - 2, s + 10)
    put(store, "k", "vn1", s - 1, s + 10)
    put(store, "k", "vp1", s + 1, s + 10)
    get_value(store, "k", "vp20", s + 20)
    as_of(store, "k", s + 30, "vp20", s + 20, UNDEFINED)
    as_of(store, "k", s + 15, "vp10", s + 10, s + 20)
    as_of(store, "k", s + 5, "vp1", s + 1, s + 10)
    as_of(store, "k", s, "vn1", s - 1, s + 1)
    as_of(store, "k", s - 1, "vn1", s - 1, s + 1)
    as_of(store, "k", s - 2, "vn2", s - 2, s - 1)
    as_of(store, "k", s - 5, "vn10", s - 10, s - 2)


def test_should_put_non_latest_tombstone_into_new_segment_with_valid_to(store):
    """Mirrors RocksDBVersionedStoreTest.shouldPutNonLatestTombstoneIntoNewSegmentWithValidTo."""
    s = SEGMENT_INTERVAL
    put(store, "k", "vp30", s + 30, UNDEFINED)
    put(store, "k", None, s - 10, s + 30)
    put(store, "k", "vn5", s - 5, s + 30)
    put(store, "k", "vn1", s - 1, s + 30)
    put(store, "k", None, s - 2, s - 1)
    get_value(store, "k", "vp30", s + 30)
    as_of(store, "k", s + 10, "vn1", s - 1, s + 30)
    as_of(store, "k", s - 1, "vn1", s - 1, s + 30)
    as_of_null(store, "k", s - 2)
    as_of(store, "k", s - 5, "vn5", s - 5, s - 2)
    as_of_null(store, "k", s - 10)


def test_should_delete(store):
    """Mirrors RocksDBVersionedStoreTest.shouldDelete."""
    s = SEGMENT_INTERVAL
    put(store, "k", "vp20", s + 20, UNDEFINED)
    put(store, "k", "vp10", s + 10, s + 20)
    put(store, "k", "vn10", s - 10, s + 10)
    put(store, "k", "vn2", s - 2, s + 10)
    deleted = store.delete("k", s - 5)
    assert (deleted.value, deleted.timestamp) == ("vn10", s - 10)
    deleted = store.delete("k", s + 10)
    assert (deleted.value, deleted.timestamp) == ("vp10", s + 10)
    assert store.delete("k", s + 10) is None
    deleted = store.delete("k", s + 25)
    assert (deleted.value, deleted.timestamp) == ("vp20", s + 20)


def test_should_not_put_expired(store):
    """Mirrors RocksDBVersionedStoreTest.shouldNotPutExpired."""
    put(store, "k", "v", HISTORY_RETENTION + 10, UNDEFINED)
    put(store, "k1", "v1", HISTORY_RETENTION + 10 - GRACE_PERIOD, UNDEFINED)
    get_value(store, "k1", "v1", HISTORY_RETENTION + 10 - GRACE_PERIOD)
    put(store, "k2", "v2", HISTORY_RETENTION + 9 - GRACE_PERIOD, PUT_RETURN_CODE_NOT_PUT)
    get_null(store, "k2")


def test_should_not_delete_expired(store):
    """Mirrors RocksDBVersionedStoreTest.shouldNotDeleteExpired."""
    put(store, "k1", "v1", 1, UNDEFINED)
    put(store, "k2", "v2", 1, UNDEFINED)
    put(store, "kother", "vother", HISTORY_RETENTION + 10, UNDEFINED)
    deleted = store.delete("k1", HISTORY_RETENTION + 10 - GRACE_PERIOD)
    assert (deleted.value, deleted.timestamp) == ("v1", 1)
    get_null(store, "k1")
    assert store.delete("k2", HISTORY_RETENTION + 9 - GRACE_PERIOD) is None
    get_value(store, "k2", "v2", 1)


def test_should_get_from_older_segments(store):
    """Mirrors RocksDBVersionedStoreTest.shouldGetFromOlderSegments."""
    s = SEGMENT_INTERVAL
    put(store, "ko", None, s - 10, UNDEFINED)
    put(store, "ko", None, 2 * s - 10, UNDEFINED)
    put(store, "ko", None, 3 * s - 10, UNDEFINED)
    as_of_null(store, "k", s - 20)
    put(store, "k", "v", s - 20, UNDEFINED)
    put(store, "k", None, s - 10, UNDEFINED)
    as_of_null(store, "k", s - 30)
    as_of(store, "k", s - 15, "v", s - 20, s - 10)
    as_of_null(store, "k", s - 5)
    put(store, "k", "v2", 3 * s - 20, UNDEFINED)
    put(store, "k", None, 3 * s - 10, UNDEFINED)
    as_of_null(store, "k", s - 30)
    as_of(store, "k", s - 15, "v", s - 20, s - 10)
    as_of_null(store, "k", s - 5)


def test_should_not_get_expired(store):
    """Mirrors RocksDBVersionedStoreTest.shouldNotGetExpired."""
    s = SEGMENT_INTERVAL
    put(store, "k", "v_old", 0, UNDEFINED)
    put(store, "k", "v", s - 10, UNDEFINED)
    as_of(store, "k", s - 11, "v_old", 0, s - 10)
    put(store, "ko", "vo", HISTORY_RETENTION + s - 11, UNDEFINED)
    as_of(store, "k", s - 11, "v_old", 0, s - 10)
    put(store, "ko", "vo2", HISTORY_RETENTION + s - 10, UNDEFINED)
    as_of_null(store, "k", s - 11)


def test_should_get_expired_if_latest_value(store):
    """Mirrors RocksDBVersionedStoreTest.shouldGetExpiredIfLatestValue."""
    put(store, "k", "v", 1, UNDEFINED)
    put(store, "ko", "vo_old", 1, UNDEFINED)
    put(store, "ko", "vo_new", HISTORY_RETENTION + 12, UNDEFINED)
    as_of(store, "k", 10, "v", 1, UNDEFINED)
    as_of_null(store, "ko", 10)


def test_should_distinguish_empty_and_null(store):
    """Mirrors RocksDBVersionedStoreTest.shouldDistinguishEmptyAndNull (first half)."""
    s = SEGMENT_INTERVAL
    put(store, "k", None, s + 20, UNDEFINED)
    put(store, "k", None, s - 10, s + 20)
    put(store, "k", None, s - 1, s + 20)
    put(store, "k", None, s + 1, s + 20)
    put(store, "k", None, s + 10, s + 20)
    put(store, "k", "", s + 5, s + 10)
    put(store, "k", "", s - 5, s - 1)
    put(store, "k", "", s - 6, s - 5)
    get_null(store, "k")
    as_of_null(store, "k", s + 30)
    as_of(store, "k", s + 6, "", s + 5, s + 10)
    as_of(store, "k", s - 5, "", s - 5, s - 1)


def test_should_set_changelog_topic_properties():
    """Mirrors VersionedKeyValueStoreIntegrationTest.shouldSetChangelogTopicProperties: the changelog
    is compacted, with a minimum compaction lag of history retention + one day (checked on the
    configs the runtime creates the topic with)."""
    from streams_runtime import StreamsBuilder

    history_retention = 1_000
    builder = StreamsBuilder()
    builder.add_state_store(
        Stores.versioned_key_value_store_builder(
            Stores.persistent_versioned_key_value_store("versioned-store", history_retention),
            Serdes.Integer(),
            Serdes.String(),
        )
    )
    builder.stream("input").process(_Noop, "versioned-store")
    configs = builder.build({"application_id": "app"}).internal_topic_configs()
    changelog = configs["app-versioned-store-changelog"]
    assert changelog["cleanup.policy"] == "compact"
    assert changelog["min.compaction.lag.ms"] == str(history_retention + 24 * 60 * 60 * 1000)


def test_should_answer_versioned_and_multi_versioned_key_queries(make_config):
    """Mirrors IQv2VersionedStoreIntegrationTest.verifyStore (its key and multi-version queries, on
    the store of a table materialized as versioned, one day of history)."""
    from streams_runtime import Materialized, StreamsBuilder

    base = 1_672_567_200  # 2023-01-01T10:00:00Z in seconds, used as milliseconds as the Java test does
    values, stamps = [2, 20, 200, 2000], [base, base + 10, base + 20, base + 30]
    builder = StreamsBuilder()
    builder.table(
        "input-topic",
        materialized=Materialized.as_(
            Stores.persistent_versioned_key_value_store("versioned-store", 86_400_000)
        ),
    )
    now = 1_800_000_000_000
    with TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.Integer())) as driver:
        topic = driver.create_input_topic("input-topic", Serdes.Integer(), Serdes.Integer())
        for value, ts in zip(values, stamps, strict=True):
            topic.pipe_input(2, value, ts)
        store = driver.get_state_store("versioned-store")
        for as_of in (None, now, stamps[3]):
            found = store.get(2, as_of)
            assert (found.value, found.timestamp, found.valid_to) == (2000, stamps[3], None)
        found = store.get(2, stamps[0])
        assert (found.value, found.timestamp, found.valid_to) == (2, stamps[0], stamps[1])
        assert store.get(2, stamps[0] - 50) is None
        assert store.get(3, now) is None

        def expected(lo, hi):
            return [(values[i], stamps[i], stamps[i + 1] if i < 3 else None) for i in range(lo, hi + 1)]

        def query(**kwargs):
            return [(r.value, r.timestamp, r.valid_to) for r in store.versions(2, **kwargs)]

        assert query() == expected(0, 3)[::-1]
        assert query(ascending=True) == expected(0, 3)
        assert query(from_time=stamps[1] + 5, to_time=now) == expected(1, 3)[::-1]
        assert query(from_time=stamps[0] - 100, to_time=stamps[0] - 50) == []
        assert query(from_time=stamps[0] - 100, to_time=stamps[0] - 50, ascending=True) == []
        assert store.versions(3) == [] and store.versions(3, ascending=True) == []
