"""InMemoryClientSupplier: a KafkaClientSupplier whose clients keep everything in memory.

Give it to ``KafkaStreams(topology, config, client_supplier=...)`` (or to a ``RuntimeSetup``)
and the stream threads run without a broker: topics, committed offsets and transactions live in
one :class:`InMemoryCluster` (:attr:`InMemoryClientSupplier.cluster`), group membership in one
:class:`InMemoryGroup` (:attr:`InMemoryClientSupplier.group`). A test writes input with
:meth:`InMemoryCluster.append`, reads output with :meth:`InMemoryCluster.records`, checks
:meth:`InMemoryCluster.committed`, controls assignments through the group, and injects failures
through :attr:`InMemoryCluster.faults` or fences a transactional id with
:meth:`InMemoryCluster.fence`. Every client made is kept (:attr:`consumers`, :attr:`producers`,
:attr:`coordination_consumers`) for the test to inspect.

Public test tooling (beside the ``TopologyTestDriver``): the driver tests a topology's logic
record by record; this supplier tests the runtime around it (the thread loop, rebalances,
commits, failure handling) or an application's behaviour across them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Unpack

from streams_runtime.kafka.membership import CoordinationSettings
from streams_runtime.testing.in_memory_clients import InMemoryAdmin, InMemoryConsumer, InMemoryProducer
from streams_runtime.testing.in_memory_cluster import InMemoryCluster
from streams_runtime.testing.in_memory_group import InMemoryCoordinationConsumer, InMemoryGroup

__all__ = ["InMemoryClientSupplier"]


class InMemoryClientSupplier:
    """See the module docstring.

    :param auto_assign: the group assigns with the runtime's assignor (True) or only when the
        test calls :meth:`InMemoryGroup.assign` (False).
    """

    def __init__(self, cluster: InMemoryCluster | None = None, *, auto_assign: bool = True) -> None:
        self.cluster = cluster or InMemoryCluster()
        self.group = InMemoryGroup(self.cluster, auto_assign=auto_assign)
        self._lock = threading.Lock()
        #: every consumer made, main, restore and global (see :attr:`InMemoryConsumer.role`)
        self.consumers: list[InMemoryConsumer] = []
        self.producers: list[InMemoryProducer] = []
        self.coordination_consumers: list[InMemoryCoordinationConsumer] = []

    def _keep(self, consumer: InMemoryConsumer) -> InMemoryConsumer:
        with self._lock:
            self.consumers.append(consumer)
        return consumer

    def get_consumer(
        self,
        bootstrap_servers: str,
        group_id: str,
        overrides: Mapping[str, Any] | None = None,
        *,
        low_latency: bool = False,
        read_committed: bool | None = None,
    ) -> InMemoryConsumer:
        config: dict[str, Any] = {"group.id": group_id, **(overrides or {})}
        if read_committed is not None:
            config["isolation.level"] = "read_committed" if read_committed else "read_uncommitted"
        return self._keep(InMemoryConsumer(self.cluster, config, "consumer"))

    def get_restore_consumer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> InMemoryConsumer:
        config = {"group.id": "streams-runtime-restore", "enable.partition.eof": True, **(overrides or {})}
        return self._keep(InMemoryConsumer(self.cluster, config, "restore"))

    def get_global_consumer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> InMemoryConsumer:
        config = {"group.id": "streams-runtime-global", "enable.partition.eof": True, **(overrides or {})}
        return self._keep(InMemoryConsumer(self.cluster, config, "global"))

    def get_producer(
        self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None
    ) -> InMemoryProducer:
        producer = InMemoryProducer(self.cluster, overrides or {})
        with self._lock:
            self.producers.append(producer)
        return producer

    def get_admin(self, bootstrap_servers: str, overrides: Mapping[str, Any] | None = None) -> InMemoryAdmin:
        return InMemoryAdmin(self.cluster)

    def get_coordination_consumer(
        self, **settings: Unpack[CoordinationSettings]
    ) -> InMemoryCoordinationConsumer:
        consumer = InMemoryCoordinationConsumer(
            self.group, settings["assignor"], settings["group_id"], settings["client_id"]
        )
        with self._lock:
            self.coordination_consumers.append(consumer)
        return consumer

    def get_aborted_filter(self, bootstrap_servers: str) -> None:
        """None: the in-memory read_committed consumers leave aborted records out themselves."""
        return None

    # ------------------------------------------------------------------ for tests
    def main_consumers(self) -> list[InMemoryConsumer]:
        """The stream threads' main consumers made so far."""
        with self._lock:
            return [c for c in self.consumers if c.role == "consumer"]

    def transactional_producers(self, transactional_id: str) -> list[InMemoryProducer]:
        """Every producer made with ``transactional_id``, oldest first."""
        with self._lock:
            return [p for p in self.producers if p.transactional_id == transactional_id]
