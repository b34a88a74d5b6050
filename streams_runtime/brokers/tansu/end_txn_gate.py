"""One transaction end at a time among the producers of this host that share a loopback broker.

Why: the embedded broker (Tansu 0.6) completes a transaction (moves the last stable offset,
commits its input offsets) only when every transaction overlapping it on a partition is prepared,
and it completes them together. Its EndTxn marks the transaction prepared first and writes the
COMMIT/ABORT markers after; when another producer's EndTxn completes the group while those markers
are still being written, the markers written after that moment stay attached to a transaction
that is already complete. Such a leftover is neither open nor prepared, so every later transaction
writing those partitions waits on it, and waits for good once its producer writes no more in that
epoch (an idle task, a closed or killed instance): the later transactions' input offsets never
show as committed and their tasks stop at commit step 5 (measured: the exactly-once chaos test
stalled in about one run in six, always on the tasks that committed last). Two EndTxn never
running at once removes the race. ``init_transactions`` is gated as well: fencing a zombie ends
its open transaction through the same code path.

Scope: the gate is a process-wide lock plus an ``flock`` on a file named after the bootstrap
servers in the temp directory, so it serializes every stream thread of every instance on this
host (the embedded broker's instances all run on its host). It is on only when the broker says it
is Tansu (:mod:`streams_runtime.kafka.broker_identity`); Apache Kafka's transaction coordinator
has no such race, and there the gate is off whatever the address. Task creation feels it most on
Tansu: the ``init_transactions`` calls that a rebalance runs in parallel for new tasks run one
after another.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["EndTxnGate", "shared_end_txn_gate"]


class EndTxnGate:
    """``with gate.held():`` runs its block while no other gated block of the same broker runs on this
    host (any thread, any process). A disabled gate runs it at once and makes no file."""

    def __init__(self, bootstrap_servers: str, *, enabled: bool, directory: str | None = None) -> None:
        self.enabled = enabled
        digest = hashlib.sha256(bootstrap_servers.encode()).hexdigest()[:16]
        self.path = Path(directory or tempfile.gettempdir()) / f"streams-runtime-end-txn-{digest}.lock"
        self._lock = threading.Lock()
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)


_GATES: dict[str, EndTxnGate] = {}
_GATES_LOCK = threading.Lock()


def shared_end_txn_gate(bootstrap_servers: str, *, enabled: bool) -> EndTxnGate:
    """The process's gate for ``bootstrap_servers`` (one per broker, shared by every producer);
    ``enabled``: the broker is the embedded Tansu (the first caller's answer stands)."""
    with _GATES_LOCK:
        gate = _GATES.get(bootstrap_servers)
        if gate is None:
            gate = _GATES[bootstrap_servers] = EndTxnGate(bootstrap_servers, enabled=enabled)
        return gate
