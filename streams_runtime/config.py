"""StreamsConfig: the validated configuration of one streams application.

Keys are snake_case spellings of Kafka Streams' configs (``application_id`` for
``application.id``); the dotted Kafka spelling is accepted as an alias. Every key is declared
once, as a typed attribute of :class:`StreamsConfig`::

    num_stream_threads: ConfigKey[int] = ConfigKey(1, int_at_least(1), "Stream threads of ...")

with its Python type (the annotation: ``config.num_stream_threads`` is an ``int`` to mypy), its
default, a validator and its documentation; the registry ``_DEFINITIONS`` and the documentation's
configuration reference are built from these attributes. A bad value raises
:class:`StreamsConfigError` naming the key and the allowed values. Client overrides use the
prefixes ``consumer.``, ``producer.``, ``admin.`` (and Kafka's ``main_consumer.``,
``restore_consumer.``, ``global_consumer.``) followed by the librdkafka property name; they are
passed through unvalidated except that the value must be a scalar.

Later modules add keys with :meth:`StreamsConfig.define` (read as ``config["key"]``, untyped);
nothing else has to change.
"""

from __future__ import annotations

import collections.abc
import difflib
import functools
import importlib
import os
import tempfile
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, cast, get_args, overload

from streams_runtime.errors import StreamsConfigError

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde

CLIENT_PREFIXES = (
    "client.",
    "consumer.",
    "producer.",
    "admin.",
    "main_consumer.",
    "restore_consumer.",
    "global_consumer.",
)

# the allowed values of the keys that take one of a few names: each a Literal type (the key's
# type for mypy) and the tuple of its values (the validator's and the error message's)
ProcessingGuarantee = Literal["at_least_once", "exactly_once_v2"]
DeserializationHandler = Literal["log_and_fail", "log_and_continue", "dead_letter"]
ProcessingHandler = Literal["log_and_fail", "log_and_continue"]
ProductionHandler = Literal["fail", "continue"]
TimestampExtractorName = Literal[
    "fail_on_invalid",
    "log_and_skip_on_invalid",
    "use_partition_time_on_invalid",
    "wallclock",
]
SerdeName = Literal["string", "bytes", "integer", "long", "double", "json"]
SourcePartitioningCheck = Literal["off", "warn", "fail"]
DslStore = Literal["rocksdb", "in_memory"]
TopologyOptimization = Literal["none"]
MetricsRecordingLevel = Literal["info", "debug", "trace"]

PROCESSING_GUARANTEES: tuple[ProcessingGuarantee, ...] = get_args(ProcessingGuarantee)
DESERIALIZATION_HANDLERS: tuple[DeserializationHandler, ...] = get_args(DeserializationHandler)
PROCESSING_HANDLERS: tuple[ProcessingHandler, ...] = get_args(ProcessingHandler)
PRODUCTION_HANDLERS: tuple[ProductionHandler, ...] = get_args(ProductionHandler)
TIMESTAMP_EXTRACTORS: tuple[TimestampExtractorName, ...] = get_args(TimestampExtractorName)
SERDE_NAMES: tuple[SerdeName, ...] = get_args(SerdeName)
SOURCE_PARTITIONING_CHECKS: tuple[SourcePartitioningCheck, ...] = get_args(SourcePartitioningCheck)
DSL_STORES: tuple[DslStore, ...] = get_args(DslStore)
TOPOLOGY_OPTIMIZATIONS: tuple[TopologyOptimization, ...] = get_args(TopologyOptimization)
METRICS_RECORDING_LEVELS: tuple[MetricsRecordingLevel, ...] = get_args(MetricsRecordingLevel)


class SerdeLike(Protocol):
    """What ``default_key_serde`` and ``default_value_serde`` hold: a :class:`~streams_runtime.Serde`
    or any object with its two methods."""

    def serialize(self, topic: str, data: Any) -> bytes | None: ...

    def deserialize(self, topic: str, data: bytes | None) -> Any: ...


class TimestampExtractorLike(Protocol):
    """An object ``default_timestamp_extractor`` may hold: ``extract(record, partition_time)``
    returns the record's event time in ms."""

    def extract(self, record: Any, partition_time: int) -> int: ...


class RocksDBConfigSetterLike(Protocol):
    """What ``rocksdb_config_setter`` holds (or a class of): ``set_config(store_name, options,
    configs)`` tunes a store's RocksDB options before the database opens."""

    def set_config(self, store_name: str, options: Any, configs: Any) -> None: ...


