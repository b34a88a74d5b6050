"""StreamsConfig: the validated configuration of one streams application.

Keys are snake_case spellings of Kafka Streams' configs (``application_id`` for
``application.id``); the dotted Kafka spelling is accepted as an alias. Every key is declared
once in ``_DEFINITIONS`` with its default and a validator; a bad value raises
:class:`StreamsConfigError` naming the key and the allowed values. Client overrides use the
prefixes ``consumer.``, ``producer.``, ``admin.`` (and Kafka's ``main_consumer.``,
``restore_consumer.``, ``global_consumer.``) followed by the librdkafka property name; they are
passed through unvalidated except that the value must be a scalar.

Later issues add keys with :meth:`StreamsConfig.define`; nothing else has to change.
"""

from __future__ import annotations

import difflib
import importlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from streams_runtime.errors import StreamsConfigError

CLIENT_PREFIXES = (
    "client.",
    "consumer.",
    "producer.",
    "admin.",
    "main_consumer.",
    "restore_consumer.",
    "global_consumer.",
)

DESERIALIZATION_HANDLERS = ("log_and_fail", "log_and_continue", "dead_letter")
PROCESSING_HANDLERS = ("log_and_fail", "log_and_continue")
PRODUCTION_HANDLERS = ("fail", "continue")
TIMESTAMP_EXTRACTORS = (
    "fail_on_invalid",
    "log_and_skip_on_invalid",
    "use_partition_time_on_invalid",
    "wallclock",
)
SERDE_NAMES = ("string", "bytes", "integer", "long", "double", "json")
SOURCE_PARTITIONING_CHECKS = ("off", "warn", "fail")


@dataclass(frozen=True)
class ConfigKey:
    """One declared key: its default and the check applied to every value given for it."""

    name: str
    default: Any
    validate: Callable[[str, Any], Any]
    doc: str = ""


def _fail(key: str, value: object, allowed: str) -> StreamsConfigError:
    return StreamsConfigError(f"invalid value {value!r} for config '{key}'; allowed: {allowed}")


def one_of(*choices: str) -> Callable[[str, Any], Any]:
    """Validator: the value must be one of ``choices`` (case-insensitive strings)."""

    def check(key: str, value: object) -> Any:
        if isinstance(value, str) and value.lower() in choices:
            return value.lower()
        raise _fail(key, value, " | ".join(repr(c) for c in choices))

    return check


def int_at_least(minimum: int) -> Callable[[str, Any], Any]:
    """Validator: an int (or int-like string) >= ``minimum``."""

    def check(key: str, value: Any) -> Any:
        if isinstance(value, bool):
            raise _fail(key, value, f"an integer >= {minimum}")
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise _fail(key, value, f"an integer >= {minimum}") from None
        if number < minimum or (isinstance(value, float) and value != number):
            raise _fail(key, value, f"an integer >= {minimum}")
        return number

    return check


def string(*, allow_empty: bool = True, allow_none: bool = False) -> Callable[[str, Any], Any]:
    """Validator: a string (optionally non-empty, optionally None)."""

    def check(key: str, value: object) -> Any:
        if value is None and allow_none:
            return None
        if not isinstance(value, str) or (not allow_empty and not value):
            what = "a non-empty string" if not allow_empty else "a string"
            raise _fail(key, value, what + (" or None" if allow_none else ""))
        return value

    return check


def _host_port(key: str, value: object) -> Any:
    if value in ("", None):
        return ""
    if isinstance(value, str) and ":" in value:
        host, _, port = value.rpartition(":")
        if host and port.isdigit() and 0 < int(port) < 65536:
            return value
    raise _fail(key, value, "'' or 'host:port' with a port in 1..65535")


#: the shortest inter-instance secret accepted (bytes, UTF-8)
MIN_FORWARDING_SECRET = 32
#: values shipped in this repository's files (deployment defaults, documentation examples), past
#: and present: whoever reads the repository knows them, so no instance accepts one as a credential
SHIPPED_SECRETS = frozenset(
    {
        "change-me-in-production",  # docker-compose.yml's former token and Airflow JWT default
        "change-me-in-production-too",  # docker-compose.yml's former forwarding-secret default
        "shared-by-all-instances",  # README's former example
    }
)


