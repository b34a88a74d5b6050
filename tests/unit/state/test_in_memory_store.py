from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore


def make(context, name="mem"):
    store = InMemoryKeyValueStore(name)
    store.init(context)
    return store


def test_should_not_be_persistent(context):
    assert make(context).persistent is False


def test_should_count_entries_exactly(context):
    store = make(context)
    for i in range(10):
        store.put(bytes([i]), b"v")
    store.delete(b"\x03")
    assert store.approximate_num_entries() == 9


def test_should_skip_keys_deleted_while_a_scan_is_open(context):
    store = make(context)
    for k in (b"a", b"b", b"c"):
        store.put(k, b"v")
    with store.all() as iterator:
        assert next(iterator).key == b"a"
        store.delete(b"b")
        assert [kv.key for kv in iterator] == [b"c"]


def test_should_not_show_keys_added_after_a_scan_opened(context):
    store = make(context)
    store.put(b"a", b"1")
    with store.all() as iterator:
        store.put(b"b", b"2")
        assert [kv.key for kv in iterator] == [b"a"]


def test_should_keep_keys_sorted_after_many_random_writes(context):
    import random

    rng = random.Random(7)
    store = make(context)
    expected = {}
    for _ in range(2000):
        key = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        if rng.random() < 0.3:
            store.delete(key)
            expected.pop(key, None)
        else:
            store.put(key, b"v")
            expected[key] = b"v"
    assert [kv.key for kv in store.all()] == sorted(expected)
    lower, upper = b"\x40", b"\xa0"
    assert [kv.key for kv in store.range(lower, upper)] == [
        k for k in sorted(expected) if lower <= k <= upper
    ]


def test_should_have_no_committed_offset_and_ignore_restore_offsets(context):
    store = make(context)
    store.restore_batch([(b"k", b"v")], 12)
    assert store.committed_offset() is None
    assert store.get(b"k") == b"v"


def test_should_start_empty_after_close_and_reinit(context):
    store = make(context)
    store.put(b"k", b"v")
    store.close()
    store.init(context)
    assert store.get(b"k") is None


def test_should_not_take_a_flush_listener(context):
    assert make(context).set_flush_listener(lambda *a: None) is False
