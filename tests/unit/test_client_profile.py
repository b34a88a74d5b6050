from __future__ import annotations

import pytest

from streams_runtime.kafka.profile import client_config


def test_every_client_refuses_topic_auto_creation_by_default() -> None:
    for role in ("consumer", "low_latency_consumer", "producer"):
        assert client_config(role, "b:9092")["allow.auto.create.topics"] is False


def test_consumer_profile_sets_fast_fetch_backoff_and_short_fetch_wait() -> None:
    config = client_config("consumer", "b:9092")
    assert config["fetch.queue.backoff.ms"] == 10
    assert config["fetch.wait.max.ms"] <= 50
    assert client_config("low_latency_consumer", "b:9092")["fetch.wait.max.ms"] <= 10


def test_producer_profile_lingers_at_least_5_ms() -> None:
    assert client_config("producer", "b:9092")["linger.ms"] >= 5


def test_user_overrides_win_over_the_profile() -> None:
    config = client_config("producer", "b:9092", {"linger.ms": 0, "allow.auto.create.topics": True})
    assert config["linger.ms"] == 0 and config["allow.auto.create.topics"] is True
    assert config["bootstrap.servers"] == "b:9092"


def test_unknown_role_names_the_allowed_roles() -> None:
    with pytest.raises(ValueError, match="unknown client role 'streamer'; allowed: .*'producer'"):
        client_config("streamer", "b:9092")


def test_producers_are_idempotent_unless_the_user_says_otherwise() -> None:
    # librdkafka's default is off: a retried batch could land after a later one (a changelog
    # or an output ending with an older value than the last written)
    assert client_config("producer", "b:9092")["enable.idempotence"] is True
    assert client_config("producer", "b:9092", {"enable.idempotence": False})["enable.idempotence"] is False


def test_producers_place_keyed_records_as_kafkas_default_partitioner_does() -> None:
    # librdkafka's default, consistent_random (CRC32), puts a key on another partition than the
    # Java clients' murmur2: a join's other side and interactive queries look for it elsewhere
    assert client_config("producer", "b:9092")["partitioner"] == "murmur2_random"
    assert client_config("producer", "b:9092", {"partitioner": "random"})["partitioner"] == "random"


def test_the_in_memory_cluster_places_keys_as_kafka_does() -> None:
    from streams_runtime.kafka.partitioner import partition_for
    from streams_runtime.testing import InMemoryCluster

    cluster = InMemoryCluster()
    cluster.create_topic("t", 7)
    for key in (b"", b"a", b"user-42", b"\x00\xff" * 9):
        assert cluster.append("t", None, key, b"v")[0] == partition_for(key, 7)
    assert cluster.append("t", None, None, b"v")[0] == 0
