"""BuildContext: what the DSL's graph nodes are handed while they write the topology.

The configuration and the store-builder factory of a table's store (:class:`MaterializedInternal`
is a ``Materialized`` with its store name resolved). Its own module so the graph nodes
(:mod:`.graph` and the builders of joins, suppression and windows) and the
:class:`~.builder.InternalStreamsBuilder` that makes it import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.options import Materialized
from streams_runtime.state import Stores

if TYPE_CHECKING:
    from collections.abc import Mapping

    from streams_runtime.config import StreamsConfig
    from streams_runtime.kstream.internals.builder import InternalStreamsBuilder
    from streams_runtime.state.internals.builders import KeyValueStoreBuilder
    from streams_runtime.state.internals.versioned_store import VersionedKeyValueStoreBuilder

__all__ = ["BuildContext", "MaterializedInternal", "versioned_store_builder"]


@dataclass
class MaterializedInternal:
    """A Materialized with its store name resolved (generated when the user gave none)."""

    materialized: Materialized
    store_name: str
    queryable: bool
    key_serde: Any = None
    value_serde: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def queryable_store_name(self) -> str | None:
        return self.store_name if self.queryable else None


class BuildContext:
    """What graph nodes need while writing: the config and the store-builder factory."""

    def __init__(
        self, config: StreamsConfig | Mapping[str, Any] | None, internal: InternalStreamsBuilder
    ) -> None:
        """:param internal: the InternalStreamsBuilder whose graph is written."""
        self.config = config
        self.internal = internal

    def store_builder(self, m: MaterializedInternal) -> KeyValueStoreBuilder | VersionedKeyValueStoreBuilder:
        mat = m.materialized
        supplier = mat.store_supplier
        if getattr(supplier, "history_retention_ms", None) is not None:  # a versioned store
            return versioned_store_builder(supplier, m)
        if supplier is None:
            store_type = (
                mat.store_type or (self.config.get("default_dsl_store") if self.config else None) or "rocksdb"
            )
            if store_type == "in_memory":
                supplier = Stores.in_memory_key_value_store(m.store_name)
            else:
                supplier = Stores.persistent_timestamped_key_value_store(m.store_name)
        builder = Stores.timestamped_key_value_store_builder(supplier, m.key_serde, m.value_serde)
        if mat.logging_enabled:
            builder.with_logging_enabled(mat.logging_config or {})
        else:
            builder.with_logging_disabled()
        if mat.caching_enabled:
            builder.with_caching_enabled()
        else:
            builder.with_caching_disabled()
        return builder


def versioned_store_builder(supplier: object, m: MaterializedInternal) -> VersionedKeyValueStoreBuilder:
    """A table's store on a versioned supplier (``Materialized.as_(Stores.*_versioned_...)``)."""
    builder = Stores.versioned_key_value_store_builder(supplier, m.key_serde, m.value_serde)
    mat = m.materialized
    if mat.logging_enabled:
        return builder.with_logging_enabled(mat.logging_config or {})
    return builder.with_logging_disabled()