T = TypeVar("T")
S = TypeVar("S", bound=str)


class ConfigKey(Generic[T]):
    """One declared key: its default, the check applied to every value given for it (which returns
    the value kept, of type ``T``) and its documentation.

    Declared as an attribute of :class:`StreamsConfig` (``name: ConfigKey[T] = ConfigKey(...)``),
    it is also how the key is read: ``config.name`` is the key's value, typed ``T``.

    :param default: the value when the key is not given.
    :param validate: ``validate(key, value)`` returns the value to keep or raises
        :class:`StreamsConfigError` naming the key and, after ``allowed:``, what is allowed.
    :param doc: what the key does (the configuration reference shows it).
    :param default_from: when given, the default is computed from the other keys' values (given
        or defaulted): ``default_from(values)``; ``default`` is then the usual one, for the docs.
    """

    __slots__ = ("default", "default_from", "doc", "name", "validate", "_owner", "_type")

    def __init__(
        self,
        default: T,
        validate: Callable[[str, Any], T],
        doc: str = "",
        *,
        default_from: Callable[[Mapping[str, Any]], T] | None = None,
    ) -> None:
        self.name = ""
        self.default = default
        self.validate = validate
        self.doc = doc
        self.default_from = default_from
        self._owner: type | None = None
        self._type: object = None

    def __set_name__(self, owner: type, name: str) -> None:
        if name not in owner.__dict__.get("__annotations__", {}):
            raise TypeError(f"config key {name!r} is declared without its type: {name}: ConfigKey[T] = ...")
        self.name, self._owner = name, owner
        _DEFINITIONS[name] = self

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> ConfigKey[T]: ...

    @overload
    def __get__(self, instance: StreamsConfig, owner: type[Any]) -> T: ...

    def __get__(self, instance: StreamsConfig | None, owner: type[Any]) -> ConfigKey[T] | T:
        if instance is None:
            return self
        value: T = instance._values[self.name]  # noqa: SLF001 - the key reads its own config
        return value

    @property
    def value_type(self) -> object:
        """The key's type: the ``T`` of its ``ConfigKey[T]`` annotation (``Any`` for a key given to
        :meth:`StreamsConfig.define` without one)."""
        if self._owner is not None:
            return _key_types(self._owner)[self.name]
        return self._type

    def type_name(self) -> str:
        """:attr:`value_type` as written in Python (``int``, ``str | None``, ``Literal['a', 'b']``)."""
        return type_name(self.value_type)

    def __repr__(self) -> str:
        return f"ConfigKey({self.name!r}, default={self.default!r})"


@functools.cache
def _key_types(owner: type) -> dict[str, object]:
    """The ``T`` of each ``ConfigKey[T]`` annotation of ``owner``, evaluated once."""
    hints = typing.get_type_hints(owner)
    return {name: get_args(hint)[0] for name, hint in hints.items() if typing.get_origin(hint) is ConfigKey}


def type_name(tp: object) -> str:
    """A type as written in Python source: ``int``, ``str | None``, ``Literal['a', 'b']``,
    ``Callable[[Any, int], int]``."""
    if tp is None or tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    origin, args = typing.get_origin(tp), get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is Literal:
        return f"Literal[{', '.join(repr(arg) for arg in args)}]"
    if origin is collections.abc.Callable:
        params, result = args[:-1], args[-1]
        if len(params) == 1 and isinstance(params[0], list):
            params = tuple(params[0])
        return f"Callable[[{', '.join(type_name(p) for p in params)}], {type_name(result)}]"
    if origin is not None:
        return f"{type_name(origin)}[{', '.join(type_name(arg) for arg in args)}]"
    if isinstance(tp, type):
        return tp.__name__
    return repr(tp).replace("typing.", "")


def _fail(key: str, value: object, allowed: str) -> StreamsConfigError:
    return StreamsConfigError(f"invalid value {value!r} for config '{key}'; allowed: {allowed}")


def one_of(*choices: S) -> Callable[[str, Any], S]:
    """Validator: the value must be one of ``choices`` (case-insensitive strings)."""

    def check(key: str, value: object) -> S:
        if isinstance(value, str):
            for choice in choices:
                if value.lower() == choice:
                    return choice
        raise _fail(key, value, " | ".join(repr(c) for c in choices))

    return check


def int_at_least(minimum: int) -> Callable[[str, Any], int]:
    """Validator: an int (or int-like string) >= ``minimum``."""

    def check(key: str, value: Any) -> int:
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


