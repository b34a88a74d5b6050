"""Adapting user functions: value mappers may take ``(value)`` or ``(key, value)``.

Kafka Streams tells ValueMapper from ValueMapperWithKey by type; Python tells them by arity,
decided once at topology-build time (never per record).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def positional_arity(fn: Callable[..., Any]) -> int | None:
    """Number of positional parameters ``fn`` accepts (None when unknown or variadic)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    count = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            count += 1
    return count


def with_key(fn: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """``fn`` as a ``(key, value)`` function: unless it takes two positional arguments (or ``*args``),
    it is given the value only (builtins such as ``str`` included)."""
    if not callable(fn):
        raise TypeError(f"expected a function, got {fn!r}")
    arity = positional_arity(fn)
    if arity == 2:
        return fn
    if arity is None:
        try:
            params = inspect.signature(fn).parameters.values()
            if any(p.kind is p.VAR_POSITIONAL for p in params):
                return fn  # (*args): give it (key, value)
        except (TypeError, ValueError):
            pass  # a builtin such as str or int: a value mapper

    def value_mapper(key: object, value: object) -> object:
        return fn(value)

    value_mapper.value_only = fn  # type: ignore[attr-defined]  # processors may call fn(value)
    return value_mapper


def value_only(fn: Callable[[Any, Any], Any]) -> Callable[[Any], Any] | None:
    """The one-argument function that :func:`with_key` adapted into ``fn``, or None."""
    inner: Callable[[Any], Any] | None = getattr(fn, "value_only", None)
    return inner


def check_callable(fn: object, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"{what} must be callable, got {fn!r}")
