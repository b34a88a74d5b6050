"""The app of the chaos test: per-key counts (every update emitted) and a copy of every input id.

``$WORKER_TEST_TOPICS="<input>,<counts>,<ids>,<application id>"``; ``$CHAOS_GUARANTEE`` is
``at_least_once`` or ``exactly_once_v2``; ``$CHAOS_STANDBYS`` the standby replicas (default 0).
Input: key ``k<n>``, value = a unique input id.
"""

from __future__ import annotations

import os

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import FAST_CLIENT


def app():
    source, counts, ids, app_id = os.environ["WORKER_TEST_TOPICS"].split(",")
    guarantee = os.environ["CHAOS_GUARANTEE"]
    config = {
        "application_id": app_id,
        **FAST_CLIENT,
        "processing_guarantee": guarantee,
        "statestore_cache_max_bytes": 0,  # one count update per input
        "num_standby_replicas": int(os.environ.get("CHAOS_STANDBYS", "0")),
    }
    if guarantee == "exactly_once_v2":
        config.pop("commit_interval_ms")  # the exactly-once default, 100 ms
    builder = StreamsBuilder()
    stream = builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
    stream.to(ids, produced=Produced.with_(Serdes.String(), Serdes.String()))
    (
        stream.group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(counts, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config), config
