"""ChangelogEndOffsets: the group leader's view of every stateful task's true changelog end.

Owned by one client's RuntimeSetup and handed to each GroupMember as its ``end_offset_sums``
provider; called on kafka-python's IO thread while this client's member leads a rebalance (so:
serialized by a lock, bounded in time, and it never raises into the rebalance -- the member falls
back to relative lags when it does). With true ends the assignor's lags are real: a standby that
fell behind is not "caught up" just because it is the best reported replica.

On Apache Kafka (any broker that is not Tansu, :mod:`streams_runtime.kafka.broker_identity`)
the end is what ListOffsets "latest" answers, with the restore consumers' isolation level (the
last stable offset under exactly_once_v2): step 1 only, as Kafka Streams does.

On the embedded Tansu (docs/decisions/0001-embedded-broker.md: its ListOffsets-latest is the last
batch's base offset + 1, so it is only used to place a probe at or before the end):
  1. list each changelog partition's offsets (log start, "latest"). The probe reads with the
     restore consumers' isolation level (``consumer_overrides``: read_committed under
     exactly_once_v2, so the end is the last stable offset, what a restore can reach; librdkafka's
     default is read_committed too). With a transaction open, Tansu answers a read_committed
     "latest" with 0 (Kafka: the last stable offset); for such a partition the read_uncommitted
     "latest" (at or past the last stable offset) is taken as the end, without a probe;
  2. assign every non-empty partition at ``latest - 1`` on one consumer (created once, kept);
  3. consume until each partition reported EOF: the EOF offset is the fetch's high watermark,
     the TRUE end; stop at the deadline and keep the best bound seen (latest, last record + 1);
     steps 2-3 are :func:`streams_runtime.kafka.offsets.read_to_end` (``best_effort``);
  4. unassign; per task, the sum over its changelog partitions of ``end - 1`` (the offset of the
     last record, the same convention as the checkpoints' offset sums, so a replica that reflects
     every record has lag 0).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from streams_runtime.kafka import clients
from streams_runtime.kafka.broker_identity import BrokerIdentity, identify_broker
from streams_runtime.kafka.client_supplier import ConsumerClient, KafkaClientSupplier
from streams_runtime.kafka.offsets import TopicPartitionKey, probe_offset, read_to_end
from streams_runtime.processor.internals.changelog_reader import RestoreConsumerOwner
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER

__all__ = ["ChangelogEndOffsets"]

log = logging.getLogger("streams_runtime.processor")

#: the whole call must stay well inside a rebalance (test sessions are 2-3 s)
DEFAULT_TIMEOUT_S = 1.5


class ChangelogEndOffsets(RestoreConsumerOwner):
    """See the module docstring.

    :param bootstrap_servers: the cluster of the changelog topics.
    :param changelog_topics: sub-topology id -> its changelog topics (partition = task partition).
    :param consumer_overrides: librdkafka settings for the probing consumer.
    :param broker: what the broker is (asked through the consumer at the first call when None).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        changelog_topics: Mapping[int, Iterable[str]],
        consumer_overrides: Mapping[str, Any] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
        broker: BrokerIdentity | None = None,
    ) -> None:
        super().__init__(bootstrap_servers, consumer_overrides, client_supplier, broker)
        self._topics = {s: tuple(sorted(t)) for s, t in changelog_topics.items()}
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._read_committed = self._overrides.get("isolation.level", "read_committed") == "read_committed"
        self._uncommitted: Any = None  # read_uncommitted twin, for Tansu's read_committed "latest" of 0
        #: seconds the last call took (for benches and logs)
        self.last_duration_s = 0.0

    def __call__(self, tasks: Iterable[Any]) -> dict[Any, int]:
        """Per task, the sum of its changelog partitions' last offsets (see the module docstring)."""
        started = time.monotonic()
        tasks = list(tasks)
        wanted = sorted(
            {(topic, t.partition) for t in tasks for topic in self._topics.get(t.subtopology, ())}
        )
        with self._lock:
            ends = self.end_offsets(wanted) if wanted else {}
        sums = {
            t: sum(max(0, ends[(topic, t.partition)] - 1) for topic in self._topics.get(t.subtopology, ()))
            for t in tasks
        }
        self.last_duration_s = time.monotonic() - started
        log.debug("changelog end offsets of %d partition(s) in %.3fs", len(wanted), self.last_duration_s)
        return sums

    def end_offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Steps 1-3: the true end offset of each partition."""
        deadline = time.monotonic() + self._timeout_s
        consumer = self._restore_consumer()
        if self._broker is None:
            self._broker = identify_broker(consumer, self._timeout_s)
        if not self._broker.is_tansu:  # ListOffsets is the end (step 1 only)
            return {
                (topic, partition): max(
                    0,
                    consumer.get_watermark_offsets(
                        clients.TopicPartition(topic, partition),
                        timeout=max(0.1, deadline - time.monotonic()),
                    )[1],
                )
                for topic, partition in partitions
            }
        ends: dict[tuple[str, int], int] = {}
        probes: dict[TopicPartitionKey, int] = {}
        # Step 1
        for topic, partition in partitions:
            listed = clients.TopicPartition(topic, partition)
            low, latest = consumer.get_watermark_offsets(
                listed, timeout=max(0.1, deadline - time.monotonic())
            )
            if self._read_committed and latest <= max(0, low):  # empty, or Tansu with a transaction open
                low, latest = self._uncommitted_().get_watermark_offsets(
                    listed, timeout=max(0.1, deadline - time.monotonic())
                )
                ends[(topic, partition)] = max(0, latest)
                continue
            ends[(topic, partition)] = max(0, latest)
            if latest > max(0, low):
                probes[(topic, partition)] = probe_offset(low, latest)
        if not probes:
            return ends
        # Steps 2-3
        read = read_to_end(
            consumer,
            probes,
            timeout=max(0.0, deadline - time.monotonic()),
            batch_size=10_000,
            best_effort=True,
        )
        for tp, end in read.items():
            ends[tp] = max(ends[tp], end)
        if time.monotonic() >= deadline:
            log.warning(
                "changelog end offsets: not every EOF within %.1fs for %s; using the best bound seen",
                self._timeout_s,
                sorted(probes),
            )
        return ends

    def _uncommitted_(self) -> ConsumerClient:
        if self._uncommitted is None:
            self._uncommitted = self._client_supplier.get_restore_consumer(
                self._bootstrap_servers, {**self._overrides, "isolation.level": "read_uncommitted"}
            )
        return self._uncommitted

    def close(self) -> None:
        with self._lock:
            consumers = (self._consumer, self._uncommitted)
            self._consumer = self._uncommitted = None
        for consumer in consumers:
            if consumer is not None:
                consumer.close()
