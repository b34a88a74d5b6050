"""StreamsConfig: defaults, aliases, validation errors that name the key and the allowed values."""

from __future__ import annotations

import pytest

from streams_runtime import Serdes, StreamsConfig, StreamsConfigError


def test_defaults_are_filled_in():
    config = StreamsConfig({"application_id": "app"})
    assert config["num_stream_threads"] == 1
    assert config["processing_guarantee"] == "at_least_once"
    assert config["commit_interval_ms"] == 30000
    assert config["statestore_cache_max_bytes"] == 10 * 1024 * 1024
    assert config["default_deserialization_exception_handler"] == "log_and_fail"
    assert config.application_id == "app"


def test_the_source_partitioning_check_warns_by_default_and_takes_any_case():
    assert StreamsConfig()["source_partitioning_check"] == "warn"
    assert StreamsConfig(source_partitioning_check="FAIL")["source_partitioning_check"] == "fail"


def test_exactly_once_lowers_the_default_commit_interval():
    assert StreamsConfig(processing_guarantee="exactly_once_v2")["commit_interval_ms"] == 100


def test_kafka_dotted_names_are_accepted_as_aliases():
    config = StreamsConfig({"application.id": "app", "num.stream.threads": 3})
    assert (config["application_id"], config["num_stream_threads"]) == ("app", 3)


@pytest.mark.parametrize(
    "key, value, allowed",
    [
        ("num_stream_threads", 0, "an integer >= 1"),
        ("processing_guarantee", "exactly_once", "'at_least_once' | 'exactly_once_v2'"),
        (
            "default_deserialization_exception_handler",
            "ignore",
            "'log_and_fail' | 'log_and_continue' | 'dead_letter'",
        ),
        ("replication_factor", 0, "-1 (broker default) or an integer >= 1"),
        ("application_server", "nohost", "'host:port'"),
        ("statestore_cache_max_bytes", -1, "an integer >= 0"),
        ("source_partitioning_check", "loud", "'off' | 'warn' | 'fail'"),
        ("source_partitioning_check", True, "'off' | 'warn' | 'fail'"),
    ],
)
def test_invalid_values_name_the_key_and_the_allowed_values(key, value, allowed):
    with pytest.raises(StreamsConfigError) as err:
        StreamsConfig({key: value})
    assert f"'{key}'" in str(err.value) and allowed in str(err.value)


def test_unknown_keys_are_rejected_listing_the_known_ones():
    with pytest.raises(StreamsConfigError, match="unknown config 'num_threads'.*num_stream_threads"):
        StreamsConfig(num_threads=2)


def test_an_unknown_key_close_to_a_known_one_is_answered_with_it():
    with pytest.raises(
        StreamsConfigError, match="unknown config 'commit_interval'; did you mean 'commit_interval_ms'"
    ):
        StreamsConfig(commit_interval=100)
    with pytest.raises(StreamsConfigError) as err:
        StreamsConfig(zzz_qqq=1)
    assert "did you mean" not in str(err.value)


def test_client_prefixed_overrides_pass_through():
    config = StreamsConfig({"consumer.fetch.wait.max.ms": 10, "producer.linger.ms": 5})
    assert config.client_configs("consumer.") == {"fetch.wait.max.ms": 10}
    assert config.client_configs("producer") == {"linger.ms": 5}


def test_default_serdes_may_be_named_and_missing_ones_are_reported_by_key():
    config = StreamsConfig(default_key_serde="long")
    assert config.default_serde("key").serialize("t", 1) == Serdes.Long().serialize("t", 1)
    with pytest.raises(StreamsConfigError, match="default_value_serde"):
        config.default_serde("value")


def test_new_keys_can_be_defined_by_later_modules(monkeypatch):
    from streams_runtime import config as config_module
    from streams_runtime.config import int_at_least

    # the definitions are process-wide: the key goes when the test ends (the documentation test,
    # which may run later in this process, lists every defined key)
    monkeypatch.setattr(config_module, "_DEFINITIONS", dict(config_module._DEFINITIONS))  # noqa: SLF001
    StreamsConfig.define("test_only_key", 7, int_at_least(0))
    assert StreamsConfig()["test_only_key"] == 7
    with pytest.raises(StreamsConfigError, match="'test_only_key' is already defined"):
        StreamsConfig.define("test_only_key", 8, int_at_least(0))


def test_the_timestamp_extractor_takes_a_name_an_object_or_a_callable_and_says_so_when_wrong():
    class EventTime:
        def extract(self, record, partition_time):
            return record.value["ts"]

    def from_value(record, partition_time):
        return record.value["ts"]

    assert (
        StreamsConfig(default_timestamp_extractor="WallClock")["default_timestamp_extractor"] == "wallclock"
    )
    extractor = EventTime()
    assert StreamsConfig(default_timestamp_extractor=extractor)["default_timestamp_extractor"] is extractor
    assert StreamsConfig(default_timestamp_extractor=from_value)["default_timestamp_extractor"] is from_value
    with pytest.raises(StreamsConfigError) as error:
        StreamsConfig(default_timestamp_extractor="event_time")
    message = str(error.value)
    assert "'default_timestamp_extractor'" in message and "'use_partition_time_on_invalid'" in message
    assert "an object with extract(record, partition_time)" in message and "callable" in message
