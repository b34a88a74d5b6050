"""Fixtures for the scenario tests (replays of Kafka Streams' own DSL tests through our driver)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .support import Capture, streams_config


@pytest.fixture
def make_config(tmp_path) -> Callable[..., dict[str, Any]]:
    """Factory: ``make_config(key_serde, value_serde, **overrides)`` with a per-test state directory."""

    def make(key_serde=None, value_serde=None, **overrides: Any) -> dict[str, Any]:
        return streams_config(tmp_path / "state", key_serde, value_serde, **overrides)

    return make


@pytest.fixture
def capture() -> Capture:
    """A fresh capturing processor supplier (Kafka Streams' MockApiProcessorSupplier)."""
    return Capture()
