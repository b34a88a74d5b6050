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


def _conforms(value, tp) -> bool:
    """Whether ``value`` is of the type ``tp`` as far as it can be seen at run time (a Protocol by
    its methods, a Callable by being callable)."""
    import collections.abc
    import types
    import typing

    if tp is typing.Any:
        return True
    if tp is None or tp is type(None):
        return value is None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in args)
    if origin is typing.Literal:
        return value in args
    if origin is collections.abc.Callable:
        return callable(value)
    if origin is type:
        return isinstance(value, type)
    if getattr(tp, "_is_protocol", False):
        methods = [name for name in vars(tp) if not name.startswith("_")]
        return bool(methods) and all(callable(getattr(value, name, None)) for name in methods)
    return isinstance(value, tp) and not (tp is int and isinstance(value, bool))


def test_every_key_is_declared_with_a_doc_and_a_type_its_values_have():
    from streams_runtime.config import _DEFINITIONS

    config = StreamsConfig(
        default_key_serde="long",
        default_timestamp_extractor=lambda record, partition_time: 0,
        default_deserialization_exception_handler="dead_letter",
        dead_letter_topic="dlq",
    )
    assert len(_DEFINITIONS) >= 39
    for name, spec in _DEFINITIONS.items():
        assert spec.name == name
        assert len(spec.doc) > 20, f"config '{name}' has no doc"
        assert spec.type_name() not in ("", "Any"), f"config '{name}' has no type"
        # the type the attribute is declared with holds what the key holds: defaults and validated values
        for value in (StreamsConfig()[name], config[name]):
            assert _conforms(value, spec.value_type), (name, value, spec.type_name())
        # the typed attribute is the mapping's value
        assert getattr(config, name) is config[name]


def test_keys_are_typed_as_declared():
    from streams_runtime.config import ConfigKey

    assert StreamsConfig.num_stream_threads.type_name() == "int"
    assert StreamsConfig.application_id.type_name() == "str | None"
    assert StreamsConfig.processing_guarantee.type_name() == "Literal['at_least_once', 'exactly_once_v2']"
    assert isinstance(StreamsConfig.commit_interval_ms, ConfigKey)
    config = StreamsConfig({"num.stream.threads": "3", "processing.guarantee": "EXACTLY_ONCE_V2"})
    assert config.num_stream_threads == 3 and config.processing_guarantee == "exactly_once_v2"
    assert config.commit_interval_ms == 100


def test_a_typo_in_a_key_fails_naming_every_allowed_key():
    from streams_runtime.config import _DEFINITIONS

    with pytest.raises(StreamsConfigError) as err:
        StreamsConfig({"num.stream.thread": 2})
    message = str(err.value)
    assert message.startswith("unknown config 'num.stream.thread'; did you mean 'num_stream_threads'")
    for name in _DEFINITIONS:
        assert name in message
    assert "consumer." in message and "producer." in message
    with pytest.raises(AttributeError):
        StreamsConfig().num_stream_thread  # noqa: B018 - the read is the test


def test_a_key_declared_without_its_type_is_refused(monkeypatch):
    from streams_runtime import config as config_module
    from streams_runtime.config import ConfigKey, int_at_least

    monkeypatch.setattr(config_module, "_DEFINITIONS", dict(config_module._DEFINITIONS))  # noqa: SLF001
    # Python 3.11 wraps an error of __set_name__ in a RuntimeError (3.12 no longer does)
    with pytest.raises((TypeError, RuntimeError)) as err:

        class Broken(StreamsConfig):
            untyped_key = ConfigKey(1, int_at_least(0), "no annotation")

    cause = err.value.__cause__ or err.value
    assert isinstance(cause, TypeError) and "'untyped_key' is declared without its type" in str(cause)
    assert "untyped_key" not in config_module._DEFINITIONS  # noqa: SLF001


def test_a_defined_key_reads_as_an_item_and_shows_the_type_it_was_given(monkeypatch):
    from streams_runtime import config as config_module
    from streams_runtime.config import int_at_least

    monkeypatch.setattr(config_module, "_DEFINITIONS", dict(config_module._DEFINITIONS))  # noqa: SLF001
    StreamsConfig.define("test_typed_key", 3, int_at_least(0), "A key for this test.", value_type=int)
    config = StreamsConfig({"test.typed.key": "5"})
    assert config["test_typed_key"] == 5 and config.test_typed_key == 5
    assert config_module._DEFINITIONS["test_typed_key"].type_name() == "int"  # noqa: SLF001
    with pytest.raises(StreamsConfigError, match="'test_typed_key'.*allowed: an integer >= 0"):
        StreamsConfig(test_typed_key=-1)