def _not_shipped(key: str, value: str) -> str:
    if value.strip() in SHIPPED_SECRETS:
        raise StreamsConfigError(
            f"invalid value <hidden> for config '{key}': it is a value shipped in the streams-runtime "
            "repository (a default or an example), known to anyone; allowed: a secret of your own"
        )
    return value


def _token(key: str, value: Any) -> Any:
    value = string(allow_empty=False, allow_none=True)(key, value)
    return None if value is None else _not_shipped(key, value)


def _forwarding_secret(key: str, value: object) -> Any:
    if value is None:
        return None
    if not isinstance(value, str) or len(value.encode()) < MIN_FORWARDING_SECRET:
        raise _fail(key, "<hidden>", f"None or a string of at least {MIN_FORWARDING_SECRET} bytes")
    return _not_shipped(key, value)


def _serde(key: str, value: object) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() in SERDE_NAMES:
            return named_serde(value.lower())
        raise _fail(key, value, "None, a Serde, or one of " + ", ".join(SERDE_NAMES))
    if isinstance(value, type):  # a Serde class: instantiate it
        value = value()
    if callable(getattr(value, "serialize", None)) and callable(getattr(value, "deserialize", None)):
        return value
    raise _fail(key, value, "None, a Serde, or one of " + ", ".join(SERDE_NAMES))


def named_serde(name: str) -> Any:
    """The standard serde of one of :data:`SERDE_NAMES` (the config's and the CLI's spelling)."""
    from streams_runtime.serdes import Serdes

    factory = {
        "string": Serdes.String,
        "bytes": Serdes.Bytes,
        "integer": Serdes.Integer,
        "long": Serdes.Long,
        "double": Serdes.Double,
        "json": Serdes.Json,
    }[name]
    return factory()


def _extractor(key: str, value: object) -> Any:
    if callable(value) or callable(getattr(value, "extract", None)):
        return value
    if isinstance(value, str) and value.lower() in TIMESTAMP_EXTRACTORS:
        return value.lower()
    names = " | ".join(repr(c) for c in TIMESTAMP_EXTRACTORS)
    raise _fail(
        key,
        value,
        f"{names}, an object with extract(record, partition_time) -> timestamp in ms, or such a callable",
    )


ROCKSDB_CONFIG_SETTER_ALLOWED = (
    "None, an object with set_config(store_name, options, configs) (and optionally "
    "close(store_name, options)), a class of such objects (one is made per store), or "
    "'module:attr' naming either"
)


def rocksdb_config_setter(key: str, value: object) -> Any:
    """Validator (and the one resolver) of ``rocksdb_config_setter``: ``None``, the object or class,
    with a ``'module:attr'`` string imported first."""
    if value is None:
        return None
    if isinstance(value, str):
        module, sep, attr = value.partition(":")
        if not (sep and module and attr):
            raise _fail(key, value, ROCKSDB_CONFIG_SETTER_ALLOWED)
        try:
            value = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise _fail(key, value, f"{ROCKSDB_CONFIG_SETTER_ALLOWED} (importing it failed: {exc})") from exc
    if callable(getattr(value, "set_config", None)):
        return value
    raise _fail(key, value, ROCKSDB_CONFIG_SETTER_ALLOWED)


def _replication(key: str, value: object) -> Any:
    number = int_at_least(-1)(key, value)
    if number == 0:
        raise _fail(key, value, "-1 (broker default) or an integer >= 1")
    return number


def _max_task_idle(key: str, value: object) -> Any:
    return int_at_least(-1)(key, value)


_DEFINITIONS: dict[str, ConfigKey] = {}


def _define(name: str, default: object, validate: Callable[[str, Any], Any], doc: str = "") -> None:
    _DEFINITIONS[name] = ConfigKey(name, default, validate, doc)


