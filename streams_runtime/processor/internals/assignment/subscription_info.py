"""SubscriptionInfo: what one group member tells the leader when it joins.

Created by the member (``GroupMember`` in
:mod:`streams_runtime.processor.internals.group_member`) at every JoinGroup and carried as
the consumer-protocol subscription's user data; decoded by the leader's assignor. Kafka Streams'
SubscriptionInfo carries the same facts.

Fields:
  - ``process_id``: the instance (process) the member belongs to. Members with the same process id
    are one client: they share a state directory, so the assignor balances over processes first
    and never places a standby on the process that runs the active.
  - ``endpoint``: ``host:port`` of the instance's interactive-query server, or ``None``.
  - ``task_offset_sums``: for every task whose state the member has locally, the sum of its
    changelog offsets (from the checkpoint). A task the member runs as active right now is
    reported as :data:`LATEST_OFFSET` (caught up by definition). A stateless active task is also
    reported as :data:`LATEST_OFFSET`, so the leader knows who runs it (stickiness).
  - ``thread_count``: how many stream threads this member stands for (1 when each StreamThread is
    its own member, as in Kafka Streams). It weights the member in balancing.
  - ``shutdown_requested`` (version 2): the member's uncaught-exception handler answered
    SHUTDOWN_APPLICATION; the leader then tells every member to shut down (Kafka Streams'
    subscription ``errorCode``).

Versions: a subscription is encoded at the lowest version that carries its fields (1, or 2 when
``shutdown_requested``), so a leader that reads only version 1 still reads ordinary
subscriptions during a rolling upgrade; version 1 decodes with ``shutdown_requested=False``.

Invariants: every offset sum is ``>= 0`` or exactly :data:`LATEST_OFFSET`; ``thread_count >= 1``;
an endpoint, when set, is ``host:port`` with a numeric port.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streams_runtime.processor.internals.assignment.wire import (
    AssignmentProtocolError,
    decode_payload,
    encode_payload,
    task_from_wire,
)
from streams_runtime.processor.task_id import TaskId

#: Offset-sum sentinel for a task the member currently runs as active: lag 0 by definition.
LATEST_OFFSET = -2

SUBSCRIPTION_VERSION = 2
#: the first version carrying ``shutdown_requested``
SHUTDOWN_FLAG_VERSION = 2
SUPPORTED_SUBSCRIPTION_VERSIONS = range(1, SUBSCRIPTION_VERSION + 1)


def validate_endpoint(endpoint: str | None) -> None:
    """Raise ``ValueError`` unless ``endpoint`` is ``None`` or ``host:port`` with a numeric port."""
    if endpoint is None:
        return
    host, sep, port = endpoint.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"endpoint must be 'host:port' with a port in 1..65535, got {endpoint!r}")


@dataclass(frozen=True)
class SubscriptionInfo:
    """One member's subscription user data (see the module docstring for each field)."""

    process_id: str
    endpoint: str | None = None
    task_offset_sums: Mapping[TaskId, int] = field(default_factory=dict)
    thread_count: int = 1
    version: int | None = None  # None: the lowest version that carries the fields (see above)
    shutdown_requested: bool = False

    def __post_init__(self) -> None:
        version = self.version
        if version is None:
            version = SHUTDOWN_FLAG_VERSION if self.shutdown_requested else 1
            object.__setattr__(self, "version", version)
        if version not in SUPPORTED_SUBSCRIPTION_VERSIONS:
            raise ValueError(f"subscription version {version} is not supported")
        if self.shutdown_requested and version < SHUTDOWN_FLAG_VERSION:
            raise ValueError(f"shutdown_requested needs subscription version >= {SHUTDOWN_FLAG_VERSION}")
        if not self.process_id:
            raise ValueError("process_id must be a non-empty string")
        validate_endpoint(self.endpoint)
        if self.thread_count < 1:
            raise ValueError(f"thread_count must be >= 1, got {self.thread_count}")
        for task, offset_sum in self.task_offset_sums.items():
            if offset_sum < 0 and offset_sum != LATEST_OFFSET:
                raise ValueError(
                    f"offset sum of task {task} must be >= 0 or LATEST_OFFSET ({LATEST_OFFSET}), "
                    f"got {offset_sum}"
                )

    @property
    def active_tasks(self) -> frozenset[TaskId]:
        """Tasks this member runs as active now (reported as :data:`LATEST_OFFSET`)."""
        return frozenset(t for t, s in self.task_offset_sums.items() if s == LATEST_OFFSET)

    @property
    def standby_or_idle_state(self) -> frozenset[TaskId]:
        """Tasks with local state that this member does not run as active (standbys, leftovers)."""
        return frozenset(t for t, s in self.task_offset_sums.items() if s != LATEST_OFFSET)

    def encode(self) -> bytes:
        """Compact, deterministic bytes for the subscription's user data."""
        body = {
            "pid": self.process_id,
            "ep": self.endpoint,
            "threads": self.thread_count,
            "sums": {str(task): s for task, s in sorted(self.task_offset_sums.items())},
        }
        version = self.version or 1  # set by __post_init__
        if version >= SHUTDOWN_FLAG_VERSION:
            body["shutdown"] = self.shutdown_requested
        return encode_payload(version, body)

    @classmethod
    def decode(cls, data: bytes) -> SubscriptionInfo:
        """Parse user data written by :meth:`encode`.

        :raises AssignmentProtocolError: corrupt bytes, an unknown version or invalid fields.
        """
        version, body = decode_payload(data, "subscription", SUPPORTED_SUBSCRIPTION_VERSIONS)
        try:
            sums = {task_from_wire(k, "subscription"): int(v) for k, v in dict(body["sums"]).items()}
            return cls(
                process_id=str(body["pid"]),
                endpoint=body["ep"],
                task_offset_sums=sums,
                thread_count=int(body["threads"]),
                version=version,
                shutdown_requested=version >= SHUTDOWN_FLAG_VERSION and bool(body["shutdown"]),
            )
        except AssignmentProtocolError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise AssignmentProtocolError(f"invalid subscription user data: {exc!r}") from exc
