"""Serdes: turning keys and values into bytes and back.

Owner: the state/serde side. Sources, sinks and the metered stores call a serde through
:func:`serialize_or_raise` / :func:`deserialize_or_raise`, which supply the topic and the side
(key or value) and wrap any failure into :class:`~streams_runtime.errors.SerializationError`.
A serde itself may raise anything.

Invariants:

* ``None`` maps to ``None`` in both directions for every serde, without calling user code:
  a ``None`` value is a tombstone and must survive a round trip.
* Wire formats match Kafka's standard serdes, so topics are readable by Java clients:
  Integer is 4-byte big-endian signed, Long 8-byte big-endian signed, Double 8-byte IEEE 754
  big-endian, String UTF-8, Json compact UTF-8 JSON.
"""

from __future__ import annotations

import functools
import json
import operator
import struct
from collections.abc import Callable
from typing import Any

import orjson

from streams_runtime.errors import SerializationError, StreamsError

__all__ = ["Serde", "Serdes", "deserialize_or_raise", "serialize_or_raise"]

_SIDES = ("key", "value")


class Serde:
    """Base class of every serde: ``serialize(topic, data)`` and ``deserialize(topic, data)``.

    Subclasses implement :meth:`_serialize` and :meth:`_deserialize` for non-``None`` data; this
    class handles the ``None`` <-> ``None`` tombstone rule.

    :param name: the name used in error messages and ``repr`` (e.g. ``"Serdes.Long"``).
    """

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        """The serde's name, used in error messages."""
        return self._name

    def serialize(self, topic: str, data: object) -> bytes | None:
        """Return the bytes of ``data`` (``None`` for ``None``).

        :param topic: the topic the bytes are written to (serdes may ignore it).
        :param data: the object to serialize.
        """
        if data is None:
            return None
        return self._serialize(topic, data)

    def deserialize(self, topic: str, data: bytes | None) -> Any:
        """Return the object encoded by ``data`` (``None`` for ``None``).

        :param topic: the topic the bytes were read from (serdes may ignore it).
        :param data: the bytes to decode.
        """
        if data is None:
            return None
        return self._deserialize(topic, data)

    def _serialize(self, topic: str, data: Any) -> bytes:
        raise NotImplementedError

    def _deserialize(self, topic: str, data: bytes) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Serde {self._name}>"


_utf8_decode: Callable[[bytes], str] = bytes.decode  # UTF-8, strict: what data.decode("utf-8") does
_utf8_encode: Callable[[str], bytes] = str.encode
#: ``bytes`` in, the same object out; anything else but a ``bytes`` subclass raises TypeError
_same_bytes: Callable[[bytes], bytes] = bytes.__bytes__


class _OneCallSerde(Serde):
    """A serde whose common case is one C call (no Python frame beyond ``serialize`` itself).

    ``serialize`` of an instance of exactly :attr:`encodes` is ``encoder(data)`` and
    ``deserialize`` of ``bytes`` is ``decoder(data)``; ``None`` is ``None``; anything else, and
    anything the C call refuses, goes to the general rule (``_serialize`` / ``_deserialize``),
    which gives the serde's result or its error. Subclasses set the three attributes on the
    instance (an instance attribute is read faster than a class attribute on the hot path).
    """

    encodes: type
    encoder: Callable[[Any], bytes]
    decoder: Callable[[bytes], Any]

    def serialize(self, topic: str, data: object) -> bytes | None:
        if type(data) is self.encodes:
            try:
                return self.encoder(data)
            except Exception:  # the general rule decides (and raises its own error)
                return self._serialize(topic, data)
        if data is None:
            return None
        return self._serialize(topic, data)

    def deserialize(self, topic: str, data: bytes | None) -> Any:
        if type(data) is bytes:
            try:
                return self.decoder(data)
            except Exception:
                return self._deserialize(topic, data)
        if data is None:
            return None
        return self._deserialize(topic, data)


class _StringSerde(_OneCallSerde):
    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__("Serdes.String")
        self._encoding = encoding
        self.encodes = str
        utf8 = encoding == "utf-8"
        self.encoder = _utf8_encode if utf8 else operator.methodcaller("encode", encoding)
        self.decoder = _utf8_decode if utf8 else operator.methodcaller("decode", encoding)

    @property
    def encoding(self) -> str:
        """The text encoding of the bytes (``"utf-8"`` unless given)."""
        return self._encoding

    def _serialize(self, topic: str, data: Any) -> bytes:
        if not isinstance(data, str):
            raise TypeError(f"expected str, got {type(data).__name__}")
        return data.encode(self._encoding)

    def _deserialize(self, topic: str, data: bytes) -> str:
        return bytes(data).decode(self._encoding)


class _BytesSerde(_OneCallSerde):
    def __init__(self) -> None:
        super().__init__("Serdes.Bytes")
        self.encodes = bytes
        self.encoder = self.decoder = _same_bytes

    def _serialize(self, topic: str, data: Any) -> bytes:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, got {type(data).__name__}")
        return bytes(data)

    def _deserialize(self, topic: str, data: bytes) -> bytes:
        return bytes(data)