@overload
def string(*, allow_empty: bool = True, allow_none: Literal[False] = False) -> Callable[[str, Any], str]: ...


@overload
def string(*, allow_empty: bool = True, allow_none: Literal[True]) -> Callable[[str, Any], str | None]: ...


def string(*, allow_empty: bool = True, allow_none: bool = False) -> Callable[[str, Any], str | None]:
    """Validator: a string (optionally non-empty, optionally None)."""

    def check(key: str, value: object) -> str | None:
        if value is None and allow_none:
            return None
        if not isinstance(value, str) or (not allow_empty and not value):
            what = "a non-empty string" if not allow_empty else "a string"
            raise _fail(key, value, what + (" or None" if allow_none else ""))
        return value

    return check


def _host_port(key: str, value: object) -> str:
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


def _token(key: str, value: Any) -> str | None:
    value = string(allow_empty=False, allow_none=True)(key, value)
    return None if value is None else _not_shipped(key, value)


def _forwarding_secret(key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value.encode()) < MIN_FORWARDING_SECRET:
        raise _fail(key, "<hidden>", f"None or a string of at least {MIN_FORWARDING_SECRET} bytes")
    return _not_shipped(key, value)


def _serde(key: str, value: object) -> SerdeLike | None:
    if value is None:
        return None
    if isinstance(value, str):
        if value.lower() in SERDE_NAMES:
            serde: SerdeLike = named_serde(value.lower())
            return serde
        raise _fail(key, value, "None, a Serde, or one of " + ", ".join(SERDE_NAMES))
    if isinstance(value, type):  # a Serde class: instantiate it
        value = value()
    if callable(getattr(value, "serialize", None)) and callable(getattr(value, "deserialize", None)):
        return cast(SerdeLike, value)  # checked just above: it has both methods
    raise _fail(key, value, "None, a Serde, or one of " + ", ".join(SERDE_NAMES))


def named_serde(name: str) -> Serde:
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


#: what default_timestamp_extractor holds
TimestampExtractorSpec = TimestampExtractorName | TimestampExtractorLike | Callable[[Any, int], int]


def _extractor(key: str, value: object) -> TimestampExtractorSpec:
    if callable(value) or callable(getattr(value, "extract", None)):
        return cast(TimestampExtractorSpec, value)  # an object with extract(), or the function itself
    if isinstance(value, str):
        for name in TIMESTAMP_EXTRACTORS:
            if value.lower() == name:
                return name
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


def rocksdb_config_setter(
    key: str, value: object
) -> RocksDBConfigSetterLike | type[RocksDBConfigSetterLike] | None:
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
        return cast(RocksDBConfigSetterLike | type[RocksDBConfigSetterLike], value)  # has set_config
    raise _fail(key, value, ROCKSDB_CONFIG_SETTER_ALLOWED)


def _replication(key: str, value: object) -> int:
    number = int_at_least(-1)(key, value)
    if number == 0:
        raise _fail(key, value, "-1 (broker default) or an integer >= 1")
    return number


def _max_task_idle(key: str, value: object) -> int:
    return int_at_least(-1)(key, value)


#: every declared key by name, in declaration order: the attributes of StreamsConfig, then the
#: keys later modules add with StreamsConfig.define
_DEFINITIONS: dict[str, ConfigKey[Any]] = {}


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


def _commit_interval_default(values: Mapping[str, Any]) -> int:
    return 100 if values["processing_guarantee"] == "exactly_once_v2" else 30_000


