"""Path keys to store keys, and store results to JSON.

A key is everything after the route's fixed segments (``/stores/{store}/keys/``,
``/stores/{store}/windows/``, ``/metadata/{store}/``), percent-decoded as bytes from the raw
path (:func:`path_key`): ``%2F`` is a ``/`` of the key, and so is a literal ``/`` (``a/b`` and
``a%2Fb`` are the same key); ``?`` ``#`` ``%`` and spaces are sent as ``%3F`` ``%23`` ``%25``
``%20``; a key that is exactly ``.`` or ``..`` as ``%2E``/``%2E%2E`` (clients drop dot
segments); anything else as UTF-8 percent-escapes. The bytes are UTF-8 text for every serde but
``Serdes.Bytes`` (which takes them as they are). The text is converted with the store's key serde: text for
``Serdes.String``, an integer in range for ``Serdes.Integer``/``Serdes.Long``, a float for
``Serdes.Double``, a JSON document for ``Serdes.Json``, UTF-8 bytes for ``Serdes.Bytes``; for any
other serde, the text itself is tried and must serialize. A key that does not convert raises
:class:`MalformedKeyError` (the API answers 400 naming the serde).

Results: ``ValueAndTimestamp`` -> ``{"value", "timestamp"}``, ``Windowed`` -> ``{"key", "start",
"end"}``, bytes -> text when UTF-8 else base64 under ``{"base64": ...}``, anything else as JSON if
it can be, else its ``str``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor

from streams_runtime.config import SerdeLike

_INT_BOUNDS = {"Serdes.Integer": 32, "Serdes.Long": 64}


class KeyConvertor(Convertor[str]):
    """``{key:anykey}``: the rest of the path, any characters (the ``path`` convertor's ``.*``
    stops at a newline, so a key holding ``%0A`` would not even reach its route)."""

    regex = "(?s:.*)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anykey", KeyConvertor())


class MalformedKeyError(ValueError):
    """The path key does not convert to the store's key type."""


def path_key(scope: Mapping[str, Any], route: tuple[bytes | None, ...], decoded: str) -> bytes:
    """The key bytes of a key route: the raw path after the ``route`` segments (``(b"stores",
    None, b"keys")``-like, None for the store segment), percent-decoded; ``decoded`` (the router's
    key, already decoded) when the raw path is missing or shaped otherwise."""
    raw = scope.get("raw_path")
    parts = raw.split(b"/") if raw else []
    if (
        len(parts) > len(route)
        and not parts[0]
        and all(
            want is None or unquote_to_bytes(got) == want for want, got in zip(route, parts[1:], strict=False)
        )
    ):
        return unquote_to_bytes(b"/".join(parts[len(route) + 1 :]))
    return decoded.encode("utf-8", errors="surrogateescape")


def parse_key(given: str | bytes, serde: SerdeLike) -> Any:
    """``given`` (text, or key bytes from :func:`path_key`) as a key of a store whose key serde is
    ``serde`` (module docstring)."""
    name = getattr(serde, "name", None) or type(serde).__name__
    if isinstance(given, bytes):
        if name == "Serdes.Bytes":
            return given
        try:
            text = given.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedKeyError(
                f"key {given!r} is not UTF-8 text, which the store's key serde {name} needs: {exc}"
            ) from exc
    else:
        text = given
    try:
        if name in _INT_BOUNDS:
            value = int(text)
            bits = _INT_BOUNDS[name]
            if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
                raise ValueError(f"out of the {bits}-bit range")
            return value
        if name == "Serdes.Double":
            return float(text)
        if name == "Serdes.Json":
            return json.loads(text)
        if name == "Serdes.Bytes":
            return text.encode()
        if name == "Serdes.String":
            return text
        serde.serialize("query", text)  # an unknown serde: the text must at least serialize
        return text
    except (ValueError, TypeError, OverflowError) as exc:
        raise MalformedKeyError(
            f"key {text!r} is not a valid key for the store's key serde {name}: {exc}"
        ) from exc
    except Exception as exc:  # a custom serde's own error
        raise MalformedKeyError(
            f"key {text!r} is not a valid key for the store's key serde {name}: {exc}"
        ) from exc


def to_json(value: Any) -> Any:
    """A JSON-ready form of a store key or value (module docstring)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return raw.decode()
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode()}
    if hasattr(value, "timestamp") and hasattr(value, "value") and not isinstance(value, dict):
        return {"value": to_json(value.value), "timestamp": value.timestamp}
    if hasattr(value, "window") and hasattr(value, "key"):
        return {"key": to_json(value.key), "start": value.window.start, "end": value.window.end}
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(v) for v in value]
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