class _FixedWidthIntSerde(_OneCallSerde):
    """Big-endian signed integers of a fixed width (4 bytes: Integer, 8 bytes: Long)."""

    def __init__(self, name: str, width: int) -> None:
        super().__init__(name)
        self._width = width
        self.encodes = int
        self.encoder = struct.Struct(">q" if width == 8 else ">i").pack  # range errors: see _serialize

    @property
    def width(self) -> int:
        """The number of bytes of every serialized value."""
        return self._width

    deserialize = Serde.deserialize  # no one-call decoder: the width is checked first (_deserialize)

    def _serialize(self, topic: str, data: Any) -> bytes:
        if isinstance(data, bool) or not isinstance(data, int):
            raise TypeError(f"expected int, got {type(data).__name__}")
        return data.to_bytes(self._width, "big", signed=True)

    def _deserialize(self, topic: str, data: bytes) -> int:
        if len(data) != self._width:
            raise ValueError(f"expected {self._width} bytes, got {len(data)}")
        return int.from_bytes(data, "big", signed=True)


class _DoubleSerde(Serde):
    _FORMAT = struct.Struct(">d")

    def __init__(self) -> None:
        super().__init__("Serdes.Double")

    def _serialize(self, topic: str, data: Any) -> bytes:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise TypeError(f"expected float, got {type(data).__name__}")
        return self._FORMAT.pack(float(data))

    def _deserialize(self, topic: str, data: bytes) -> float:
        if len(data) != 8:
            raise ValueError(f"expected 8 bytes, got {len(data)}")
        value: float = self._FORMAT.unpack(data)[0]
        return value


# What json.dumps(data, separators=(",", ":"), ensure_ascii=False) builds on every call.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# orjson writes compact UTF-8 like the encoder above; keys that are not strings (ints, floats,
# bools, None) become strings as the standard library does.
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS


