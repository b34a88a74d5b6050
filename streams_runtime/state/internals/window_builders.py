"""Window and session store suppliers and builders: composing their one-concern stacks.

Owner: the state side. One ``build()`` per task, outermost first::

    Metered[Timestamped]WindowStore | MeteredSessionStore      serdes + metrics  (always)
      CachingWindowStore | CachingSessionStore                 record cache      (with_caching_enabled)
        ChangeLogging[Timestamped]WindowBytesStore | ...Session changelog         (default on)
          WindowBytesStore | SessionBytesStore over RocksDBSegments | InMemorySegments

Defaults follow Kafka Streams: logging on, caching off; caching is silently left out for window
stores that retain duplicates (stream-stream join buffers), as Kafka Streams does.

Changelog topic configs (:meth:`WindowStoreBuilder.changelog_config`): ``cleanup.policy=
compact,delete`` and ``retention.ms = retention_period + additional retention`` (Kafka
Streams' ``windowstore.changelog.additional.retention.ms``, default one day), so a window
stays in the changelog at least as long as the store may need it; user configs given to
``with_logging_enabled`` override these defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from streams_runtime.state.internals.builders import InnerStoreSupplier, StoreBuilderBase, StoreSupplierBase
from streams_runtime.state.internals.bytes_store import validate_retention
from streams_runtime.state.internals.caching_window_store import CachingSessionStore, CachingWindowStore
from streams_runtime.state.internals.change_logging_window_store import (
    ChangeLoggingSessionBytesStore,
    ChangeLoggingTimestampedWindowBytesStore,
    ChangeLoggingWindowBytesStore,
)
from streams_runtime.state.internals.metered_window_store import (
    MeteredSessionStore,
    MeteredTimestampedWindowStore,
    MeteredWindowStore,
)
from streams_runtime.state.internals.session_store import SessionBytesStore
from streams_runtime.state.internals.window_store import WindowBytesStore

if TYPE_CHECKING:
    from streams_runtime.state.internals.segments import Segments

__all__ = [
    "DEFAULT_ADDITIONAL_RETENTION_MS",
    "SessionBytesStoreSupplier",
    "SessionStoreBuilder",
    "WindowBytesStoreSupplier",
    "WindowStoreBuilder",
    "windowed_changelog_config",
]

DEFAULT_ADDITIONAL_RETENTION_MS = 24 * 60 * 60 * 1000


def windowed_changelog_config(
    retention_period_ms: int,
    user_config: dict[str, str] | None = None,
    additional_retention_ms: int = DEFAULT_ADDITIONAL_RETENTION_MS,
) -> dict[str, str]:
    """The changelog topic configs of a window/session store (user configs win)."""
    config = {
        "cleanup.policy": "compact,delete",
        "retention.ms": str(int(retention_period_ms) + int(additional_retention_ms)),
    }
    config.update(user_config or {})
    return config


class _SegmentedStoreSupplier(StoreSupplierBase):
    """What window and session store suppliers share: a retention period and a segments factory."""

    def __init__(
        self,
        name: str,
        retention_period_ms: int,
        segments_factory: Callable[[], Segments],
        metrics_scope: str,
        *,
        persistent: bool,
    ) -> None:
        super().__init__(name, metrics_scope, persistent)
        self.retention_period_ms = validate_retention(name, retention_period_ms)
        self._segments_factory = segments_factory


class WindowBytesStoreSupplier(_SegmentedStoreSupplier):
    """Makes inner window stores of one name and shape.

    :param segments_factory: ``() -> new segments`` (``InMemorySegments`` or ``RocksDBSegments``).
    :param metrics_scope: ``"rocksdb-window-state"`` or ``"in-memory-window-state"``.
    """

    def __init__(
        self,
        name: str,
        retention_period_ms: int,
        window_size_ms: int,
        retain_duplicates: bool,
        segments_factory: Callable[[], Segments],
        metrics_scope: str,
        *,
        persistent: bool,
    ) -> None:
        super().__init__(name, retention_period_ms, segments_factory, metrics_scope, persistent=persistent)
        if window_size_ms < 0:
            raise ValueError(f"window_size_ms of store {name!r} cannot be negative, got {window_size_ms}")
        if window_size_ms > retention_period_ms:
            raise ValueError(
                f"the retention period of window store {name!r} must be no smaller than its window size: "
                f"got window_size_ms={window_size_ms}, retention_period_ms={retention_period_ms}"
            )
        self.window_size_ms = int(window_size_ms)
        self.retain_duplicates = bool(retain_duplicates)

    def get(self) -> WindowBytesStore:
        """A new inner store (one per task)."""
        return WindowBytesStore(
            self._name,
            self.retention_period_ms,
            self.window_size_ms,
            self.retain_duplicates,
            self._segments_factory(),
        )


class SessionBytesStoreSupplier(_SegmentedStoreSupplier):
    """Makes inner session stores of one name (see :class:`WindowBytesStoreSupplier`)."""

    def get(self) -> SessionBytesStore:
        """A new inner store (one per task)."""
        return SessionBytesStore(self._name, self.retention_period_ms, self._segments_factory())


_S_co = TypeVar("_S_co", covariant=True)
_S = TypeVar("_S", WindowBytesStore, SessionBytesStore)


class _SegmentedSupplier(InnerStoreSupplier[_S_co], Protocol[_S_co]):
    """A window or session store supplier, as the builders see it."""

    retention_period_ms: int


class _SegmentedStoreBuilder(StoreBuilderBase[_S]):
    """The windowed changelog config shared by both builders."""

    _supplier: _SegmentedSupplier[_S]

    @property
    def retention_period_ms(self) -> int:
        return int(self._supplier.retention_period_ms)

    @property
    def log_config(self) -> dict[str, str]:
        """The changelog topic configs, with the default additional retention (a copy)."""
        return self.changelog_config() if self._logging_enabled else {}

    def changelog_config(
        self, additional_retention_ms: int = DEFAULT_ADDITIONAL_RETENTION_MS
    ) -> dict[str, str]:
        """The changelog topic configs for an app's ``windowstore_changelog_additional_retention_ms``."""
        return windowed_changelog_config(self.retention_period_ms, self._log_config, additional_retention_ms)