_define(
    "application_id",
    None,
    string(allow_empty=False, allow_none=True),
    "Identifies the application; prefixes internal topics, names the consumer group.",
)
_define("bootstrap_servers", "localhost:9092", string(allow_empty=False), "host:port list.")
_define(
    "num_stream_threads",
    1,
    int_at_least(1),
    "Stream threads of this instance. They share CPython's interpreter lock: they overlap network "
    "I/O and restoration and keep task groups apart, but add no CPU throughput; for that run more "
    "instances (processes), e.g. `streams-runtime worker --instances N`.",
)
_define("processing_guarantee", "at_least_once", one_of("at_least_once", "exactly_once_v2"))
_define("commit_interval_ms", None, int_at_least(0), "Default 30000, or 100 under exactly_once_v2.")
_define("state_dir", os.path.join(tempfile.gettempdir(), "kafka-streams"), string(allow_empty=False))
_define("replication_factor", -1, _replication)
_define("num_standby_replicas", 0, int_at_least(0))
_define("max_task_idle_ms", 0, _max_task_idle)
_define(
    "acceptable_recovery_lag",
    10_000,
    int_at_least(0),
    "Changelog records a client may lag and still count as caught up for a task (warm-ups).",
)
_define("max_warmup_replicas", 2, int_at_least(1), "Warm-up replicas assigned at once, in total.")
_define(
    "probing_rebalance_interval_ms",
    600_000,
    int_at_least(1_000),
    "How often a rebalance probes whether warm-ups caught up (Kafka's minimum is 60000; "
    "shorter values are allowed here for tests).",
)
_define(
    "metadata_max_age_ms",
    30_000,
    int_at_least(100),
    "How often a client with sources by topic pattern lists the cluster's topics; a new matching "
    "topic is read from the next rebalance, which a change of the matching set triggers "
    "(Kafka's consumer refreshes its metadata every 300000 ms).",
)
_define("application_server", "", _host_port)
_define(
    "application_server_bind",
    "127.0.0.1",
    string(allow_empty=False),
    "Address the worker's HTTP server (interactive queries, metrics, health) binds to. Left at "
    "loopback while application_server advertises another address, the instance is reachable by "
    "no other host (lookups forwarded to it fail): logged as a warning at start.",
)
_define(
    "application_server_token",
    None,
    _token,
    "When set, HTTP requests must carry 'Authorization: Bearer <token>' (checked before the body "
    "is read). A value shipped in the repository (SHIPPED_SECRETS) is refused.",
)
_define(
    "application_server_forwarding_secret",
    None,
    _forwarding_secret,
    "Shared secret of the instances' HTTP APIs: a lookup of a key another instance owns is "
    "forwarded to it, signed with this secret (never with the client's token). Unset: no "
    "forwarding; the API answers 409 naming the owner's endpoint. At least 32 bytes, and not a "
    "value shipped in the repository (SHIPPED_SECRETS).",
)
_define(
    "application_server_forwarding_window_ms",
    30_000,
    int_at_least(1_000),
    "How far a forwarded request's signing time may lie from the receiver's clock; older or "
    "later requests are refused (so are requests signed before the receiver started).",
)
_define(
    "application_server_header_timeout_ms",
    10_000,
    int_at_least(100),
    "How long the HTTP server waits for a request's complete header, from the connection's start "
    "(or the request's first byte on a kept-alive connection); then 408 and the connection closes.",
)
_define(
    "application_server_max_header_bytes",
    16_384,
    int_at_least(1_024),
    "Largest request head (request line and headers) the HTTP server reads; larger: 431.",
)
_define(
    "application_server_max_headers",
    100,
    int_at_least(8),
    "Most header fields in one request; more: 431.",
)
_define(
    "application_server_max_body_bytes",
    1_048_576,
    int_at_least(0),
    "Largest request body (by its Content-Length, which a request with a body must send); "
    "larger: 413 before any of it is read.",
)
_define(
    "poll_ms",
    100,
    int_at_least(0),
    "How long a stream thread waits for input when its consumer holds no record; it waits for the "
    "first record only, so records never wait for this timer while input arrives.",
)
_define(
    "task_timeout_ms",
    300_000,
    int_at_least(0),
    "How long a commit keeps waiting for the broker (producer acknowledgements, offset commits) "
    "through an outage before the error reaches the handlers; at least the producer's delivery "
    "timeout is waited. Kafka Streams' task.timeout.ms.",
)
_define("statestore_cache_max_bytes", 10 * 1024 * 1024, int_at_least(0))
_define("default_key_serde", None, _serde)
_define("default_value_serde", None, _serde)
_define("default_deserialization_exception_handler", "log_and_fail", one_of(*DESERIALIZATION_HANDLERS))
_define("dead_letter_topic", None, string(allow_empty=False, allow_none=True))
_define("processing_exception_handler", "log_and_fail", one_of(*PROCESSING_HANDLERS))
_define("default_production_exception_handler", "fail", one_of(*PRODUCTION_HANDLERS))
_define(
    "default_timestamp_extractor",
    "fail_on_invalid",
    _extractor,
    "Where a record's event time comes from when its source names no extractor: the record's "
    "timestamp ('fail_on_invalid' stops on a negative one, 'log_and_skip_on_invalid' drops it, "
    "'use_partition_time_on_invalid' takes the partition's highest so far), 'wallclock' (the "
    "clock), or your own: an object with extract(record, partition_time) -> ms, or such a "
    "callable.",
)
_define(
    "source_partitioning_check",
    "warn",
    one_of(*SOURCE_PARTITIONING_CHECKS),
    "Whether the stream threads check that a keyed input record is on the partition Kafka's "
    "default partitioner (murmur2 of the key bytes) gives it, as joins and interactive queries "
    "assume: 'warn' counts a misplaced record (mispartitioned-records) and logs the first of each "
    "partition, 'fail' stops the thread naming it, 'off' checks nothing. Checks the first 1000 "
    "records of each input partition, then one in 1000. Not in Kafka Streams.",
)
_define("default_dsl_store", "rocksdb", one_of("rocksdb", "in_memory"))
_define(
    "rocksdb_config_setter",
    None,
    rocksdb_config_setter,
    "Tunes every RocksDB database the instance opens (Kafka Streams' rocksdb.config.setter): "
    "set_config(store_name, options, configs) gets the store's name, its rocksdict Options "
    "(already set to the runtime's defaults: the shared block cache, bloom filters, the memtable "
    "size) and this config, before the database opens; close(store_name, options), if defined, "
    "runs when the store closes. A class is instantiated once per store.",
)
_define(
    "rocksdb_block_cache_bytes",
    64 * 1024 * 1024,
    int_at_least(1),
    "The block cache every RocksDB store of the process shares; memtables are charged to it "
    "too. Each open database adds 8 MiB to it and to the memtable budget. Process-wide: set "
    "as each store opens, so with several applications in one process give them the same.",
)
_define(
    "rocksdb_write_buffer_bytes",
    32 * 1024 * 1024,
    int_at_least(1),
    "The part of rocksdb_block_cache_bytes that memtables may use (at most the cache).",
)
_define("topology_optimization", "none", one_of("none"))
_define("metrics_recording_level", "info", one_of("info", "debug", "trace"))