class StreamsConfig(Mapping[str, Any]):
    """An immutable, validated mapping of config key -> value (defaults filled in).

    ``StreamsConfig({"application_id": "app"}, num_stream_threads=2)``; read with
    ``config.application_id`` (typed: each key is a :class:`ConfigKey` attribute of this class),
    ``config["key"]`` or ``config.get("key")``. The keys, their types, defaults and allowed values
    are listed in the configuration reference (``docs/reference/configuration.md``).
    """

    application_id: ConfigKey[str | None] = ConfigKey(
        None,
        string(allow_empty=False, allow_none=True),
        "Identifies the application; prefixes internal topics, names the consumer group.",
    )
    bootstrap_servers: ConfigKey[str] = ConfigKey(
        "localhost:9092",
        string(allow_empty=False),
        "The Kafka brokers to connect to first: a comma-separated host:port list.",
    )
    num_stream_threads: ConfigKey[int] = ConfigKey(
        1,
        int_at_least(1),
        "Stream threads of this instance. They share CPython's interpreter lock: they overlap network "
        "I/O and restoration and keep task groups apart, but add no CPU throughput; for that run more "
        "instances (processes), e.g. `streams-runtime worker --instances N`.",
    )
    processing_guarantee: ConfigKey[ProcessingGuarantee] = ConfigKey(
        "at_least_once",
        one_of(*PROCESSING_GUARANTEES),
        "'at_least_once': after a failure, the records processed since the last commit may be "
        "processed again. 'exactly_once_v2': output records, changelog writes and input offsets are "
        "committed in Kafka transactions and input is read read_committed.",
    )
    commit_interval_ms: ConfigKey[int] = ConfigKey(
        30_000,
        int_at_least(0),
        "How often a stream thread commits its tasks (offsets, flushed stores and caches). Default "
        "30000, or 100 under exactly_once_v2.",
        default_from=_commit_interval_default,
    )
    state_dir: ConfigKey[str] = ConfigKey(
        os.path.join(tempfile.gettempdir(), "kafka-streams"),
        string(allow_empty=False),
        "Directory of the instance's local state: each application's stores and checkpoints live "
        "under state_dir/application_id.",
    )
    replication_factor: ConfigKey[int] = ConfigKey(
        -1,
        _replication,
        "Replication factor of the internal topics (changelogs, repartition topics) the "
        "application creates; -1 takes the broker's default.",
    )
    num_standby_replicas: ConfigKey[int] = ConfigKey(
        0,
        int_at_least(0),
        "Standby replicas of each stateful task: copies of its stores kept up to date from the "
        "changelogs on other instances, which take over a failed instance's tasks without a restore.",
    )
    max_task_idle_ms: ConfigKey[int] = ConfigKey(
        0,
        _max_task_idle,
        "How long a task whose other inputs have records waits for an empty input partition before "
        "it processes what it has (enforced processing); -1 never waits.",
    )
    acceptable_recovery_lag: ConfigKey[int] = ConfigKey(
        10_000,
        int_at_least(0),
        "Changelog records a client may lag and still count as caught up for a task (warm-ups).",
    )
    max_warmup_replicas: ConfigKey[int] = ConfigKey(
        2, int_at_least(1), "Warm-up replicas assigned at once, in total."
    )
    probing_rebalance_interval_ms: ConfigKey[int] = ConfigKey(
        600_000,
        int_at_least(1_000),
        "How often a rebalance probes whether warm-ups caught up (Kafka's minimum is 60000; "
        "shorter values are allowed here for tests).",
    )
    metadata_max_age_ms: ConfigKey[int] = ConfigKey(
        30_000,
        int_at_least(100),
        "How often a client with sources by topic pattern lists the cluster's topics; a new matching "
        "topic is read from the next rebalance, which a change of the matching set triggers "
        "(Kafka's consumer refreshes its metadata every 300000 ms).",
    )
    application_server: ConfigKey[str] = ConfigKey(
        "",
        _host_port,
        "The host:port this instance advertises to the others and to clients for interactive "
        "queries (its HTTP server listens on that port); '' advertises none.",
    )
    application_server_bind: ConfigKey[str] = ConfigKey(
        "127.0.0.1",
        string(allow_empty=False),
        "Address the worker's HTTP server (interactive queries, metrics, health) binds to. Left at "
        "loopback while application_server advertises another address, the instance is reachable by "
        "no other host (lookups forwarded to it fail): logged as a warning at start.",
    )
    application_server_token: ConfigKey[str | None] = ConfigKey(
        None,
        _token,
        "When set, HTTP requests must carry 'Authorization: Bearer <token>' (checked before the body "
        "is read). A value shipped in the repository (SHIPPED_SECRETS) is refused.",
    )
    application_server_forwarding_secret: ConfigKey[str | None] = ConfigKey(
        None,
        _forwarding_secret,
        "Shared secret of the instances' HTTP APIs: a lookup of a key another instance owns is "
        "forwarded to it, signed with this secret (never with the client's token). Unset: no "
        "forwarding; the API answers 409 naming the owner's endpoint. At least 32 bytes, and not a "
        "value shipped in the repository (SHIPPED_SECRETS).",
    )
    application_server_forwarding_window_ms: ConfigKey[int] = ConfigKey(
        30_000,
        int_at_least(1_000),
        "How far a forwarded request's signing time may lie from the receiver's clock; older or "
        "later requests are refused (so are requests signed before the receiver started).",
    )
    application_server_header_timeout_ms: ConfigKey[int] = ConfigKey(
        10_000,
        int_at_least(100),
        "How long the HTTP server waits for a request's complete header, from the connection's start "
        "(or the request's first byte on a kept-alive connection); then 408 and the connection closes.",
    )
    application_server_max_header_bytes: ConfigKey[int] = ConfigKey(
        16_384,
        int_at_least(1_024),
        "Largest request head (request line and headers) the HTTP server reads; larger: 431.",
    )
    application_server_max_headers: ConfigKey[int] = ConfigKey(
        100, int_at_least(8), "Most header fields in one request; more: 431."
    )
    application_server_max_body_bytes: ConfigKey[int] = ConfigKey(
        1_048_576,
        int_at_least(0),
        "Largest request body (by its Content-Length, which a request with a body must send); "
        "larger: 413 before any of it is read.",
    )
    poll_ms: ConfigKey[int] = ConfigKey(
        100,
        int_at_least(0),
        "How long a stream thread waits for input when its consumer holds no record; it waits for the "
        "first record only, so records never wait for this timer while input arrives.",
    )
    task_timeout_ms: ConfigKey[int] = ConfigKey(
        300_000,
        int_at_least(0),
        "How long a commit keeps waiting for the broker (producer acknowledgements, offset commits) "
        "through an outage before the error reaches the handlers; at least the producer's delivery "
        "timeout is waited. Kafka Streams' task.timeout.ms.",
    )
    statestore_cache_max_bytes: ConfigKey[int] = ConfigKey(
        10 * 1024 * 1024,
        int_at_least(0),
        "Record cache of the instance's state stores, split evenly between its stream threads: "
        "updates of a key are merged in it until the next commit or eviction; 0 sends every update "
        "downstream. Kafka's cache.max.bytes.buffering is accepted as an alias.",
    )
    default_key_serde: ConfigKey[SerdeLike | None] = ConfigKey(
        None,
        _serde,
        "Serde of record keys where an operation or store names none: a Serde (or its class) or "
        "the name of a standard one.",
    )
    default_value_serde: ConfigKey[SerdeLike | None] = ConfigKey(
        None,
        _serde,
        "Serde of record values where an operation or store names none: a Serde (or its class) or "
        "the name of a standard one.",
    )
    default_deserialization_exception_handler: ConfigKey[DeserializationHandler] = ConfigKey(
        "log_and_fail",
        one_of(*DESERIALIZATION_HANDLERS),
        "What happens to an input record that cannot be deserialized: 'log_and_fail' stops the "
        "thread naming its topic, partition and offset; 'log_and_continue' logs, counts "
        "(dropped-records) and skips it; 'dead_letter' also writes it to dead_letter_topic with "
        "headers naming the error.",
    )
    dead_letter_topic: ConfigKey[str | None] = ConfigKey(
        None,
        string(allow_empty=False, allow_none=True),
        "The topic the 'dead_letter' deserialization handler writes the records it cannot read to; "
        "required with that handler.",
    )
    processing_exception_handler: ConfigKey[ProcessingHandler] = ConfigKey(
        "log_and_fail",
        one_of(*PROCESSING_HANDLERS),
        "What happens when a processor raises: 'log_and_fail' stops the thread naming the node, the "
        "task and the source record; 'log_and_continue' logs, counts (dropped-records) and goes on.",
    )
    default_production_exception_handler: ConfigKey[ProductionHandler] = ConfigKey(
        "fail",
        one_of(*PRODUCTION_HANDLERS),
        "What happens to an output record the producer refuses (larger than message.max.bytes, "
        "for one): 'fail' stops the thread naming the topic and the cause; 'continue' logs and "
        "skips it.",
    )
    default_timestamp_extractor: ConfigKey[TimestampExtractorSpec] = ConfigKey(
        "fail_on_invalid",
        _extractor,
        "Where a record's event time comes from when its source names no extractor: the record's "
        "timestamp ('fail_on_invalid' stops on a negative one, 'log_and_skip_on_invalid' drops it, "
        "'use_partition_time_on_invalid' takes the partition's highest so far), 'wallclock' (the "
        "clock), or your own: an object with extract(record, partition_time) -> ms, or such a "
        "callable.",
    )
    source_partitioning_check: ConfigKey[SourcePartitioningCheck] = ConfigKey(
        "warn",
        one_of(*SOURCE_PARTITIONING_CHECKS),
        "Whether the stream threads check that a keyed input record is on the partition Kafka's "
        "default partitioner (murmur2 of the key bytes) gives it, as joins and interactive queries "
        "assume: 'warn' counts a misplaced record (mispartitioned-records) and logs the first of each "
        "partition, 'fail' stops the thread naming it, 'off' checks nothing. Checks the first 1000 "
        "records of each input partition, then one in 1000. Not in Kafka Streams.",
    )
    default_dsl_store: ConfigKey[DslStore] = ConfigKey(
        "rocksdb",
        one_of(*DSL_STORES),
        "The store type of the DSL's stateful operations whose Materialized names none: 'rocksdb' "
        "(persistent, on disk under state_dir) or 'in_memory'.",
    )
    rocksdb_config_setter: ConfigKey[RocksDBConfigSetterLike | type[RocksDBConfigSetterLike] | None] = (
        ConfigKey(
            None,
            rocksdb_config_setter,
            "Tunes every RocksDB database the instance opens (Kafka Streams' rocksdb.config.setter): "
            "set_config(store_name, options, configs) gets the store's name, its rocksdict Options "
            "(already set to the runtime's defaults: the shared block cache, bloom filters, the memtable "
            "size) and this config, before the database opens; close(store_name, options), if defined, "
            "runs when the store closes. A class is instantiated once per store.",
        )
    )
    rocksdb_block_cache_bytes: ConfigKey[int] = ConfigKey(
        64 * 1024 * 1024,
        int_at_least(1),
        "The block cache every RocksDB store of the process shares; memtables are charged to it "
        "too. Each open database adds 8 MiB to it and to the memtable budget. Process-wide: set "
        "as each store opens, so with several applications in one process give them the same.",
    )
    rocksdb_write_buffer_bytes: ConfigKey[int] = ConfigKey(
        32 * 1024 * 1024,
        int_at_least(1),
        "The part of rocksdb_block_cache_bytes that memtables may use (at most the cache).",
    )
    topology_optimization: ConfigKey[TopologyOptimization] = ConfigKey(
        "none",
        one_of(*TOPOLOGY_OPTIMIZATIONS),
        "Kafka Streams' topology.optimization; only 'none' (the topology runs as written) is implemented.",
    )
    metrics_recording_level: ConfigKey[MetricsRecordingLevel] = ConfigKey(
        "info",
        one_of(*METRICS_RECORDING_LEVELS),
        "'info' records the standard metrics; 'debug' and 'trace' add the costlier ones: state-store "
        "operation latencies and each task's record lateness.",
    )

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
        for name, spec in _DEFINITIONS.items():
            if spec.default_from is not None and name not in given:
                values[name] = spec.default_from(values)
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
    def define(
        cls,
        name: str,
        default: Any,
        validate: Callable[[str, Any], Any],
        doc: str = "",
        *,
        value_type: object = Any,
    ) -> None:
        """Declare a new key (used by later modules); redefining an existing key is an error.

        The key is read as ``config["name"]`` (untyped); ``value_type`` is what the configuration
        reference shows as its type.
        """
        if name in _DEFINITIONS:
            raise StreamsConfigError(f"config '{name}' is already defined")
        spec: ConfigKey[Any] = ConfigKey(default, validate, doc)
        spec.name, spec._type = name, value_type  # noqa: SLF001 - set here, not by a class attribute
        _DEFINITIONS[name] = spec

    @staticmethod
    def known_keys() -> list[str]:
        return sorted(_DEFINITIONS)

    def __getitem__(self, key: str) -> Any:
        return self._values[_canonical(key)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    if not TYPE_CHECKING:
        # keys added by define() read as attributes too; hidden from mypy, so that an attribute
        # read of a key is checked against the declared keys and typed
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

    def required_application_id(self) -> str:
        """``application_id``, which a running application must have (its default is ``None``);
        raises naming the key when it is not set."""
        if not self.application_id:
            raise StreamsConfigError(
                "config 'application_id' must be set to run a topology; allowed: a non-empty string"
            )
        return self.application_id

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

    def default_serde(self, side: str) -> SerdeLike:
        """The default key or value Serde; raises naming the key when none is configured."""
        key = "default_key_serde" if side == "key" else "default_value_serde"
        serde: SerdeLike | None = self._values[key]
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
