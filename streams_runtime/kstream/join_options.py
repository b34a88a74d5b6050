"""Join options: StreamJoined (stream-stream joins) and Joined (stream-table joins).

Owner: the DSL. Frozen dataclasses with Kafka Streams' meaning; ``None`` serdes mean
the upstream serdes (or the app defaults). ``name`` names the processors (and, for a
stream-table join needing a repartition, the repartition topic); ``store_name`` is the base
name of a stream-stream join's window stores (``<store_name>-this-join-store``, ...).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Self

from streams_runtime.kstream.options import _Options, _StoreOptions

__all__ = ["Joined", "StreamJoined"]


@dataclass(frozen=True)
class _JoinOptions(_Options):
    """The serdes of both sides of a join and its name."""

    key_serde: Any = None
    value_serde: Any = None
    other_value_serde: Any = None
    name: str | None = None

    def with_other_value_serde(self, serde: object) -> Self:
        return dataclasses.replace(self, other_value_serde=serde)


@dataclass(frozen=True)
class StreamJoined(_JoinOptions, _StoreOptions):
    """Serdes, names and store settings of a KStream-KStream join."""

    store_name: str | None = None
    logging_enabled: bool = True
    logging_config: dict[str, str] | None = None
    store_type: str | None = None  # "rocksdb" | "in_memory" | None (default_dsl_store)

    @classmethod
    def with_(
        cls, key_serde: object = None, value_serde: object = None, other_value_serde: object = None
    ) -> StreamJoined:
        return cls(key_serde, value_serde, other_value_serde)

    @classmethod
    def as_(cls, store_name: str) -> Self:
        return cls(store_name=store_name)

    def with_store_name(self, store_name: str) -> StreamJoined:
        return dataclasses.replace(self, store_name=store_name)


@dataclass(frozen=True)
class Joined(_JoinOptions):
    """Serdes and name of a KStream-KTable join (the serdes are used if a repartition is needed)."""

    grace_period_ms: int | None = None  # KIP-923: buffer stream records (needs a versioned table)

    @classmethod
    def with_(
        cls,
        key_serde: object = None,
        value_serde: object = None,
        other_value_serde: object = None,
        name: str | None = None,
        grace_period_ms: int | None = None,
    ) -> Joined:
        return cls(key_serde, value_serde, other_value_serde, name, grace_period_ms)

    def with_grace_period(self, grace_period_ms: int) -> Joined:
        """Hold each stream record for ``grace_period_ms`` of stream time, then join it with the
        table version valid at its timestamp (the table must be materialized as versioned)."""
        if int(grace_period_ms) < 0:
            raise ValueError(f"grace period must not be negative, got {grace_period_ms}")
        return dataclasses.replace(self, grace_period_ms=int(grace_period_ms))
