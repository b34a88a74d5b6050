"""Config objects of the DSL (frozen dataclasses): Consumed, Produced, Grouped, Materialized,
Repartitioned, Branched.

They play the roles of Kafka Streams' classes of the same names; Kafka's ``Named`` is the
``name=`` keyword of every operation. Each has ``as_(name)`` and ``with_(key_serde, value_serde)``
constructors (``as``/``with`` are Python keywords) and ``with_*`` copy-modifiers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

from streams_runtime.errors import TopologyError

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde

STORE_TYPES = ("rocksdb", "in_memory")


#: a sink's or repartition's partitioner: ``(topic, key, value) -> partition | None``
Partitioner = Callable[..., int | None]


class _Named:
    """The copy-modifiers every options class has; every subclass is a frozen dataclass with a
    ``name`` field (what ``dataclasses.replace`` and ``as_`` need)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    if TYPE_CHECKING:

        def __init__(self, *, name: str | None = None) -> None: ...

    @classmethod
    def as_(cls, name: str) -> Self:
        return cls(name=name)

    def replace(self, **changes: object) -> Self:
        return dataclasses.replace(self, **changes)

    def with_name(self, name: str) -> Self:
        return dataclasses.replace(self, name=name)


class _Options(_Named):
    """An options class with ``key_serde`` and ``value_serde`` fields."""

    def with_key_serde(self, serde: object) -> Self:
        return dataclasses.replace(self, key_serde=serde)

    def with_value_serde(self, serde: object) -> Self:
        return dataclasses.replace(self, value_serde=serde)


class _StoreOptions:
    """The store settings of an options class with ``store_type``, ``logging_enabled`` and
    ``logging_config`` fields (a dataclass)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def with_store_type(self, store_type: str) -> Self:
        return dataclasses.replace(self, store_type=store_type)

    def with_logging_enabled(self, config: dict[str, str] | None = None) -> Self:
        return dataclasses.replace(self, logging_enabled=True, logging_config=dict(config or {}))

    def with_logging_disabled(self) -> Self:
        return dataclasses.replace(self, logging_enabled=False, logging_config=None)


@dataclass(frozen=True)
class Consumed(_Options):
    """How a source reads its topic(s): serdes, timestamp extractor, reset policy, name."""

    key_serde: Any = None
    value_serde: Any = None
    timestamp_extractor: Any = None
    offset_reset: str | None = None  # "earliest" | "latest" | None (consumer default)
    name: str | None = None

    @classmethod
    def with_(
        cls, key_serde: Serde | None = None, value_serde: Serde | None = None, **kwargs: Any
    ) -> Consumed:
        return cls(key_serde, value_serde, **kwargs)

    def with_timestamp_extractor(self, extractor: object) -> Consumed:
        return dataclasses.replace(self, timestamp_extractor=extractor)

    def with_offset_reset_policy(self, policy: str) -> Consumed:
        return dataclasses.replace(self, offset_reset=policy)


@dataclass(frozen=True)
class Produced(_Options):
    """How a sink writes: serdes, partitioner ``(topic, key, value) -> partition | None``, name."""

    key_serde: Any = None
    value_serde: Any = None
    partitioner: Partitioner | None = None
    name: str | None = None

    @classmethod
    def with_(
        cls,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        partitioner: Partitioner | None = None,
    ) -> Produced:
        return cls(key_serde, value_serde, partitioner)

    def with_stream_partitioner(self, partitioner: Partitioner) -> Produced:
        return dataclasses.replace(self, partitioner=partitioner)


@dataclass(frozen=True)
class Grouped(_Options):
    """Serdes of a grouping and its name (names the repartition topic ``<name>-repartition``)."""

    key_serde: Any = None
    value_serde: Any = None
    name: str | None = None

    @classmethod
    def with_(cls, key_serde: object = None, value_serde: object = None, name: str | None = None) -> Grouped:
        return cls(key_serde, value_serde, name)


@dataclass(frozen=True)
class Repartitioned(_Options):
    """An explicit repartition: serdes, name, partition count and partitioner."""

    key_serde: Any = None
    value_serde: Any = None
    name: str | None = None
    number_of_partitions: int | None = None
    partitioner: Partitioner | None = None

    def __post_init__(self) -> None:
        n = self.number_of_partitions
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise TopologyError(f"Repartitioned.number_of_partitions must be a positive int, got {n!r}")

    @classmethod
    def with_(cls, key_serde: object = None, value_serde: object = None) -> Repartitioned:
        return cls(key_serde, value_serde)

    @classmethod
    def number_of_partitions_(cls, count: int) -> Repartitioned:
        return cls(number_of_partitions=count)

    def with_number_of_partitions(self, count: int) -> Repartitioned:
        return dataclasses.replace(self, number_of_partitions=count)

    def with_stream_partitioner(self, partitioner: Partitioner) -> Repartitioned:
        return dataclasses.replace(self, partitioner=partitioner)


@dataclass(frozen=True)
class Materialized(_Options, _StoreOptions):
    """How a KTable's state store is made: name, serdes, type, caching and changelog settings.

    ``store_type=None`` uses config ``default_dsl_store`` ("rocksdb" unless set);
    ``store_supplier`` (from ``Stores``) overrides the type. Unnamed stores get positional names.
    """

    store_name: str | None = None
    key_serde: Any = None
    value_serde: Any = None
    store_type: str | None = None
    caching_enabled: bool = True
    logging_enabled: bool = True
    logging_config: dict[str, str] | None = None
    store_supplier: Any = None
    retention_ms: int | None = None  # window/session stores only; None: size + grace

    def __post_init__(self) -> None:
        if self.store_type is not None and self.store_type not in STORE_TYPES:
            raise TopologyError(
                f"Materialized.store_type must be one of {STORE_TYPES}, got {self.store_type!r}"
            )
        if self.store_supplier is not None and self.store_name is None:
            object.__setattr__(self, "store_name", self.store_supplier.name)

    @classmethod
    def as_(cls, store: object) -> Self:
        """``Materialized.as_("name")`` or ``Materialized.as_(Stores.in_memory_key_value_store("name"))``."""
        if isinstance(store, str):
            return cls(store_name=store)
        return cls(store_supplier=store)

    @classmethod
    def with_(cls, key_serde: object = None, value_serde: object = None) -> Materialized:
        return cls(key_serde=key_serde, value_serde=value_serde)

    def with_caching_enabled(self) -> Materialized:
        return dataclasses.replace(self, caching_enabled=True)

    def with_caching_disabled(self) -> Materialized:
        return dataclasses.replace(self, caching_enabled=False)

    def with_retention(self, retention_ms: int) -> Materialized:
        """Window/session stores: keep windows ``retention_ms`` (>= window size + grace)."""
        return dataclasses.replace(self, retention_ms=retention_ms)


@dataclass(frozen=True)
class Branched(_Named):
    """One branch of ``split()``: its name suffix and what to do with the branch stream.

    ``function(stream) -> stream | None`` transforms the branch (the result is returned in the
    map unless None); ``consumer(stream)`` consumes it (nothing returned).
    """

    name: str | None = None
    function: Callable[[Any], Any] | None = None
    consumer: Callable[[Any], None] | None = None

    @classmethod
    def with_function(cls, function: Callable[[Any], Any], name: str | None = None) -> Branched:
        return cls(name=name, function=function)

    @classmethod
    def with_consumer(cls, consumer: Callable[[Any], None], name: str | None = None) -> Branched:
        return cls(name=name, consumer=consumer)
