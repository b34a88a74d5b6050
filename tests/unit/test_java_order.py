"""describe() prints sets in Java HashSet order: String.hashCode buckets, insertion order within."""

from streams_runtime.processor.internals.java_order import java_set_string, java_string_hash


def test_java_string_hash_matches_java():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0


def test_hash_set_order_matches_kafka_streams_expected_strings():
    # from Kafka's TopologyTest: joined store sets print in this order whatever the insertion order
    stores = ["in-memory-join-store", "in-memory-join-store-outer-shared-join-store"]
    assert java_set_string(stores) == "[in-memory-join-store-outer-shared-join-store, in-memory-join-store]"
    assert (
        java_set_string(reversed(stores))
        == "[in-memory-join-store-outer-shared-join-store, in-memory-join-store]"
    )
    assert java_set_string([]) == "[]"
