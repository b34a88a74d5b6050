"""A StateStoreContext test double and factory fixtures for the state store tests.

:class:`FakeStateStoreContext` records what stores do to the runtime: registrations
(``registered``) and changelog writes (``logged``), and lets a test set the current record
context (``at(timestamp)``).
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any

import pytest

from streams_runtime.state.internals.record_cache import ThreadCache


@dataclass(frozen=True)
class FakeRecordContext:
    timestamp: int
    topic: str | None = "input"
    partition: int = 0
    offset: int = 0
    headers: Any = None


@dataclass(frozen=True)
class LoggedChange:
    store_name: str
    key: bytes
    value: bytes | None
    timestamp: int
    headers: Any = None


@dataclass(frozen=True)
class Registration:
    store: Any
    restore_callback: Any
    changelog_topic: str | None


class FakeStateStoreContext:
    """Implements the StateStoreContext protocol in memory, recording every call."""

    def __init__(
        self,
        state_dir: pathlib.Path,
        *,
        cache: ThreadCache | None = None,
        application_id: str = "app",
        task_id: str = "0_0",
        app_configs: dict[str, Any] | None = None,
    ) -> None:
        self.application_id = application_id
        self.task_id = task_id
        self.state_dir = state_dir
        self.app_configs = dict(app_configs or {})
        self.metrics = None
        self.registered: list[Registration] = []
        self.logged: list[LoggedChange] = []
        self._cache = cache
        self._record_context: FakeRecordContext | None = FakeRecordContext(timestamp=0)

    def register(self, store: Any, restore_callback: Any, *, changelog_topic: str | None) -> None:
        self.registered.append(Registration(store, restore_callback, changelog_topic))

    def log_change(
        self, store_name: str, key: bytes, value: bytes | None, timestamp: int, headers: Any = None
    ) -> None:
        self.logged.append(LoggedChange(store_name, key, value, timestamp, headers))

    def record_context(self) -> FakeRecordContext | None:
        return self._record_context

    def set_record_context(self, record_context: FakeRecordContext | None) -> None:
        self._record_context = record_context

    def cache(self) -> ThreadCache | None:
        return self._cache

    def at(self, timestamp: int, *, offset: int = 0, topic: str = "input") -> FakeStateStoreContext:
        """Make ``timestamp`` the current record's timestamp; returns self for chaining."""
        self._record_context = FakeRecordContext(timestamp=timestamp, offset=offset, topic=topic)
        return self


class FlushListenerStub:
    """Records flush listener calls as ``(key, new, old, timestamp)`` tuples."""

    def __init__(self, context: FakeStateStoreContext | None = None) -> None:
        self.calls: list[tuple[Any, Any, Any, Any]] = []
        self.contexts_seen: list[Any] = []
        self._context = context

    def __call__(self, key: Any, new: Any, old: Any, timestamp: Any) -> None:
        self.calls.append((key, new, old, timestamp))
        if self._context is not None:
            self.contexts_seen.append(self._context.record_context())


@pytest.fixture
def make_context(tmp_path: pathlib.Path):
    """Factory: ``make_context(cache_bytes=None, **kwargs)`` -> FakeStateStoreContext."""

    def make(cache_bytes: int | None = None, *, cache: ThreadCache | None = None, **kwargs: Any):
        if cache is None and cache_bytes is not None:
            cache = ThreadCache(cache_bytes)
        return FakeStateStoreContext(tmp_path / "state", cache=cache, **kwargs)

    return make


@pytest.fixture
def context(make_context) -> FakeStateStoreContext:
    """A context without a record cache."""
    return make_context()


@pytest.fixture
def flush_listener_factory():
    """Factory: ``flush_listener_factory(context=None)`` -> FlushListenerStub."""
    return FlushListenerStub
