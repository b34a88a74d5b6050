"""Stores: the factory of store suppliers and store builders (Kafka Streams' ``Stores``).

Owner: the state side; the public entry point for Processor API users and for the DSL, which
turns ``Materialized`` into one of these builders.

Example::

    builder = Stores.key_value_store_builder(
        Stores.persistent_key_value_store("counts"), Serdes.String(), Serdes.Long()
    ).with_caching_enabled()
    store = builder.build()          # one per task; the runtime calls store.init(context)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams_runtime.serdes import Serde
from streams_runtime.state.internals.builders import KeyValueBytesStoreSupplier, KeyValueStoreBuilder
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore
from streams_runtime.state.internals.segments import InMemorySegments
from streams_runtime.state.internals.window_builders import (
    SessionBytesStoreSupplier,
    SessionStoreBuilder,
    WindowBytesStoreSupplier,
    WindowStoreBuilder,
)

if TYPE_CHECKING:
    from streams_runtime.state.internals.rocksdb_segments import RocksDBSegments
    from streams_runtime.state.internals.rocksdb_store import RocksDBStore
    from streams_runtime.state.internals.versioned_store import (
        VersionedBytesStoreSupplier,
        VersionedKeyValueStoreBuilder,
    )

__all__ = ["Stores"]


def _rocksdb_store(name: str) -> RocksDBStore:
    # Imported on first use so that only processes with persistent stores load rocksdict.
    from streams_runtime.state.internals.rocksdb_store import RocksDBStore

    return RocksDBStore(name)


def _rocksdb_segments() -> RocksDBSegments:
    # Imported on first use, like _rocksdb_store.
    from streams_runtime.state.internals.rocksdb_segments import RocksDBSegments

    return RocksDBSegments()


def _versioned_supplier(
    name: str, history_retention_ms: int, *, persistent: bool
) -> VersionedBytesStoreSupplier:
    """A supplier of versioned stores: RocksDB ones when ``persistent``, else in-memory ones."""
    from streams_runtime.state.internals.versioned_store import VersionedBytesStoreSupplier

    make, scope = (
        (_rocksdb_store, "rocksdb-versioned")
        if persistent
        else (InMemoryKeyValueStore, "in-memory-versioned")
    )
    return VersionedBytesStoreSupplier(name, history_retention_ms, make, scope, persistent)


class Stores:
    """Factory methods for store suppliers and builders."""

    @staticmethod
    def persistent_key_value_store(name: str) -> KeyValueBytesStoreSupplier:
        """A supplier of RocksDB stores named ``name``."""
        return KeyValueBytesStoreSupplier(name, _rocksdb_store, "rocksdb", persistent=True)

    @staticmethod
    def persistent_timestamped_key_value_store(name: str) -> KeyValueBytesStoreSupplier:
        """A supplier of RocksDB stores for timestamped values (use with the timestamped builder)."""
        return KeyValueBytesStoreSupplier(name, _rocksdb_store, "rocksdb", persistent=True)

    @staticmethod
    def in_memory_key_value_store(name: str) -> KeyValueBytesStoreSupplier:
        """A supplier of sorted in-memory stores named ``name``."""
        return KeyValueBytesStoreSupplier(name, InMemoryKeyValueStore, "in-memory", persistent=False)

    @staticmethod
    def key_value_store_builder(
        supplier: KeyValueBytesStoreSupplier,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
    ) -> KeyValueStoreBuilder:
        """A builder of key-value stores (logging on, caching off by default).

        :param supplier: from one of the ``*_store(name)`` methods.
        :param key_serde: ``None`` means the app's ``default_key_serde``.
        :param value_serde: ``None`` means the app's ``default_value_serde``.
        """
        return KeyValueStoreBuilder(supplier, key_serde, value_serde, timestamped=False)

    @staticmethod
    def timestamped_key_value_store_builder(
        supplier: KeyValueBytesStoreSupplier,
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
    ) -> KeyValueStoreBuilder:
        """A builder of stores whose values are ``ValueAndTimestamp`` (KTable stores).

        :param value_serde: the serde of the plain value (the timestamp is added around it).
        """
        return KeyValueStoreBuilder(supplier, key_serde, value_serde, timestamped=True)

    # -- versioned key-value stores (KIP-889) ---------------------------------------------------

    @staticmethod
    def persistent_versioned_key_value_store(
        name: str, history_retention_ms: int
    ) -> VersionedBytesStoreSupplier:
        """A supplier of RocksDB versioned stores keeping ``history_retention_ms`` of history."""
        return _versioned_supplier(name, history_retention_ms, persistent=True)

    @staticmethod
    def in_memory_versioned_key_value_store(
        name: str, history_retention_ms: int
    ) -> VersionedBytesStoreSupplier:
        """A supplier of in-memory versioned stores keeping ``history_retention_ms`` of history."""
        return _versioned_supplier(name, history_retention_ms, persistent=False)

    @staticmethod
    def versioned_key_value_store_builder(
        supplier: object, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> VersionedKeyValueStoreBuilder:
        """A builder of versioned stores (logging on; no caching) from a versioned supplier."""
        from streams_runtime.state.internals.versioned_store import VersionedKeyValueStoreBuilder

        return VersionedKeyValueStoreBuilder(supplier, key_serde, value_serde)

    # -- window and session stores -------------------------------------------------------------

    @staticmethod
    def persistent_window_store(
        name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False
    ) -> WindowBytesStoreSupplier:
        """A supplier of RocksDB window stores (segmented by window start).

        :param retention_period_ms: how long windows stay readable (>= ``window_size_ms``);
            the DSL passes window size + grace.
        :param window_size_ms: the window size.
        :param retain_duplicates: keep every put (stream-stream join buffers); disables caching.
        """
        return WindowBytesStoreSupplier(
            name,
            retention_period_ms,
            window_size_ms,
            retain_duplicates,
            _rocksdb_segments,
            "rocksdb-window-state",
            persistent=True,
        )

    @staticmethod
    def persistent_timestamped_window_store(
        name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False
    ) -> WindowBytesStoreSupplier:
        """A supplier of RocksDB window stores for timestamped values (use the timestamped builder)."""
        return Stores.persistent_window_store(name, retention_period_ms, window_size_ms, retain_duplicates)

    @staticmethod
    def in_memory_window_store(
        name: str, retention_period_ms: int, window_size_ms: int, retain_duplicates: bool = False
    ) -> WindowBytesStoreSupplier:
        """A supplier of in-memory window stores (same semantics as the persistent ones)."""
        return WindowBytesStoreSupplier(
            name,
            retention_period_ms,
            window_size_ms,
            retain_duplicates,
            InMemorySegments,
            "in-memory-window-state",
            persistent=False,
        )

    @staticmethod
    def persistent_session_store(name: str, retention_period_ms: int) -> SessionBytesStoreSupplier:
        """A supplier of RocksDB session stores (segmented by session end).

        :param retention_period_ms: how long sessions stay readable after their end; the DSL
            passes inactivity gap + grace.
        """
        return SessionBytesStoreSupplier(
            name, retention_period_ms, _rocksdb_segments, "rocksdb-session-state", persistent=True
        )

    @staticmethod
    def in_memory_session_store(name: str, retention_period_ms: int) -> SessionBytesStoreSupplier:
        """A supplier of in-memory session stores."""
        return SessionBytesStoreSupplier(
            name, retention_period_ms, InMemorySegments, "in-memory-session-state", persistent=False
        )

    @staticmethod
    def window_store_builder(
        supplier: WindowBytesStoreSupplier, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> WindowStoreBuilder:
        """A builder of window stores (logging on, caching off by default)."""
        return WindowStoreBuilder(supplier, key_serde, value_serde, timestamped=False)

    @staticmethod
    def timestamped_window_store_builder(
        supplier: WindowBytesStoreSupplier, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> WindowStoreBuilder:
        """A builder of window stores whose values are ``ValueAndTimestamp`` (windowed KTables).

        :param value_serde: the serde of the plain value (the timestamp is added around it).
        """
        return WindowStoreBuilder(supplier, key_serde, value_serde, timestamped=True)

    @staticmethod
    def session_store_builder(
        supplier: SessionBytesStoreSupplier, key_serde: Serde | None = None, value_serde: Serde | None = None
    ) -> SessionStoreBuilder:
        """A builder of session stores (logging on, caching off by default)."""
        return SessionStoreBuilder(supplier, key_serde, value_serde)
