"""Clicks per region per minute: a stream-table join feeding a windowed aggregation.

clicks (key: user) join user-regions (table, key: user) -> region
  -> group_by(region) [repartition] -> windowed_by(1 min) -> count on "clicks-per-region"
  -> to_stream -> clicks-per-region-output

streams-runtime describe --app streams_runtime.examples.click_regions:app --format mermaid
"""

from __future__ import annotations

from typing import Any

from streams_runtime.kstream import Consumed, Materialized, StreamsBuilder
from streams_runtime.kstream.windows import TimeWindows
from streams_runtime.processor.topology import Topology
from streams_runtime.serdes import Serdes

CONFIG: dict[str, Any] = {
    "application_id": "click-regions",
    "default_key_serde": "string",
    "default_value_serde": "string",
}
MINUTE_MS = 60_000


def click_regions_topology(config: dict[str, Any] | None = None) -> Topology:
    builder = StreamsBuilder()
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    regions = builder.table("user-regions", strings, Materialized.as_("user-regions-store"))
    (
        builder.stream("clicks", strings)
        .join(regions, lambda page, region: region)
        .group_by(lambda user, region: region)
        .windowed_by(TimeWindows.of_size_with_no_grace(MINUTE_MS))
        .count(Materialized.as_("clicks-per-region"))
        .to_stream()
        .map(lambda window, count: (window.key, count))
        .to("clicks-per-region-output")
    )
    return builder.build(config or CONFIG)


def app() -> tuple[Topology, dict[str, Any]]:
    return click_regions_topology(CONFIG), dict(CONFIG)
