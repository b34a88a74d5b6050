"""The versioned byte envelope shared by SubscriptionInfo and AssignmentInfo.

Owned by this module; used only by :mod:`.subscription_info` and :mod:`.assignment_info`.

Format: compact UTF-8 JSON, one object, with the integer version under ``"v"``. JSON was chosen
over a packed binary layout because the payloads are small (they ride in JoinGroup/SyncGroup
once per rebalance), debuggable with any tool, and versioned by a field rather than by offsets.

Invariants:
  - ``encode`` is deterministic (sorted keys, no spaces): equal objects give equal bytes.
  - ``decode`` never returns a payload whose version it does not understand; it raises
    :class:`AssignmentProtocolError` naming the kind, the version and the supported range.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.processor.task_id import TaskId


class AssignmentProtocolError(StreamsError, ValueError):
    """Subscription or assignment user data could not be decoded (corrupt bytes or unknown version)."""


def encode_payload(version: int, body: Mapping[str, Any]) -> bytes:
    """Serialize ``body`` with its version under ``"v"`` as compact, key-sorted JSON bytes."""
    return json.dumps({"v": version, **body}, separators=(",", ":"), sort_keys=True).encode()


def decode_payload(data: bytes, kind: str, supported: range) -> tuple[int, dict[str, Any]]:
    """Parse the envelope; return ``(version, body)``.

    :param kind: ``"subscription"`` or ``"assignment"``, for error messages.
    :param supported: the versions this build can read.
    :raises AssignmentProtocolError: on bytes that are not our JSON object or an unknown version.
    """
    if not data:
        raise AssignmentProtocolError(f"empty {kind} user data: the member does not run streams_runtime")
    try:
        body = json.loads(bytes(data).decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AssignmentProtocolError(f"corrupt {kind} user data: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("v"), int):
        raise AssignmentProtocolError(f"{kind} user data has no integer version field 'v'")
    version = body.pop("v")
    if version not in supported:
        raise AssignmentProtocolError(
            f"{kind} user data version {version} is not supported; "
            f"this build reads versions {supported.start}..{supported.stop - 1}"
        )
    return version, body


def tasks_to_wire(tasks: Iterable[TaskId]) -> list[str]:
    """Tasks as sorted ``"s_p"`` strings."""
    return [str(task) for task in sorted(tasks)]


def tasks_from_wire(values: Iterable[str], kind: str) -> frozenset[TaskId]:
    """Parse ``"s_p"`` strings; a malformed id raises :class:`AssignmentProtocolError`."""
    return frozenset(task_from_wire(value, kind) for value in values)


def task_from_wire(value: str, kind: str) -> TaskId:
    try:
        task = TaskId.parse(value)
    except (ValueError, AttributeError) as exc:
        raise AssignmentProtocolError(f"malformed task id {value!r} in {kind} user data") from exc
    if task.subtopology < 0 or task.partition < 0:
        raise AssignmentProtocolError(f"negative task id {value!r} in {kind} user data")
    return task
