"""The demo application: payments keyed by user -> per-user count and total spend.

    demo-payments (key: user, value: {"payment_id", "user", "amount"})
      -> group_by_key -> aggregate {"count", "total_cents"} on the RocksDB store
         "payment-totals" (changelog demo-payments-app-payment-totals-changelog)
      -> to_stream -> demo-user-totals (key: user, value: the aggregate as JSON)

One sub-topology, so the app has as many tasks as ``demo-payments`` has partitions. The total is
kept in integer cents so the demo can check it exactly against what it produced.

Run it on its own like any app::

    streams-runtime worker --app streams_runtime.demo.app:app --instances 2 --threads 2

:func:`app` follows the worker convention (a function returning ``(topology, config)``).
"""

from __future__ import annotations

from typing import Any

from streams_runtime.kstream import Consumed, Materialized, Produced, StreamsBuilder
from streams_runtime.processor.topology import Topology
from streams_runtime.serdes import Serdes

APPLICATION_ID = "demo-payments-app"
PAYMENTS_TOPIC = "demo-payments"
RESULTS_TOPIC = "demo-user-totals"
STORE = "payment-totals"
PARTITIONS = 4

#: Config of the demo app: short sessions and commits so results show within a second
#: (docs/decisions/0001-embedded-broker.md).
CONFIG: dict[str, Any] = {
    "application_id": APPLICATION_ID,
    "commit_interval_ms": 250,
    "poll_ms": 20,
    "consumer.session.timeout.ms": 3000,
    "consumer.heartbeat.interval.ms": 300,
    "consumer.fetch.wait.max.ms": 10,
}


def _start() -> dict[str, int]:
    return {"count": 0, "total_cents": 0}


def _add(user: str, payment: dict[str, Any], totals: dict[str, int]) -> dict[str, int]:
    return {
        "count": totals["count"] + 1,
        "total_cents": totals["total_cents"] + round(payment["amount"] * 100),
    }


def payments_topology(config: dict[str, Any] | None = None) -> Topology:
    """The topology drawn in the module docstring."""
    builder = StreamsBuilder()
    (
        builder.stream(PAYMENTS_TOPIC, consumed=Consumed.with_(Serdes.String(), Serdes.Json()))
        .group_by_key()
        .aggregate(
            _start,
            _add,
            materialized=Materialized.as_(STORE)
            .with_key_serde(Serdes.String())
            .with_value_serde(Serdes.Json()),
        )
        .to_stream()
        .to(RESULTS_TOPIC, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
    )
    return builder.build(config or CONFIG)


def app() -> tuple[Topology, dict[str, Any]]:
    """The worker entry point: ``--app streams_runtime.demo.app:app``."""
    return payments_topology(CONFIG), dict(CONFIG)
