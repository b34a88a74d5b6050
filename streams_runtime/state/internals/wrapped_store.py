"""WrappedStateStore / WrappedKeyValueStore: the bases of the one-concern store wrappers.

Owner: the state side. A store stack is ``Metered -> Caching? -> ChangeLogging? -> inner``;
each layer extends :class:`WrappedKeyValueStore` (or a window/session twin in
:mod:`.wrapped_window_store`) and overrides only the operations of its concern. Everything
else is passed to :attr:`wrapped` unchanged, so a layer never needs to know what is below it.
:class:`WrappedStateStore` holds the lifecycle delegation that all store kinds share.

Invariants: ``name`` and ``persistent`` are those of the inner store; ``inner()`` returns the
innermost store (the one the state manager checkpoints); lifecycle calls go down the stack in
order (init, flush, close), each layer acting before or after the layer below as its concern
requires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from streams_runtime.state.interfaces import StateStore

if TYPE_CHECKING:
    from streams_runtime.serdes import Serde
    from streams_runtime.state.interfaces import StateStoreContext

__all__ = [
    "FlushListener",
    "KeyValueStoreLayer",
    "StateStoreLayer",
    "WrappedKeyValueStore",
    "WrappedStateStore",
]

#: ``listener(key, new_value, old_value, timestamp)`` of a caching layer: each layer its own types
#: (bytes below the metered face, typed keys and values at it; windowed keys for window stores)
FlushListener = Callable[..., None]


class StateStoreLayer(StateStore, Protocol):
    """What a wrapper needs of the store below it, whatever the store kind: the lifecycle
    (:class:`StateStore`'s), the innermost store, the flush listener and the size."""

    def inner(self) -> StateStore: ...

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool = False) -> bool: ...

    def approximate_num_entries(self) -> int: ...


class KeyValueStoreLayer(StateStoreLayer, Protocol):
    """The store below a key-value wrapper: the lifecycle and the key-value operations."""

    def get(self, key: object) -> Any: ...

    def put(self, key: Any, value: Any) -> None: ...

    def put_if_absent(self, key: Any, value: Any) -> Any: ...

    def put_all(self, entries: Sequence[tuple[Any, Any]]) -> None: ...

    def delete(self, key: Any) -> Any: ...

    def range(self, from_key: Any = None, to_key: Any = None) -> Any: ...

    def reverse_range(self, from_key: Any = None, to_key: Any = None) -> Any: ...

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> Any: ...

    def all(self) -> Any: ...

    def reverse_all(self) -> Any: ...


class WrappedStateStore:
    """A state store of any kind that delegates its lifecycle to the store it wraps.

    :param wrapped: the next store down the stack.
    """

    wrapped: Any  # each kind narrows it: KeyValueStoreLayer here, Any for windows and sessions

    def __init__(self, wrapped: StateStoreLayer) -> None:
        self.wrapped = wrapped

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The store name (the inner store's)."""
        result: str = self.wrapped.name
        return result

    @property
    def persistent(self) -> bool:
        """Whether the inner store keeps data across restarts."""
        result: bool = self.wrapped.persistent
        return result

    def init(self, context: StateStoreContext, root: StateStore | None = None) -> None:
        """Initialize the layers below with ``root`` (this store when ``None``)."""
        self.wrapped.init(context, root if root is not None else self)

    def is_open(self) -> bool:
        """Whether the inner store is open."""
        result: bool = self.wrapped.is_open()
        return result

    def flush(self) -> None:
        """Flush the layers below."""
        self.wrapped.flush()

    def close(self) -> None:
        """Close the layers below."""
        self.wrapped.close()

    def inner(self) -> StateStore:
        """The innermost store of the stack."""
        result: StateStore = self.wrapped.inner()
        return result

    def set_flush_listener(self, listener: FlushListener, send_old_values: bool = False) -> bool:
        """Pass the listener to a caching layer below; ``True`` when one took it."""
        result: bool = self.wrapped.set_flush_listener(listener, send_old_values)
        return result

    def approximate_num_entries(self) -> int:
        result: int = self.wrapped.approximate_num_entries()
        return result


class WrappedKeyValueStore(WrappedStateStore):
    """A key-value store that delegates to the store it wraps.

    :param wrapped: the next store down the stack.
    """

    wrapped: KeyValueStoreLayer

    # -- key-value operations ------------------------------------------------------------------

    def get(self, key: Any) -> Any:
        return self.wrapped.get(key)

    def put(self, key: Any, value: Any) -> None:
        self.wrapped.put(key, value)

    def put_if_absent(self, key: Any, value: Any) -> Any:
        return self.wrapped.put_if_absent(key, value)

    def put_all(self, entries: Sequence[tuple[Any, Any]]) -> None:
        self.wrapped.put_all(entries)

    def delete(self, key: Any) -> Any:
        return self.wrapped.delete(key)

    def range(self, from_key: Any = None, to_key: Any = None) -> Any:
        return self.wrapped.range(from_key, to_key)

    def reverse_range(self, from_key: Any = None, to_key: Any = None) -> Any:
        return self.wrapped.reverse_range(from_key, to_key)

    def prefix_scan(self, prefix: Any, prefix_key_serde: Serde | None = None) -> Any:
        return self.wrapped.prefix_scan(prefix, prefix_key_serde)

    def all(self) -> Any:
        return self.wrapped.all()

    def reverse_all(self) -> Any:
        return self.wrapped.reverse_all()
