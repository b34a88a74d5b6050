"""Window stores, persistent and in memory: the semantics of Kafka Streams' AbstractWindowBytesStoreTest.

Expected values follow that test: WINDOW_SIZE 3, SEGMENT_INTERVAL 60 s, RETENTION 2 intervals,
records placed around a segment boundary (START = SEGMENT_INTERVAL - 4).
"""

import pytest

from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores
from streams_runtime.windowed import TimeWindow, Windowed

WINDOW_SIZE = 3
SEGMENT_INTERVAL = 60_000
RETENTION = 2 * SEGMENT_INTERVAL
START = SEGMENT_INTERVAL - 4

SUPPLIERS = {"rocksdb": Stores.persistent_window_store, "in_memory": Stores.in_memory_window_store}


@pytest.fixture(params=sorted(SUPPLIERS))
def make_store(request, context):
    """Factory: ``make_store(retention, size, retain_duplicates, key_serde)`` -> initialized store."""
    opened = []

    def make(retention=RETENTION, size=WINDOW_SIZE, retain_duplicates=False, key_serde=None, name="w"):
        supplier = SUPPLIERS[request.param](name, retention, size, retain_duplicates)
        store = Stores.window_store_builder(supplier, key_serde or Serdes.Integer(), Serdes.String()).build()
        store.init(context)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()


def pair(key, value, start, size=WINDOW_SIZE):
    return (Windowed(key, TimeWindow(start, start + size)), value)


ZERO, ONE, TWO = pair(0, "zero", START), pair(1, "one", START + 1), pair(2, "two", START + 2)
THREE, FOUR, FIVE = pair(3, "three", START + 2), pair(4, "four", START + 4), pair(5, "five", START + 5)


def put_first_batch(store):
    for windowed, value in (ZERO, ONE, TWO, THREE, FOUR, FIVE):
        store.put(windowed.key, value, windowed.window.start)


def put_second_batch(store):
    for i in range(1, 7):
        store.put(2, f"two+{i}", START + 2 + i)


def items(iterator):
    with iterator:
        return [tuple(kv) for kv in iterator]


def values(iterator):
    return {value for _, value in items(iterator)}


def test_should_fetch_single_key_windows_with_both_time_bounds_inclusive(store):
    put_first_batch(store)
    put_second_batch(store)
    assert values(store.fetch(2, START - 2 - WINDOW_SIZE, START - 2 + WINDOW_SIZE)) == set()
    assert values(store.fetch(2, START - 1 - WINDOW_SIZE, START - 1 + WINDOW_SIZE)) == {"two"}
    assert values(store.fetch(2, START + 2, START + 2)) == {"two"}
    assert values(store.fetch(2, START + 6 - WINDOW_SIZE, START + 6 + WINDOW_SIZE)) == {
        "two+1",
        "two+2",
        "two+3",
        "two+4",
        "two+5",
        "two+6",
    }
    assert values(store.fetch(2, START + 11 - WINDOW_SIZE, START + 11 + WINDOW_SIZE)) == {"two+6"}
    assert values(store.fetch(2, START + 12 - WINDOW_SIZE, START + 12 + WINDOW_SIZE)) == set()


def test_should_fetch_a_single_window_by_its_start(store):
    put_first_batch(store)
    put_second_batch(store)
    assert [store.fetch(2, START + t) for t in range(3, 9)] == [f"two+{i}" for i in range(1, 7)]
    assert store.fetch(1, 0) is None


def test_should_return_single_key_windows_in_start_order_as_start_value_pairs(store):
    for start in (START + 5, START, START + 2):
        store.put(1, f"v{start - START}", start)
    assert items(store.fetch(1, START, START + 5)) == [(START, "v0"), (START + 2, "v2"), (START + 5, "v5")]
    assert items(store.backward_fetch(1, START, START + 5)) == [
        (START + 5, "v5"),
        (START + 2, "v2"),
        (START, "v0"),
    ]


