"""The per-key count app of ``worker_app.py`` under exactly_once_v2 with the record cache off
(one count update per input), for the process-level exactly-once tests; topics come from
``$WORKER_TEST_TOPICS="<input>,<output>,<application id>"``."""

from __future__ import annotations

import os

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import FAST_CLIENT


def app():
    source, output, app_id = os.environ["WORKER_TEST_TOPICS"].split(",")
    config = {
        "application_id": app_id,
        **FAST_CLIENT,
        "processing_guarantee": "exactly_once_v2",
        "statestore_cache_max_bytes": 0,
    }
    config.pop("commit_interval_ms")  # the exactly-once default, 100 ms
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(output, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config), config