def _canonical(key: str) -> str:
    if key in _DEFINITIONS or key.startswith(CLIENT_PREFIXES):
        return key
    alias = key.replace(".", "_").replace("-", "_")
    if alias in _DEFINITIONS:
        return alias
    # Kafka spellings that do not map mechanically.
    return {
        "statestore_cache_max_bytes": "statestore_cache_max_bytes",
        "cache_max_bytes_buffering": "statestore_cache_max_bytes",
    }.get(alias, key)


class StreamsConfig(Mapping[str, Any]):
    """An immutable, validated mapping of config key -> value (defaults filled in).

    ``StreamsConfig({"application_id": "app"}, num_stream_threads=2)``; read with
    ``config["key"]``, ``config.get("key")`` or ``config.application_id``.
    """

    def __init__(self, props: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        given: dict[str, Any] = {}
        for source in (props or {}, overrides):
            for key, value in source.items():
                given[_canonical(str(key))] = value
        values: dict[str, Any] = {name: spec.default for name, spec in _DEFINITIONS.items()}
        for key, value in given.items():
            if key.startswith(CLIENT_PREFIXES):
                if len(key.split(".", 1)[1]) == 0 or not isinstance(value, (str, int, float, bool)):
                    raise _fail(key, value, "a str, int, float or bool after a non-empty property name")
                values[key] = value
                continue
            spec = _DEFINITIONS.get(key)
            if spec is None:
                close = difflib.get_close_matches(key, _DEFINITIONS, n=3, cutoff=0.6)
                hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
                raise StreamsConfigError(
                    f"unknown config '{key}'; {hint}allowed: {', '.join(sorted(_DEFINITIONS))} "
                    f"or a key prefixed with one of {', '.join(CLIENT_PREFIXES)}"
                )
            values[key] = spec.validate(key, value)
        if values["commit_interval_ms"] is None:
            eos = values["processing_guarantee"] == "exactly_once_v2"
            values["commit_interval_ms"] = 100 if eos else 30000
        if (
            values["default_deserialization_exception_handler"] == "dead_letter"
            and not values["dead_letter_topic"]
        ):
            raise StreamsConfigError(
                "config 'dead_letter_topic' must be set (a non-empty topic name) when "
                "'default_deserialization_exception_handler' is 'dead_letter'"
            )
        if values["rocksdb_write_buffer_bytes"] > values["rocksdb_block_cache_bytes"]:
            raise StreamsConfigError(
                f"config 'rocksdb_write_buffer_bytes' ({values['rocksdb_write_buffer_bytes']}) must not "
                f"exceed 'rocksdb_block_cache_bytes' ({values['rocksdb_block_cache_bytes']}): memtables "
                "are charged to the block cache"
            )
        self._values = values
        self._originals = given

    @classmethod
    def define(cls, name: str, default: Any, validate: Callable[[str, Any], Any], doc: str = "") -> None:
        """Declare a new key (used by later modules); redefining an existing key is an error."""
        if name in _DEFINITIONS:
            raise StreamsConfigError(f"config '{name}' is already defined")
        _define(name, default, validate, doc)

    @staticmethod
    def known_keys() -> list[str]:
        return sorted(_DEFINITIONS)

    def __getitem__(self, key: str) -> Any:
        return self._values[_canonical(key)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"StreamsConfig({self._originals!r})"

    def originals(self) -> dict[str, Any]:
        """The keys the user gave (canonical spelling), without defaults."""
        return dict(self._originals)

    def with_overrides(self, **overrides: Any) -> StreamsConfig:
        merged = dict(self._originals)
        merged.update(overrides)
        return StreamsConfig(merged)

    def client_configs(self, prefix: str) -> dict[str, Any]:
        """The overrides under ``prefix`` (e.g. ``"consumer."``) with the prefix stripped, on top
        of those under ``client.``, which every Kafka client of the application gets (the
        cluster's security settings, for example: ``client.security.protocol``,
        ``client.sasl.mechanism``, ``client.sasl.username``, ``client.ssl.ca.location``, passed
        unchanged to librdkafka and translated for the group membership's client)."""
        if not prefix.endswith("."):
            prefix += "."
        common = {k[len("client.") :]: v for k, v in self._values.items() if k.startswith("client.")}
        return {**common, **{k[len(prefix) :]: v for k, v in self._values.items() if k.startswith(prefix)}}

    def default_serde(self, side: str) -> Any:
        """The default key or value Serde; raises naming the key when none is configured."""
        key = "default_key_serde" if side == "key" else "default_value_serde"
        serde = self._values[key]
        if serde is None:
            raise StreamsConfigError(
                f"no {side} serde given for an operation and config '{key}' is not set; "
                f"allowed: a Serde or one of {', '.join(SERDE_NAMES)}"
            )
        return serde


def as_config(config: StreamsConfig | Mapping[str, Any] | None, **defaults: object) -> StreamsConfig:
    """Coerce ``config`` to a StreamsConfig, filling ``defaults`` for keys the user did not give."""
    if isinstance(config, StreamsConfig):
        missing = {k: v for k, v in defaults.items() if config.get(k) is None}
        return config.with_overrides(**missing) if missing else config
    merged = dict(defaults)
    merged.update({_canonical(str(k)): v for k, v in (config or {}).items()})
    return StreamsConfig(merged)