def test_should_get_all_windows_ordered_by_start_then_key(store):
    store.put(4, "four", START + 4)
    store.put(0, "zero", START)
    store.put(3, "three", START + 2)
    store.put(2, "two", START + 2)
    store.put(1, "one", START + 1)
    assert items(store.all()) == [ZERO, ONE, TWO, THREE, FOUR]
    assert items(store.backward_all()) == [FOUR, THREE, TWO, ONE, ZERO]


def test_should_not_return_deleted_windows(store):
    put_first_batch(store)
    store.put(1, None, START + 1)
    store.put(3, None, START + 2)
    assert items(store.all()) == [ZERO, TWO, FOUR, FIVE]


def test_should_fetch_all_windows_in_an_inclusive_time_range(store):
    put_first_batch(store)
    assert items(store.fetch_all(START + 1, START + 4)) == [ONE, TWO, THREE, FOUR]
    assert items(store.fetch_all(START, START + 3)) == [ZERO, ONE, TWO, THREE]
    assert items(store.backward_fetch_all(START + 1, START + 5)) == [FIVE, FOUR, THREE, TWO, ONE]


def test_should_fetch_key_ranges_with_inclusive_key_and_time_bounds(store):
    put_first_batch(store)
    assert items(store.fetch(0, 1, START - WINDOW_SIZE, START + WINDOW_SIZE)) == [ZERO, ONE]
    assert items(store.fetch(1, 1, START - WINDOW_SIZE, START + WINDOW_SIZE)) == [ONE]
    assert items(store.fetch(1, 3, START - WINDOW_SIZE, START + WINDOW_SIZE)) == [ONE, TWO, THREE]
    assert items(store.fetch(0, 5, START - WINDOW_SIZE, START + WINDOW_SIZE + 5)) == [
        ZERO,
        ONE,
        TWO,
        THREE,
        FOUR,
        FIVE,
    ]
    assert items(store.fetch(0, 5, START + 2, START + WINDOW_SIZE + 5)) == [TWO, THREE, FOUR, FIVE]
    assert items(store.fetch(4, 5, START + 2, START + WINDOW_SIZE)) == []
    assert items(store.fetch(0, 3, START + 3, START + WINDOW_SIZE + 5)) == []
    assert items(store.backward_fetch(1, 3, START - WINDOW_SIZE, START + WINDOW_SIZE)) == [THREE, TWO, ONE]


def test_should_treat_none_key_bounds_as_open(store):
    put_first_batch(store)
    assert items(store.fetch(None, 1, START, START + 5)) == [ZERO, ONE]
    assert items(store.fetch(4, None, START, START + 5)) == [FOUR, FIVE]


def test_should_return_empty_iterator_when_key_range_is_inverted(store):
    put_first_batch(store)
    assert items(store.fetch(3, 1, 0, START + 10)) == []


def test_should_overwrite_a_window_unless_duplicates_are_retained(store):
    store.put(1, "one", 0)
    store.put(1, "one v2", 0)
    assert items(store.fetch(1, 0, 0)) == [(0, "one v2")]
    store.put(1, None, 0)
    assert items(store.fetch(1, 0, 0)) == []


def test_should_keep_every_duplicate_in_insertion_order_when_retaining_duplicates(make_store):
    store = make_store(retain_duplicates=True)
    for start, value in ((0, "one"), (0, "one-2"), (30, "two"), (30, "two-2"), (60, "three")):
        store.put(1, value, start)
    assert items(store.fetch(1, 0, 30)) == [(0, "one"), (0, "one-2"), (30, "two"), (30, "two-2")]
    store.put(1, None, 0)  # duplicates cannot be deleted: ignored
    assert len(items(store.fetch(1, 0, 0))) == 2


def test_should_iterate_over_exact_keys_only_when_keys_share_a_prefix(make_store):
    store = make_store(retention=0x7A00000000000000, size=0x7A00000000000000, key_serde=Serdes.String())
    store.put("a", "0001", 0)
    store.put("aa", "0002", 0)
    store.put("a", "0003", 1)
    store.put("aa", "0004", 1)
    store.put("a", "0005", 0x7A00000000000000 - 1)
    assert values(store.fetch("a", 0, 2**63 - 1)) == {"0001", "0003", "0005"}
    assert values(store.fetch("aa", "aa", 0, 2**63 - 1)) == {"0002", "0004"}


