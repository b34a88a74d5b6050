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

from streams_runtime.serdes import Serde
from streams_runtime.state.internals.builders import KeyValueBytesStoreSupplier, KeyValueStoreBuilder
from streams_runtime.state.internals.in_memory_store import InMemoryKeyValueStore

__all__ = ["Stores"]


def _rocksdb_store(name: str):
    # Imported on first use so that only processes with persistent stores load rocksdict.
    from streams_runtime.state.internals.rocksdb_store import RocksDBStore

    return RocksDBStore(name)


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
