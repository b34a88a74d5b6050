"""What the demo produced and what the workers report, and the table that compares them.

- :class:`Ledger`: the expected per-user count and total (in cents) of every payment in the
  input topic, built from what was already there (a reused broker) plus what the demo produces;
- :class:`ResultsView`: the latest ``{"count", "total_cents"}`` per user read from the results
  topic (the app's output), refreshed by :meth:`ResultsView.poll`;
- :func:`table`: the per-user table printed live and at the end.

Invariant checked at the end of a bounded run: for every user, the latest result equals the
ledger (count and cents). A result above the ledger means a payment was counted twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.kafka.clients import TopicPartition, create_consumer
from streams_runtime.kafka.offsets import EOF_OVERRIDES, scan_to_eof

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class Ledger:
    """Expected results: user -> payments and cents."""

    counts: dict[str, int] = field(default_factory=dict)
    cents: dict[str, int] = field(default_factory=dict)

    def add(self, payment: Mapping[str, Any]) -> None:
        user = payment["user"]
        self.counts[user] = self.counts.get(user, 0) + 1
        self.cents[user] = self.cents.get(user, 0) + round(payment["amount"] * 100)

    @property
    def payments(self) -> int:
        return sum(self.counts.values())

    def expected(self) -> dict[str, dict[str, int]]:
        return {u: {"count": n, "total_cents": self.cents[u]} for u, n in self.counts.items()}


def read_payments(
    bootstrap_servers: str, topic: str, partitions: int, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Every payment already in ``topic``, read to partition EOF (docs/decisions/0001-embedded-broker.md:
    ListOffsets is not trusted).

    :raises PartitionReadError: when a partition cannot be read to its end within ``timeout``."""
    group = f"demo-ledger-{time.monotonic_ns()}"
    consumer = create_consumer(bootstrap_servers, group, EOF_OVERRIDES, low_latency=True)
    seen: list[dict[str, Any]] = []
    try:
        scan_to_eof(
            consumer,
            topic,
            dict.fromkeys(range(partitions), 0),
            lambda m: seen.append(json.loads(m.value())),
            timeout,
        )
    finally:
        consumer.close()
    return seen


class ResultsView:
    """The latest result per user on the results topic (read from the beginning).

    Read live, as the results are written. On the embedded broker a live consumer can skip a
    batch of a partition that two producers (the two workers) write at once: the batch is in the
    log, but the consumer's position has moved past it (docs/decisions/0001-embedded-broker.md).
    :meth:`resync` re-reads the topic to each partition's true end with a fresh consumer, which
    finds such a batch; the demo calls it when the results stop changing while they still differ
    from the ledger.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        partitions: int,
        consumer_factory: Callable[..., Any] = create_consumer,
    ) -> None:
        self._bootstrap, self._topic, self._partitions = bootstrap_servers, topic, partitions
        self._factory = consumer_factory
        group = f"demo-results-{time.monotonic_ns()}"
        self._consumer = consumer_factory(bootstrap_servers, group, low_latency=True)
        self._consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.latest: dict[str, dict[str, int]] = {}
        self.updates = 0
        self.resyncs = 0

    def _apply(self, msg: Any, latest: dict[str, dict[str, int]]) -> bool:
        key, value = msg.key(), msg.value()
        if key is None or value is None:
            return False
        latest[key.decode()] = json.loads(value)
        return True

    def poll(self, timeout: float = 0.2) -> int:
        """Read what arrived; return how many result records came."""
        n = 0
        for msg in self._consumer.consume(num_messages=1000, timeout=timeout):
            if not msg.error() and self._apply(msg, self.latest):
                n += 1
        self.updates += n
        return n

    def resync(self, timeout: float = 30.0) -> None:
        """Replace :attr:`latest` by a fresh read of the whole topic to each partition's true end,
        and go on reading live from those ends.

        :raises PartitionReadError: when a partition cannot be read to its end within ``timeout``."""
        group = f"demo-results-resync-{time.monotonic_ns()}"
        consumer = self._factory(self._bootstrap, group, EOF_OVERRIDES, low_latency=True)
        latest: dict[str, dict[str, int]] = {}

        def on_record(msg: object) -> None:
            self._apply(msg, latest)

        try:
            ends = scan_to_eof(
                consumer, self._topic, dict.fromkeys(range(self._partitions), 0), on_record, timeout
            )
        finally:
            consumer.close()
        self.latest = latest
        self._consumer.assign([TopicPartition(self._topic, p, o) for p, o in ends.items()])
        self.resyncs += 1

    def reflected(self) -> int:
        """Payments the results account for so far."""
        return sum(r["count"] for r in self.latest.values())

    def compare(self, ledger: Ledger) -> tuple[bool, list[str]]:
        """:func:`compare` of the latest results with ``ledger``."""
        return compare(self.latest, ledger)

    def close(self) -> None:
        self._consumer.close()


def compare(latest: Mapping[str, Mapping[str, int]], ledger: Ledger) -> tuple[bool, list[str]]:
    """(every user's result equals the ledger, descriptions of users counted above the ledger)."""
    expected = ledger.expected()
    over = [
        f"{u}: {r['count']} counted, {expected.get(u, {}).get('count', 0)} produced"
        for u, r in latest.items()
        if r["count"] > expected.get(u, {}).get("count", 0)
    ]
    return dict(latest) == expected, over


def table(results: Mapping[str, Mapping[str, int]], users: Iterable[str] | None = None) -> str:
    """The per-user table: payments and total spend."""
    rows = [f"  {'user':<8} {'payments':>8} {'total':>10}"]
    for user in sorted(users if users is not None else results):
        r = results.get(user, {"count": 0, "total_cents": 0})
        rows.append(f"  {user:<8} {r['count']:>8} {r['total_cents'] / 100:>10.2f}")
    return "\n".join(rows)
