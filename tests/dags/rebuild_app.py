"""The demo payments app for the state-rebuild DAG tests, on per-test topics (``$REBUILD_TEST_APP``).

``REBUILD_TEST_APP="<input topic>,<output topic>,<application id>[,buggy]"`` is set by the test
(and ``REBUILD_TEST_TOKEN``, the HTTP token, for worker processes); the
DAG's ``resolve`` task imports ``tests.dags.rebuild_app:app`` like a worker's ``--app``. The store
is the demo's ``payment-totals`` (per user ``{"count", "total_cents"}``, String keys, JSON values);
``buggy`` makes the aggregation wrong (amounts counted x10), the stream bug recompute mode repairs.
"""

from __future__ import annotations

import os
from typing import Any

from streams_runtime.demo.app import STORE
from streams_runtime.kstream import Consumed, Materialized, Produced, StreamsBuilder
from streams_runtime.serdes import Serdes
from tests.integration.streams_support import FAST_CLIENT

__all__ = ["STORE", "app"]


def app() -> tuple[Any, dict[str, Any]]:
    source, output, app_id, *flags = os.environ["REBUILD_TEST_APP"].split(",")
    factor = 1000 if "buggy" in flags else 100
    config = {"application_id": app_id, **FAST_CLIENT}
    if os.environ.get("REBUILD_TEST_TOKEN"):  # a worker process gets its HTTP token this way
        config["application_server_token"] = os.environ["REBUILD_TEST_TOKEN"]
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.Json()))
        .group_by_key()
        .aggregate(
            lambda: {"count": 0, "total_cents": 0},
            lambda user, payment, totals: {
                "count": totals["count"] + 1,
                "total_cents": totals["total_cents"] + round(payment["amount"] * factor),
            },
            materialized=Materialized.as_(STORE)
            .with_key_serde(Serdes.String())
            .with_value_serde(Serdes.Json()),
        )
        .to_stream()
        .to(output, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
    )
    return builder.build(config), config
