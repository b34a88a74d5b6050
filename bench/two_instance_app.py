"""The app of ``bench/two_instance_output.py``: an at-least-once per-key count of ``"r" + key``
(every update emitted), so the count reads a repartition topic that both instances write.

``$WORKER_TEST_TOPICS="<input>,<counts>,<application id>"``.
"""

from __future__ import annotations

import os

from streams_runtime import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import FAST_CLIENT


def app():
    source, counts, app_id = os.environ["WORKER_TEST_TOPICS"].split(",")
    config = {
        "application_id": app_id,
        **FAST_CLIENT,
        "processing_guarantee": "at_least_once",
        "statestore_cache_max_bytes": 0,  # one count update per input
    }
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by(lambda key, _: "r" + key, grouped=Grouped.with_(Serdes.String(), Serdes.String()))
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(counts, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config), config