class WindowStoreBuilder(_SegmentedStoreBuilder[WindowBytesStore]):
    """Builds window store stacks (``timestamped``: values are ``ValueAndTimestamp``)."""

    _supplier: WindowBytesStoreSupplier

    @property
    def window_size_ms(self) -> int:
        return int(self._supplier.window_size_ms)

    @property
    def retain_duplicates(self) -> bool:
        return bool(self._supplier.retain_duplicates)

    @property
    def caching_enabled(self) -> bool:
        """Whether built stores are cached (never when duplicates are retained)."""
        return self._caching_enabled and not self.retain_duplicates

    def build(self) -> MeteredWindowStore:
        """A new, uninitialized store stack (call once per task)."""
        store: Any = self._inner()
        if self._logging_enabled:
            store = (
                ChangeLoggingTimestampedWindowBytesStore
                if self.timestamped
                else ChangeLoggingWindowBytesStore
            )(store)
        if self.caching_enabled:
            store = CachingWindowStore(store)
        metered = MeteredTimestampedWindowStore if self.timestamped else MeteredWindowStore
        return metered(
            store, self._key_serde, self._value_serde, metrics_scope=self._supplier.metrics_scope()
        )


class SessionStoreBuilder(_SegmentedStoreBuilder[SessionBytesStore]):
    """Builds session store stacks."""

    def build(self) -> MeteredSessionStore:
        """A new, uninitialized store stack (call once per task)."""
        store: Any = self._inner()
        if self._logging_enabled:
            store = ChangeLoggingSessionBytesStore(store)
        if self._caching_enabled:
            store = CachingSessionStore(store)
        return MeteredSessionStore(
            store, self._key_serde, self._value_serde, metrics_scope=self._supplier.metrics_scope()
        )
