"""ChangeLoggingKeyValueStore: sends every write of a store to its changelog topic.

Owner: the state side; one instance per task and store, in the store stack below the cache (so
with caching on, only flushed, collapsed updates reach the changelog).

Protocol of a write (both steps on the task's thread):

1. write the change to the store below;
2. ``context.log_change(store_name, key_bytes, value_bytes, timestamp)``, with the timestamp
   of the current record context (the cache sets the context of the entry it flushes).

The store is registered with the changelog topic ``<application_id>-<store>-changelog``:
``init`` hands the layers below a context whose ``register`` fills in that topic, so the inner
store registers itself (and its restore callback) without knowing it is logged.

Invariant: a write is logged only after the store below accepted it; deletes are logged as
tombstones (value ``None``), ``put_if_absent`` is logged only when it wrote.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from streams_runtime.state.internals.timestamped import TIMESTAMP_BYTES, read_timestamp
from streams_runtime.state.internals.wrapped_store import WrappedKeyValueStore

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStore, StateStoreContext
    from streams_runtime.state.internals.wrapped_store import KeyValueStoreLayer

_TIMESTAMP = struct.Struct(">q")  # the stored timestamp (see read_timestamp)

__all__ = [
    "ChangeLoggingKeyValueStore",
    "ChangelogRegistrationContext",
    "ChangeLoggingTimestampedKeyValueStore",
    "changelog_topic_name",
]


def changelog_topic_name(application_id: str, store_name: str) -> str:
    """``<application_id>-<store_name>-changelog``."""
    return f"{application_id}-{store_name}-changelog"


class ChangelogRegistrationContext:
    """The task's context as the layers below see it: ``register`` names the changelog topic.

    Shared by the key-value, window and session change-logging layers."""

    def __init__(self, context: StateStoreContext, changelog_topic: str) -> None:
        self._context = context
        self._changelog_topic = changelog_topic

    def register(
        self,
        store: StateStore,
        restore_callback: Callable[..., None],
        *,
        changelog_topic: str | None = None,
    ) -> None:
        self._context.register(store, restore_callback, changelog_topic=self._changelog_topic)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._context, attribute)


class ChangeLoggingKeyValueStore(WrappedKeyValueStore):
    """Logs each write of the bytes store it wraps to the store's changelog topic.

    :param wrapped: the inner bytes store.
    """

    def __init__(self, wrapped: KeyValueStoreLayer) -> None:
        super().__init__(wrapped)
        self.context: Any = None
        self.changelog_topic: str | None = None
        self._store_name = ""  # the name, read once at init (``name`` walks the stack)
        self._log_change: Any = None  # context.log_change bound to this store, set by init

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Initialize the store below under a context that registers the changelog topic."""
        self.context = context
        self._store_name = self.name
        self.changelog_topic = changelog_topic_name(context.application_id, self._store_name)
        registering = ChangelogRegistrationContext(context, self.changelog_topic)
        self.wrapped.init(registering, root if root is not None else self)
        # log_change bound to this store (the runtime's context offers it); else log_change
        change_logger = getattr(context, "change_logger", None)
        if callable(change_logger):
            self._log_change = change_logger(self._store_name)
        else:
            store_name = self._store_name

            def log_change(key: bytes, value: bytes | None, timestamp: int) -> None:
                self.context.log_change(store_name, key, value, timestamp)

            self._log_change = log_change

    def put(self, key: bytes, value: bytes | None) -> None:
        # Step 1
        self.wrapped.put(key, value)
        # Step 2
        self._log(key, value)

    def put_if_absent(self, key: bytes, value: bytes | None) -> bytes | None:
        previous = self.wrapped.put_if_absent(key, value)
        if previous is None:
            self._log(key, value)
        result: bytes | None = previous
        return result

    def put_all(self, entries: Sequence[tuple[bytes, bytes | None]]) -> None:
        entries = list(entries)
        self.wrapped.put_all(entries)
        for key, value in entries:
            self._log(key, value)

    def delete(self, key: bytes) -> bytes | None:
        previous = self.wrapped.delete(key)
        self._log(key, None)
        result: bytes | None = previous
        return result

    def _record_timestamp(self) -> int:
        record_context = self.context.record_context()
        if record_context is None:
            # Outside record processing (no record context): stamp with wall-clock time, as a
            # producer does for a record sent without a timestamp.
            return int(time.time() * 1000)
        return int(record_context.timestamp)

    def _log(self, key: bytes, value: bytes | None) -> None:
        self.context.log_change(self._store_name, key, value, self._record_timestamp())


class ChangeLoggingTimestampedKeyValueStore(ChangeLoggingKeyValueStore):
    """Change logging for timestamped stores: the changelog holds the plain value.

    The store's values are ``<8-byte timestamp><value>``; the changelog record gets the value
    bytes and the stored timestamp as its record timestamp (as in Kafka Streams), so the topic
    reads like any KTable changelog. Restore re-attaches the record timestamp
    (:func:`streams_runtime.state.internals.timestamped.record_converter_for`).
    """

    def put(self, key: bytes, value: bytes | None) -> None:
        # ChangeLoggingKeyValueStore.put with _log inlined (the hot path of every KTable write)
        self.wrapped.put(key, value)
        if value is None:
            self._log_change(key, None, self._record_timestamp())
        elif len(value) >= TIMESTAMP_BYTES:
            self._log_change(key, value[TIMESTAMP_BYTES:], _TIMESTAMP.unpack_from(value)[0])
        else:
            self._log_change(key, value[TIMESTAMP_BYTES:], read_timestamp(value))

    def _log(self, key: bytes, value: bytes | None) -> None:
        if value is None:
            self.context.log_change(self._store_name, key, None, self._record_timestamp())
            return
        self.context.log_change(self._store_name, key, value[TIMESTAMP_BYTES:], read_timestamp(value))
