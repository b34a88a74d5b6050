"""A per-key count app for the worker tests; topic names come from ``$WORKER_TEST_TOPICS``.

``WORKER_TEST_TOPICS="<input>,<output>,<application id>"`` is set by the test and inherited by
the launcher and its instances, so every process builds the same topology.
"""

from __future__ import annotations

import os

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import FAST_CLIENT


def app():
    source, output, app_id = os.environ["WORKER_TEST_TOPICS"].split(",")
    config = {"application_id": app_id, **FAST_CLIENT}
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to(output, produced=Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build(config), config
