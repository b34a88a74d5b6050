"""Key layouts of window and session stores: the changelog layout and the internal ordered one.

Owner: the state side. Two layouts, for two different jobs:

Changelog layout (Kafka Streams' bytes, so a Java application can restore our changelogs and
the other way round):

* window store: ``<key><8-byte big-endian window start><4-byte big-endian seqnum>``; the seqnum
  is 0 unless the store retains duplicates.
* session store: ``<key><8-byte end><8-byte start>`` (see :mod:`streams_runtime.windowed`).

Ordered (internal) layout, used only inside the inner stores and the record cache:

* ``<escaped key><8-byte order-preserving time><...>``: the key is made prefix-free by writing
  each ``0x00`` as ``0x00 0xff`` and ending with ``0x00 0x01``; times are written as
  ``time + 2**63`` unsigned, so negative times sort before positive ones.
* Invariant: comparing two ordered keys as bytes compares ``(key, time, seqnum)`` (window) or
  ``(key, end, start)`` (session) as tuples, with keys in unsigned lexicographic order. The raw
  changelog layout does not have this property (``b"a" + time`` and ``b"aa" + time``
  interleave), which is why the stores do not keep it.
"""

from __future__ import annotations

from streams_runtime.windowed import (
    MAX_TIMESTAMP,
    session_key_from_binary,
    session_key_to_binary,
)

__all__ = [
    "MAX_SEQNUM",
    "MIN_TIMESTAMP",
    "decode_ordered_session_key",
    "decode_ordered_window_key",
    "ordered_key_prefix",
    "ordered_session_key",
    "ordered_window_key",
    "session_changelog_key",
    "split_session_changelog_key",
    "split_window_changelog_key",
    "window_changelog_key",
]

MIN_TIMESTAMP = -(2**63)
MAX_SEQNUM = 2**31 - 1
SEQNUM_SIZE = 4
_TIME_SIZE = 8
_TERMINATOR = b"\x00\x01"
_BIAS = 2**63


def window_changelog_key(key: bytes, start: int, seqnum: int = 0) -> bytes:
    """``<key><8-byte start><4-byte seqnum>``: a window store's changelog key."""
    return (
        key + int(start).to_bytes(_TIME_SIZE, "big", signed=True) + int(seqnum).to_bytes(SEQNUM_SIZE, "big")
    )


def split_window_changelog_key(data: bytes) -> tuple[bytes, int, int]:
    """``(key, start, seqnum)`` of a window store's changelog key."""
    if len(data) < _TIME_SIZE + SEQNUM_SIZE:
        raise ValueError(f"a window store key has at least 12 bytes, got {len(data)}")
    cut = len(data) - _TIME_SIZE - SEQNUM_SIZE
    start = int.from_bytes(data[cut : cut + _TIME_SIZE], "big", signed=True)
    return bytes(data[:cut]), start, int.from_bytes(data[cut + _TIME_SIZE :], "big")


def session_changelog_key(key: bytes, start: int, end: int) -> bytes:
    """``<key><8-byte end><8-byte start>``: a session store's changelog key."""
    return session_key_to_binary(key, start, end)


def split_session_changelog_key(data: bytes) -> tuple[bytes, int, int]:
    """``(key, start, end)`` of a session store's changelog key."""
    return session_key_from_binary(data)


def _time(value: int) -> bytes:
    return (int(value) + _BIAS).to_bytes(_TIME_SIZE, "big")


def _read_time(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset : offset + _TIME_SIZE], "big") - _BIAS


def ordered_key_prefix(key: bytes) -> bytes:
    """The escaped, terminated key: the prefix of every ordered store key of ``key``."""
    return key.replace(b"\x00", b"\x00\xff") + _TERMINATOR


def _split_prefix(data: bytes) -> tuple[bytes, int]:
    end = data.find(_TERMINATOR)
    if end < 0:
        raise ValueError("not an ordered store key: no key terminator")
    return data[:end].replace(b"\x00\xff", b"\x00"), end + len(_TERMINATOR)


def ordered_window_key(key: bytes, start: int, seqnum: int = 0) -> bytes:
    """The ordered layout of a window entry: sorts by ``(key, start, seqnum)``."""
    return ordered_key_prefix(key) + _time(start) + int(seqnum).to_bytes(SEQNUM_SIZE, "big")


def decode_ordered_window_key(data: bytes) -> tuple[bytes, int, int]:
    """``(key, start, seqnum)`` of an ordered window key."""
    key, offset = _split_prefix(data)
    return key, _read_time(data, offset), int.from_bytes(data[offset + _TIME_SIZE :], "big")


def ordered_session_key(key: bytes, start: int, end: int) -> bytes:
    """The ordered layout of a session: sorts by ``(key, end, start)``."""
    return ordered_key_prefix(key) + _time(end) + _time(start)


def decode_ordered_session_key(data: bytes) -> tuple[bytes, int, int]:
    """``(key, start, end)`` of an ordered session key."""
    key, offset = _split_prefix(data)
    return key, _read_time(data, offset + _TIME_SIZE), _read_time(data, offset)


def ordered_bounds(
    key_from: bytes | None, key_to: bytes | None, suffix_size: int
) -> tuple[bytes | None, bytes | None]:
    """Inclusive byte bounds covering every ordered key whose key is in ``[key_from, key_to]``."""
    lower = None if key_from is None else ordered_key_prefix(key_from)
    upper = None if key_to is None else ordered_key_prefix(key_to) + b"\xff" * suffix_size
    return lower, upper


WINDOW_SUFFIX_SIZE = _TIME_SIZE + SEQNUM_SIZE
SESSION_SUFFIX_SIZE = 2 * _TIME_SIZE
MAX_TIME = MAX_TIMESTAMP
