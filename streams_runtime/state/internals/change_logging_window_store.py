"""Change logging for window and session stores: every applied write goes to the changelog.

Owner: the state side; one instance per task and store, below the cache. Protocol of a write
(as for key-value stores, :mod:`.change_logging_store`):

1. write to the store below, which returns the changelog key it wrote (``None``: nothing was
   written, e.g. an expired window -- then nothing is logged);
2. ``context.log_change(store, changelog_key, value, timestamp)``.

Changelog keys are Kafka Streams' bytes: ``<key><8-byte start><4-byte seqnum>`` for window
stores, ``<key><8-byte end><8-byte start>`` for session stores. Values are the stored bytes,
except in timestamped window stores, whose changelog holds the plain value with the stored
timestamp as the record timestamp (restore re-attaches it, see
:func:`streams_runtime.state.internals.timestamped.record_converter_for`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from streams_runtime.state.internals.change_logging_store import (
    ChangelogRegistrationContext,
    changelog_topic_name,
)
from streams_runtime.state.internals.timestamped import split_timestamped
from streams_runtime.state.internals.wrapped_window_store import WrappedSessionStore, WrappedWindowStore

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStore, StateStoreContext
    from streams_runtime.windowed import Windowed

__all__ = [
    "ChangeLoggingSessionBytesStore",
    "ChangeLoggingTimestampedWindowBytesStore",
    "ChangeLoggingWindowBytesStore",
]


class _ChangeLogging:
    """The logging half shared by the window and session variants."""

    name: str
    wrapped: Any
    context: Any = None
    changelog_topic: str | None = None

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        self.context = context
        self.changelog_topic = changelog_topic_name(context.application_id, self.name)
        self.wrapped.init(
            ChangelogRegistrationContext(context, self.changelog_topic), root if root is not None else self
        )

    def _record_timestamp(self) -> int:
        record_context = self.context.record_context()
        if record_context is None:
            return int(time.time() * 1000)
        return int(record_context.timestamp)

    def _log(self, changelog_key: bytes | None, value: bytes | None) -> None:
        # Step 2 (step 1 happened in the caller)
        if changelog_key is not None:
            self.context.log_change(self.name, changelog_key, value, self._record_timestamp())


class ChangeLoggingWindowBytesStore(_ChangeLogging, WrappedWindowStore):
    """Logs each applied window write with its ``<key><start><seqnum>`` changelog key."""

    def put(self, key: bytes, value: bytes | None, window_start_timestamp: int) -> bytes | None:
        # Step 1
        changelog_key = self.wrapped.put(key, value, window_start_timestamp)
        self._log(changelog_key, value)
        result: bytes | None = changelog_key
        return result


class ChangeLoggingTimestampedWindowBytesStore(ChangeLoggingWindowBytesStore):
    """Timestamped window stores: log the plain value, stamped with the stored timestamp."""

    def _log(self, changelog_key: bytes | None, value: bytes | None) -> None:
        if changelog_key is None:
            return
        if value is None:
            self.context.log_change(self.name, changelog_key, None, self._record_timestamp())
            return
        raw, timestamp = split_timestamped(value)
        self.context.log_change(self.name, changelog_key, raw, timestamp)


class ChangeLoggingSessionBytesStore(_ChangeLogging, WrappedSessionStore):
    """Logs each applied session write with its ``<key><end><start>`` changelog key."""

    def put(self, session: Windowed, value: bytes | None) -> bytes | None:
        # Step 1
        changelog_key = self.wrapped.put(session, value)
        self._log(changelog_key, value)
        result: bytes | None = changelog_key
        return result
