"""A foreign-key join topology for the provisioning tests: orders (4 partitions) joined on their
customer id with customers (2 partitions).

Referenced by module path, ``tests.dags.fk_join_topology:build``.
"""

from __future__ import annotations

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, TableJoined

APPLICATION_ID = "prov-fk-app"
ORDERS = "prov-fk-orders"
CUSTOMERS = "prov-fk-customers"
OUTPUT = "prov-fk-enriched"
PREFIX = f"{APPLICATION_ID}-orders-customers"


def build():
    """Orders joined with their customer: (topology, config) as the worker's ``--app`` accepts."""
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    builder = StreamsBuilder()
    orders = builder.table(ORDERS, strings, Materialized.as_("orders"))
    customers = builder.table(CUSTOMERS, strings, Materialized.as_("customers"))
    orders.join(
        customers,
        lambda order: order.split(":")[0],
        lambda order, customer: f"{order}/{customer}",
        TableJoined.as_("orders-customers"),
    ).to_stream().to(OUTPUT)
    config = {"application_id": APPLICATION_ID}
    return builder.build(config), config
