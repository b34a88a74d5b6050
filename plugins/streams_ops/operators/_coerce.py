"""Coercion of rendered template values (strings unless the DAG renders native objects)."""

from __future__ import annotations

from typing import Any


def as_bool(value: Any) -> bool:
    """``True``/``"true"``/``"1"``/``"yes"`` -> True; ``None``/``""``/``"false"``/``"0"`` -> False."""
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("", "false", "0", "no", "off", "none"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return bool(value)


def as_list(value: Any) -> list[str]:
    """A list as given, or a comma-separated string split; ``None``/``""`` -> []."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]