class _JsonSerde(Serde):
    """Compact UTF-8 JSON, on orjson.

    What orjson refuses (integers wider than 64 bits, NaN and infinities on input, objects it
    cannot encode) goes through the standard library's ``json`` instead, so the values accepted
    and the error raised for a bad one are the standard library's.
    """

    def __init__(self) -> None:
        super().__init__("Serdes.Json")

    # serialize/deserialize: orjson in one frame (the hot path of JSON topics and stores);
    # the same results and fallbacks as _serialize/_deserialize.
    def serialize(self, topic: str, data: object) -> bytes | None:
        if data is None:
            return None
        try:
            return _orjson_dumps(data, option=_ORJSON_OPTIONS)
        except TypeError:
            return self._serialize(topic, data)

    def deserialize(self, topic: str, data: bytes | None) -> Any:
        if data is None:
            return None
        try:
            return _orjson_loads(data)
        except ValueError:
            return self._deserialize(topic, data)

    def _serialize(self, topic: str, data: Any) -> bytes:
        try:
            return _orjson_dumps(data, option=_ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError: decide (and explain) with the standard library
            return _JSON_ENCODER.encode(data).encode("utf-8")

    def _deserialize(self, topic: str, data: bytes) -> Any:
        try:
            return _orjson_loads(data)
        except ValueError:  # orjson.JSONDecodeError: decide (and explain) with the standard library
            return json.loads(bytes(data).decode("utf-8"))


_orjson_dumps = orjson.dumps
_orjson_loads = orjson.loads


class _FunctionSerde(Serde):
    def __init__(
        self,
        serializer: Callable[[Any], bytes],
        deserializer: Callable[[bytes], Any],
        name: str,
    ) -> None:
        super().__init__(name)
        self._serializer = serializer
        self._deserializer = deserializer

    def _serialize(self, topic: str, data: Any) -> bytes:
        return self._serializer(data)

    def _deserialize(self, topic: str, data: bytes) -> Any:
        return self._deserializer(data)


class Serdes:
    """Factory of the standard serdes (the Kafka Streams ``Serdes`` class, Pythonic spelling)."""

    @staticmethod
    def String(encoding: str = "utf-8") -> Serde:  # noqa: N802 - Kafka Streams' name
        """Text, UTF-8 by default."""
        return _StringSerde(encoding)

    @staticmethod
    def Bytes() -> Serde:  # noqa: N802
        """Raw bytes, passed through (``bytearray``/``memoryview`` become ``bytes``)."""
        return _BytesSerde()

    @staticmethod
    def Integer() -> Serde:  # noqa: N802
        """4-byte big-endian signed integer (Java ``int``)."""
        return _FixedWidthIntSerde("Serdes.Integer", 4)

    @staticmethod
    def Long() -> Serde:  # noqa: N802
        """8-byte big-endian signed integer (Java ``long``)."""
        return _FixedWidthIntSerde("Serdes.Long", 8)

    @staticmethod
    def Double() -> Serde:  # noqa: N802
        """8-byte IEEE 754 big-endian float (Java ``double``)."""
        return _DoubleSerde()

    @staticmethod
    def Json() -> Serde:  # noqa: N802
        """Compact UTF-8 JSON of any ``json``-serializable object."""
        return _JsonSerde()

    @staticmethod
    def from_functions(
        serializer: Callable[[Any], bytes],
        deserializer: Callable[[bytes], Any],
        *,
        name: str = "Serdes.from_functions",
    ) -> Serde:
        """A serde made of two plain functions of the data (the topic is not passed to them).

        The functions are never called with ``None``: tombstones pass through as ``None``.

        :param serializer: object -> bytes.
        :param deserializer: bytes -> object.
        :param name: the name shown in error messages.
        """
        if not callable(serializer) or not callable(deserializer):
            raise TypeError("serializer and deserializer must both be callable")
        return _FunctionSerde(serializer, deserializer, name)


def _check_side(side: str) -> None:
    if side not in _SIDES:
        raise ValueError(f"side must be one of {_SIDES}, got {side!r}")


def is_long_serde(serde: object) -> bool:
    """Whether ``serde`` is exactly ``Serdes.Long()`` (8-byte big-endian signed integers), so
    a caller may pack such values itself with the same bytes and checks."""
    return type(serde) is _FixedWidthIntSerde and serde.width == 8


def bytes_decoder(serde: object) -> Callable[[bytes], Any] | None:
    """A one-argument C function that gives what ``serde.deserialize(topic, data)`` gives for
    any ``data`` of type ``bytes`` it accepts, and raises for the rest (where the serde takes its
    general path), or None. A hot path calls it for non-None bytes and falls back to the serde
    itself when it raises, so the results and errors are the serde's: ``Serdes.Json()`` is
    ``orjson.loads`` (the serde tries it first), ``Serdes.String()`` in UTF-8 ``bytes.decode``,
    ``Serdes.Bytes()`` ``bytes.__bytes__`` (the same object back)."""
    if type(serde) is _JsonSerde:
        return _orjson_loads
    if type(serde) is _BytesSerde:
        return _same_bytes
    if type(serde) is _StringSerde and serde.encoding == "utf-8":
        return _utf8_decode
    return None


def bytes_encoder(serde: object) -> Callable[[Any], bytes] | None:
    """The serializing side of :func:`bytes_decoder`: a one-argument C function equal to
    ``serde.serialize(topic, data)`` for the non-None ``data`` it accepts, raising for the rest
    (the caller then asks the serde), or None. ``Serdes.Json()``: orjson with the serde's
    options; ``Serdes.String()`` in UTF-8: ``str.encode`` (a ``str`` only); ``Serdes.Bytes()``:
    ``bytes.__bytes__`` (``bytes`` only, the same object back: a ``bytearray`` takes the serde)."""
    if type(serde) is _JsonSerde:
        return _orjson_dumps_with_options
    if type(serde) is _BytesSerde:
        return _same_bytes
    if type(serde) is _StringSerde and serde.encoding == "utf-8":
        return _utf8_encode
    return None


_orjson_dumps_with_options = functools.partial(orjson.dumps, option=_ORJSON_OPTIONS)


def is_string_serde(serde: object) -> bool:
    """Whether ``serde`` is exactly ``Serdes.String()``: the same ``str`` always gives the same
    bytes, so a caller may reuse the bytes of a key it serialized a moment ago."""
    return type(serde) is _StringSerde


def serialize_or_raise(serde: Serde, topic: str, side: str, data: object) -> bytes | None:
    """Serialize ``data`` with ``serde``; any failure becomes a :class:`SerializationError`.

    :param serde: the serde to use.
    :param topic: the topic the bytes are for (named in the error).
    :param side: ``"key"`` or ``"value"`` (named in the error).
    :param data: the object to serialize.
    :raises SerializationError: naming topic, side and serde, with the serde's error as cause.
    """
    if side != "key" and side != "value":
        _check_side(side)
    try:
        return serde.serialize(topic, data)
    except Exception as exc:  # the serde may raise anything: wrap it with where it happened
        raise SerializationError(
            topic=topic, side=side, serde=_serde_name(serde), cause=exc, operation="serialize"
        ) from exc


def deserialize_or_raise(serde: Serde, topic: str, side: str, data: bytes | None) -> Any:
    """Deserialize ``data`` with ``serde``; any failure becomes a :class:`SerializationError`.

    :param serde: the serde to use.
    :param topic: the topic the bytes came from (named in the error).
    :param side: ``"key"`` or ``"value"`` (named in the error).
    :param data: the bytes to decode.
    :raises SerializationError: naming topic, side and serde, with the serde's error as cause.
    """
    if side != "key" and side != "value":
        _check_side(side)
    try:
        return serde.deserialize(topic, data)
    except Exception as exc:
        raise SerializationError(
            topic=topic, side=side, serde=_serde_name(serde), cause=exc, operation="deserialize"
        ) from exc


def _serde_name(serde: object) -> str:
    return getattr(serde, "name", None) or type(serde).__name__


def bound_serde(inner: Serde | None, owner: str) -> Serde:
    """The inner serde of a wrapping serde once bound: the DSL makes some wrappers (windowed
    keys, changes) before the app's default serde is known, and a task binds it at init."""
    if inner is None:
        raise StreamsError(f"{owner}: its inner serde is not bound (a task binds the default at init)")
    return inner
