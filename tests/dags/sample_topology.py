"""A small topology for the provisioning tests: one repartition topic and one changelog.

Names carry a per-session suffix so tests sharing one broker never collide. Referenced by module
path, ``tests.dags.sample_topology:build``, as a spec file or the DAG's Params would.
"""

from __future__ import annotations

import uuid

from streams_runtime import Grouped, Materialized, Produced, Serdes, StreamsBuilder

SUFFIX = uuid.uuid4().hex[:8]
APPLICATION_ID = f"prov-app-{SUFFIX}"
INPUT = f"prov-words-{SUFFIX}"
OUTPUT = f"prov-counts-{SUFFIX}"
STORE = "word-counts"
REPARTITION = f"{APPLICATION_ID}-{STORE}-repartition"
CHANGELOG = f"{APPLICATION_ID}-{STORE}-changelog"


def build():
    """Words re-keyed by word and counted: (topology, config) as the worker's ``--app`` accepts."""
    strings = Grouped(key_serde=Serdes.String(), value_serde=Serdes.String())
    builder = StreamsBuilder()
    (
        builder.stream(INPUT)
        .group_by(lambda key, word: word, grouped=strings)
        .count(materialized=Materialized.as_(STORE))
        .to_stream()
        .to(OUTPUT, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Long()))
    )
    config = {"application_id": APPLICATION_ID}
    return builder.build(config), config
