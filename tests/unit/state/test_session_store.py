"""Session stores, persistent and in memory: the semantics of Kafka Streams' AbstractSessionBytesStoreTest."""

import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores
from streams_runtime.windowed import SessionWindow, Windowed

RETENTION = 10_000
SUPPLIERS = {"rocksdb": Stores.persistent_session_store, "in_memory": Stores.in_memory_session_store}


@pytest.fixture(params=sorted(SUPPLIERS))
def make_store(request, context):
    """Factory: ``make_store(retention, key_serde)`` -> an initialized typed session store."""
    opened = []

    def make(retention=RETENTION, key_serde=None, cached=False):
        builder = Stores.session_store_builder(
            SUPPLIERS[request.param]("s", retention), key_serde or Serdes.String(), Serdes.Long()
        )
        store = (builder.with_caching_enabled() if cached else builder).build()
        store.init(context)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()


def session(key, start, end):
    return Windowed(key, SessionWindow(start, end))


def items(iterator):
    with iterator:
        return [tuple(kv) for kv in iterator]


def test_should_put_and_find_sessions_ending_after_earliest_end_and_starting_before_latest_start(store):
    a1, a2 = session("a", 10, 10), session("a", 500, 1000)
    store.put(a1, 1)
    store.put(a2, 2)
    store.put(session("a", 1500, 2000), 1)
    store.put(session("a", 2500, 3000), 2)
    assert items(store.find_sessions("a", 0, 1000)) == [(a1, 1), (a2, 2)]
    assert items(store.find_sessions("a", 400, 600)) == [(a2, 2)]
    assert items(store.backward_find_sessions("a", 0, 1000)) == [(a2, 2), (a1, 1)]


def test_should_find_exactly_the_sessions_a_new_record_merges_with(store):
    sessions = [
        session("a", 0, 100),
        session("a", 101, 200),
        session("a", 201, 300),
        session("a", 301, 400),
        session("a", 401, 500),
    ]
    for value, s in enumerate(sessions, start=1):
        store.put(s, value)
    assert items(store.find_sessions("a", 150, 300)) == [(sessions[1], 2), (sessions[2], 3)]


def test_should_find_sessions_touching_the_merge_range_bounds(store):
    store.put(session("a", 0, 0), 1)
    store.put(session("a", 1000, 1000), 2)
    assert items(store.find_sessions("a", -1, 1000)) == [
        (session("a", 0, 0), 1),
        (session("a", 1000, 1000), 2),
    ]
    assert items(store.find_sessions("a", 1, 999)) == []


def test_should_fetch_all_sessions_of_one_key_only(store):
    expected = [
        (session("a", 0, 0), 1),
        (session("a", 10, 10), 2),
        (session("a", 100, 100), 3),
        (session("a", 1000, 1000), 4),
    ]
    for s, value in expected:
        store.put(s, value)
    store.put(session("aa", 0, 0), 5)
    assert items(store.fetch("a")) == expected
    assert items(store.backward_fetch("a")) == expected[::-1]


def test_should_fetch_sessions_within_an_inclusive_key_range_ordered_by_end(store):
    expected = [
        (session("aa", 10, 10), 2),
        (session("aaa", 100, 100), 3),
        (session("b", 1000, 1000), 4),
        (session("bb", 1500, 2000), 5),
    ]
    for s, value in expected:
        store.put(s, value)
    store.put(session("a", 0, 0), 1)
    store.put(session("bbb", 2500, 3000), 6)
    assert items(store.fetch("aa", "bb")) == expected
    assert items(store.backward_fetch("aa", "bb")) == expected[::-1]


def test_should_fetch_an_exact_session(store):
    store.put(session("a", 0, 4), 1)
    store.put(session("aa", 0, 3), 2)
    store.put(session("aa", 0, 4), 3)
    store.put(session("aa", 1, 4), 4)
    store.put(session("aaa", 0, 4), 5)
    assert store.fetch_session("aa", 0, 4) == 3
    assert store.fetch_session("any key", 0, 5) is None


def test_should_remove_sessions_by_remove_or_none_value(store):
    store.put(session("a", 0, 1000), 1)
    store.put(session("a", 1500, 2500), 2)
    store.remove(session("a", 0, 1000))
    assert items(store.find_sessions("a", 0, 1000)) == []
    store.put(session("a", 1500, 2500), None)
    assert items(store.find_sessions("a", 1500, 2500)) == []


def test_should_find_exact_keys_when_keys_share_a_prefix(make_store):
    store = make_store(retention=0x7A00000000000000)
    store.put(session("a", 0, 0), 1)
    store.put(session("aa", 0, 10), 2)
    store.put(session("a", 10, 20), 3)
    store.put(session("aa", 10, 20), 4)
    store.put(session("a", 0x7A00000000000000 - 2, 0x7A00000000000000 - 1), 5)
    assert {v for _, v in items(store.find_sessions("a", 0, 2**63 - 1))} == {1, 3, 5}
    assert {v for _, v in items(store.find_sessions("aa", 0, 2**63 - 1))} == {2, 4}
    assert {v for _, v in items(store.find_sessions("a", "aa", 0, 2**63 - 1))} == {1, 2, 3, 4, 5}
    assert {v for _, v in items(store.find_sessions("a", "aa", 10, 0))} == {2}


def test_should_not_return_sessions_ending_at_or_before_stream_time_minus_retention(store):
    """Reads skip expired sessions. The write of one is dropped by the in-memory store; the
    RocksDB store, as Kafka Streams', drops writes only by whole segments (60 s here), so it keeps
    this one (unread)."""
    store.put(session("a", 0, 0), 1)
    store.put(session("a", 0, 1), 2)
    store.put(session("b", 9000, RETENTION), 3)  # stream time 10000: ends <= 0 are expired
    store.put(session("a", 0, 0), 4)
    assert store.inner().dropped_records == (0 if store.inner().persistent else 1)
    assert items(store.fetch("a")) == [(session("a", 0, 1), 2)]
    assert store.fetch_session("a", 0, 0) is None


def test_should_drop_the_write_of_a_session_whose_segment_expired(store):
    store.put(session("b", 0, 3 * 60_000), 1)  # stream time three segments on: segment 0 expired
    store.put(session("a", 0, 0), 2)
    assert store.inner().dropped_records == 1
    assert items(store.fetch("a")) == []
