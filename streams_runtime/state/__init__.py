"""Public state store API: store contracts, ``ValueAndTimestamp`` and the ``Stores`` factory.

Implementations live in :mod:`streams_runtime.state.internals` (the only place ``rocksdict`` is
imported, in ``rocksdb_store``).
"""

from streams_runtime.state.interfaces import (
    KeyValue,
    KeyValueIterator,
    KeyValueStore,
    ReadOnlyKeyValueStore,
    ReadOnlySessionStore,
    ReadOnlyWindowStore,
    RecordContext,
    SessionStore,
    StateStore,
    StateStoreContext,
    StoreBuilder,
    StoreSupplier,
    TimestampedKeyValueStore,
    TimestampedWindowStore,
    WindowStore,
)
from streams_runtime.state.stores import Stores
from streams_runtime.state.value_and_timestamp import ValueAndTimestamp
from streams_runtime.state.versioned import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    VersionedKeyValueStore,
    VersionedRecord,
)

__all__ = [
    "PUT_RETURN_CODE_NOT_PUT",
    "PUT_RETURN_CODE_VALID_TO_UNDEFINED",
    "VersionedKeyValueStore",
    "VersionedRecord",
    "KeyValue",
    "KeyValueIterator",
    "KeyValueStore",
    "ReadOnlyKeyValueStore",
    "ReadOnlySessionStore",
    "ReadOnlyWindowStore",
    "RecordContext",
    "SessionStore",
    "StateStore",
    "StateStoreContext",
    "StoreBuilder",
    "StoreSupplier",
    "Stores",
    "TimestampedKeyValueStore",
    "TimestampedWindowStore",
    "ValueAndTimestamp",
    "WindowStore",
]
