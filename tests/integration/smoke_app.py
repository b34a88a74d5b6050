"""The smoke workload of the runtime-level comparison with Kafka Streams, in this project's DSL.

The same topology as ``SmokeMain`` of jvm/kafka-streams-oracle (read both side by side): per key
min, max, sum and count, the average from a table-table join of sum and count, the count per
one-hour tumbling window, and behind a repartition the count per ``g<value mod 10>``.
``SMOKE_TEST_CONFIG`` (JSON: ``app``, ``input``, ``output_prefix``) is set by the test.
"""

from __future__ import annotations

import json
import os

from streams_runtime import Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder, TimeWindows

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


def build(input_topic: str, out: str, config: dict) -> object:
    s, long_ = Serdes.String(), Serdes.Long()
    builder = StreamsBuilder()
    data = builder.stream(input_topic, consumed=Consumed.with_(s, long_))
    by_key = data.group_by_key(Grouped.with_(s, long_))
    by_key.reduce(min, Materialized.with_(s, long_)).to_stream().to(f"{out}min", Produced.with_(s, long_))
    by_key.reduce(max, Materialized.with_(s, long_)).to_stream().to(f"{out}max", Produced.with_(s, long_))
    total = by_key.reduce(lambda a, b: a + b, Materialized.with_(s, long_))
    total.to_stream().to(f"{out}sum", Produced.with_(s, long_))
    count = by_key.count(Materialized.with_(s, long_))
    count.to_stream().to(f"{out}cnt", Produced.with_(s, long_))
    total.join(count, lambda t, n: t / n).to_stream().to(f"{out}avg", Produced.with_(s, Serdes.Double()))
    (
        by_key.windowed_by(TimeWindows.of_size_and_grace(HOUR_MS, DAY_MS))
        .count(Materialized.with_(s, long_))
        .to_stream(lambda windowed, n: f"{windowed.key}@{windowed.window.start}")
        .to(f"{out}wcnt", Produced.with_(s, long_))
    )
    (
        data.group_by(lambda key, value: f"g{value % 10}", Grouped.with_(s, long_))
        .count(Materialized.with_(s, long_))
        .to_stream()
        .to(f"{out}tagg", Produced.with_(s, long_))
    )
    return builder.build(config)


def app():
    settings = json.loads(os.environ["SMOKE_TEST_CONFIG"])
    config = {"application_id": settings["app"], "commit_interval_ms": 1000}
    return build(settings["input"], settings["output_prefix"], config), config
