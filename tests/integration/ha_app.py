"""A per-key count app for the high-availability tests (standbys, warm-ups, failover).

``HA_TEST_CONFIG`` (JSON, set by the test and inherited by every instance) names the topics and
the application id and carries extra StreamsConfig keys (``num_standby_replicas``,
``probing_rebalance_interval_ms``, ...). Restoration and standby logs of the runtime go to stdout,
so a test reads e.g. ``task 0_0: restoration complete, N records restored`` from the instance.
"""

from __future__ import annotations

import json
import logging
import os

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import FAST_CLIENT


def _log_restores() -> None:
    """INFO of the runtime's state and processor loggers reaches the instance's log handler
    (its output is the test's pipe), whatever the root level."""
    for name in ("streams_runtime.state", "streams_runtime.processor"):
        logging.getLogger(name).setLevel(logging.INFO)


def app():
    settings = json.loads(os.environ["HA_TEST_CONFIG"])
    config = {"application_id": settings["app"], **FAST_CLIENT, **settings.get("config", {})}
    _log_restores()
    builder = StreamsBuilder()
    (
        builder.stream(settings["source"], consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(settings["sink"], produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config), config