def test_should_iterate_over_exact_binary_keys(make_store):
    store = make_store(retain_duplicates=True, key_serde=Serdes.Bytes())
    k1, k2, k3 = b"\x00", b"\x00\x00", b"\x00\x00\x00"
    for key, value, start in (
        (k1, "1", 0),
        (k2, "2", 0),
        (k3, "3", 0),
        (k1, "4", 1),
        (k2, "5", 1),
        (k3, "6", 59999),
        (k1, "7", 59999),
        (k2, "8", 59999),
        (k3, "9", 59999),
    ):
        store.put(key, value, start)
    assert values(store.fetch(k1, 0, 2**63 - 1)) == {"1", "4", "7"}
    assert values(store.fetch(k2, 0, 2**63 - 1)) == {"2", "5", "8"}
    assert values(store.fetch(k3, 0, 2**63 - 1)) == {"3", "6", "9"}


def test_should_drop_and_count_puts_of_expired_windows(store):
    store.put(1, "initial record", 2 * RETENTION)
    store.put(1, "late record", 0)
    store.put(1, "another on-time record", RETENTION + 1)
    assert store.inner().dropped_records == 1
    assert values(store.fetch(1, 0, 3 * RETENTION)) == {"initial record", "another on-time record"}


def test_should_expire_windows_at_exactly_stream_time_minus_retention(store):
    store.put(1, "old", 100)
    store.put(1, "newer", 101)
    store.put(2, "stream time", 100 + RETENTION)  # windows starting at <= 100 are now expired
    assert items(store.fetch(1, 0, 200)) == [(101, "newer")]
    assert store.fetch(1, 100) is None
    assert [kv[0].key for kv in items(store.all())] == [1, 2]


def test_should_not_fail_when_the_fetched_time_range_is_expired(store):
    store.put(1, "one", 0)
    store.put(1, "two", 4 * RETENTION)
    assert items(store.fetch(1, 0, 10)) == []


def test_should_drop_whole_segments_once_all_their_windows_expired(store):
    store.put(1, "a", 0)
    store.put(1, "b", SEGMENT_INTERVAL)
    assert store.inner().segments.segment_ids() == [0, 1]
    store.put(1, "c", SEGMENT_INTERVAL + RETENTION)
    assert store.inner().segments.segment_ids() == [1, 3]


def test_should_see_windows_written_after_an_iterator_was_opened(store):
    store.put(1, "one", 0)
    store.put(1, "two", 30)
    with store.all() as iterator:
        store.put(1, "three", 60)
        store.put(2, "four", 90)
        assert [kv.value for kv in iterator] == ["one", "two", "three", "four"]


def test_should_peek_the_next_key_without_consuming_it(store):
    store.put(1, "one", 0)
    with store.fetch(1, 0, 10) as iterator:
        assert iterator.peek_next_key() == 0
        assert next(iterator).key == 0
        assert not iterator.has_next()


def test_should_close_open_iterators_when_the_store_is_closed(store):
    store.put(1, "one", 1)
    store.put(1, "two", 2)
    iterator = store.fetch(1, 1, 3)
    assert iterator.has_next()
    store.close()
    assert not iterator.has_next()


def test_should_reject_none_keys(store):
    with pytest.raises(TypeError):
        store.put(None, "v", 0)
    with pytest.raises(TypeError):
        store.fetch(None, 1, 2)


def test_should_reject_a_window_size_larger_than_the_retention():
    with pytest.raises(ValueError, match="retention period"):
        Stores.in_memory_window_store("w", 10, 11)


def test_should_finish_an_open_iteration_when_its_segment_is_dropped_meanwhile(store):
    store.put(1, "a", 0)
    store.put(1, "b", 1)
    with store.fetch(1, 0, 10) as iterator:
        assert next(iterator) == (0, "a")
        store.put(1, "c", 10 * RETENTION)  # expires and drops segment 0
        assert [kv.value for kv in iterator] == ["b"]
    assert items(store.fetch(1, 0, 10)) == []
