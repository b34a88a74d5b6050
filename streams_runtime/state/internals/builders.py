"""Store suppliers and builders: the composition of the one-concern wrappers.

Owner: the state side. A supplier makes new inner bytes stores of one name; a builder composes
one store stack per ``build()`` call (one per task), outermost first::

    Metered[Timestamped]KeyValueStore     serdes + metrics        (always)
      CachingKeyValueStore                record cache            (with_caching_enabled)
        ChangeLogging[Timestamped]...     changelog writes        (with_logging_enabled; default)
          RocksDBStore | InMemoryKeyValueStore

Defaults follow Kafka Streams' store builders: logging enabled, caching disabled. The
``with_*`` switches live in :class:`StoreBuilderSwitches`, shared with the window/session
builders (:mod:`.window_builders`) and the suppression buffer builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar

from streams_runtime.serdes import Serde
from streams_runtime.state.internals.caching_store import CachingKeyValueStore
from streams_runtime.state.internals.change_logging_store import (
    ChangeLoggingKeyValueStore,
    ChangeLoggingTimestampedKeyValueStore,
)
from streams_runtime.state.internals.metered_store import (
    MeteredKeyValueStore,
    MeteredTimestampedKeyValueStore,
)
from streams_runtime.state.internals.wrapped_store import KeyValueStoreLayer

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStore

__all__ = [
    "InnerStoreSupplier",
    "KeyValueBytesStoreSupplier",
    "KeyValueStoreBuilder",
    "StoreBuilderBase",
    "StoreBuilderSwitches",
    "StoreSupplierBase",
    "validate_store_name",
]

# the inner store a supplier makes (what a builder wraps)
_Inner = TypeVar("_Inner", bound="StateStore")
_Inner_co = TypeVar("_Inner_co", covariant=True)


class InnerStoreSupplier(Protocol[_Inner_co]):
    """What a store builder needs of its supplier: the name, the metrics scope, new inner stores."""

    @property
    def name(self) -> str: ...

    def get(self) -> _Inner_co: ...

    def metrics_scope(self) -> str: ...


_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,200}$")


def validate_store_name(name: object) -> str:
    """Return ``name`` if it can be a directory and part of a topic name; raise otherwise."""
    if not isinstance(name, str) or not _LEGAL_NAME.match(name) or name in (".", ".."):
        raise ValueError(
            f"invalid store name {name!r}: use 1-200 characters from [a-zA-Z0-9._-] "
            "(it names the store directory and the changelog topic)"
        )
    return name


class StoreBuilderSwitches:
    """The logging and caching switches of a store builder; the ``with_*`` methods return it.

    Logging starts enabled with no topic configs, caching disabled. Subclasses call
    :meth:`_init_switches` from ``__init__``.
    """

    def _init_switches(self) -> None:
        self._caching_enabled = False
        self._logging_enabled = True
        self._log_config: dict[str, str] = {}

    @property
    def logging_enabled(self) -> bool:
        """Whether built stores write a changelog."""
        return self._logging_enabled

    @property
    def log_config(self) -> dict[str, str]:
        """Topic configs for the changelog topic (a copy)."""
        return dict(self._log_config)

    @property
    def caching_enabled(self) -> bool:
        """Whether built stores have a record cache."""
        return self._caching_enabled

    def with_caching_enabled(self) -> Self:
        self._caching_enabled = True
        return self

    def with_caching_disabled(self) -> Self:
        self._caching_enabled = False
        return self

    def with_logging_enabled(self, config: dict[str, str] | None = None) -> Self:
        """Enable the changelog, with topic configs such as ``{"cleanup.policy": "compact"}``."""
        self._logging_enabled = True
        self._log_config = {str(k): str(v) for k, v in (config or {}).items()}
        return self

    def with_logging_disabled(self) -> Self:
        self._logging_enabled = False
        self._log_config = {}
        return self


class StoreSupplierBase:
    """What every inner-store supplier has: a valid name, a metrics scope, persistence.

    :param name: the store name.
    :param metrics_scope: the ``store-type`` metrics tag (``"rocksdb"``, ``"in-memory-window-state"``).
    :param persistent: whether the stores keep data across restarts.
    """

    def __init__(self, name: str, metrics_scope: str, persistent: bool) -> None:
        self._name = validate_store_name(name)
        self._metrics_scope = metrics_scope
        self.persistent = persistent

    @property
    def name(self) -> str:
        """The name of the stores made."""
        return self._name

    def metrics_scope(self) -> str:
        """The ``store-type`` metrics tag."""
        return self._metrics_scope


class KeyValueBytesStoreSupplier(StoreSupplierBase):
    """Makes inner bytes stores of one name.

    :param factory: ``name -> new inner store``; the other parameters: :class:`StoreSupplierBase`.
    """

    def __init__(
        self, name: str, factory: Callable[[str], Any], metrics_scope: str, *, persistent: bool
    ) -> None:
        super().__init__(name, metrics_scope, persistent)
        self._factory = factory

    def get(self) -> Any:
        """A new inner store (one per task)."""
        return self._factory(self._name)

    def __repr__(self) -> str:
        return f"<KeyValueBytesStoreSupplier {self._name} ({self._metrics_scope})>"


class StoreBuilderBase(StoreBuilderSwitches, Generic[_Inner]):
    """What every store builder has: its supplier, the serdes given, the logging/caching switches.

    :param supplier: the inner store supplier.
    :param key_serde: the key serde (``None``: the app's ``default_key_serde``).
    :param value_serde: the value serde (``None``: the app's ``default_value_serde``).
    :param timestamped: build a timestamped stack (values are ``ValueAndTimestamp``).
    """

    def __init__(
        self,
        supplier: InnerStoreSupplier[_Inner],
        key_serde: Serde | None = None,
        value_serde: Serde | None = None,
        *,
        timestamped: bool = False,
    ) -> None:
        #: whether built stores hold ``ValueAndTimestamp`` values
        self.timestamped = timestamped
        if supplier is None or not callable(getattr(supplier, "get", None)):
            raise TypeError("supplier must be a store supplier (see Stores.*_store(...))")
        self._supplier: InnerStoreSupplier[_Inner] = supplier
        self._key_serde = key_serde
        self._value_serde = value_serde
        self._init_switches()

    @property
    def name(self) -> str:
        """The store name."""
        return str(self._supplier.name)

    @property
    def key_serde(self) -> Serde | None:
        """The key serde given (``None``: the app's default); interactive queries partition keys with it."""
        return self._key_serde

    @property
    def persistent(self) -> bool:
        """Whether built stores keep data across restarts."""
        return bool(getattr(self._supplier, "persistent", False))

    def _inner(self) -> _Inner:
        """A new inner store from the supplier, checked to carry this builder's name."""
        inner = self._supplier.get()
        if inner.name != self.name:
            raise ValueError(f"supplier {self.name!r} made a store named {inner.name!r}")
        return inner


class KeyValueStoreBuilder(StoreBuilderBase[KeyValueStoreLayer]):
    """Builds key-value store stacks; the ``with_*`` methods return the builder itself.

    :param supplier: the inner store supplier.
    :param key_serde: the key serde (``None``: the app's ``default_key_serde``).
    :param value_serde: the value serde (``None``: the app's ``default_value_serde``).
    :param timestamped: build a timestamped stack (values are ``ValueAndTimestamp``).
    """

    def build(self) -> MeteredKeyValueStore:
        """A new, uninitialized store stack (call once per task)."""
        store: Any = self._inner()  # each layer's own class, down to the inner store's
        if self._logging_enabled:
            logging_layer = (
                ChangeLoggingTimestampedKeyValueStore if self.timestamped else ChangeLoggingKeyValueStore
            )
            store = logging_layer(store)
        if self._caching_enabled:
            store = CachingKeyValueStore(store)
        metered = MeteredTimestampedKeyValueStore if self.timestamped else MeteredKeyValueStore
        return metered(
            store,
            self._key_serde,
            self._value_serde,
            metrics_scope=self._supplier.metrics_scope(),
        )

    def __repr__(self) -> str:
        return (
            f"<KeyValueStoreBuilder {self.name} timestamped={self.timestamped} "
            f"caching={self._caching_enabled} logging={self._logging_enabled}>"
        )
