"""Runs a case (docs/oracle.md) through this project's public DSL and TopologyTestDriver.

The mirror of the Java side's ``TopologyFromCase`` and ``CaseRunner``: the same topology, built
operation by operation with explicit serdes, the same steps, and the result in the same shape
(``{"records": [...], "error": ...}``), so the two compare as plain JSON values.
"""

from __future__ import annotations

from typing import Any

from streams_runtime import (
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TimeWindows,
    TopologyTestDriver,
)
from tests.oracle.catalogue import CATALOGUE, STRING, Catalogue

APPLICATION_ID = "oracle"


def serde(value_type: str) -> Any:
    return {STRING: Serdes.String, "long": Serdes.Long}[value_type]()


def run_case(case: dict[str, Any], catalogue: Catalogue = CATALOGUE) -> dict[str, Any]:
    """The case's result through this project: every output record after each step, or an error
    (with the records read before it)."""
    records: list[dict[str, Any]] = []
    result: dict[str, Any] = {"records": records, "error": None}
    if "id" in case:
        result["id"] = case["id"]
    try:
        builder = StreamsBuilder()
        for pipeline in case["topology"]["pipelines"]:
            _add_pipeline(builder, pipeline, catalogue)
        config = {"application_id": APPLICATION_ID, **case.get("config", {})}
        with TopologyTestDriver(builder.build(), config) as driver:
            inputs = {}
            for pipeline in case["topology"]["pipelines"]:
                source = pipeline["source"]
                inputs[source["topic"]] = driver.create_input_topic(
                    source["topic"], serde(source["key"]), serde(source["value"])
                )
            outputs = [
                (o["topic"], driver.create_output_topic(o["topic"], serde(o["key"]), serde(o["value"])))
                for o in case["outputs"]
            ]
            for step, item in enumerate(case["inputs"]):
                try:
                    if "advance_wall_clock_ms" in item:
                        driver.advance_wall_clock_time(item["advance_wall_clock_ms"])
                    else:
                        inputs[item["topic"]].pipe_input(item["key"], item["value"], item["timestamp"])
                finally:
                    for topic, output in outputs:
                        records.extend(
                            {
                                "step": step,
                                "topic": topic,
                                "key": r.key,
                                "value": r.value,
                                "timestamp": r.timestamp,
                            }
                            for r in output.read_records_to_list()
                        )
    except Exception as error:  # noqa: BLE001 - the case's result, compared with Kafka Streams'
        result["error"] = f"{type(error).__name__}: {error}"
    return result


def _windows(window: dict[str, Any]) -> TimeWindows:
    windows = TimeWindows.of_size_and_grace(window["size"], window["grace"])
    if window["type"] == "hopping":
        return windows.advance_by(window["advance"])
    if window["type"] != "tumbling":
        raise ValueError(f"unknown window type {window['type']}")
    return windows


def _render_windowed_key(key: Any, value: Any) -> tuple[str, Any]:
    return f"{key.key}@{key.window.start}/{key.window.end}", value


def _add_pipeline(builder: StreamsBuilder, pipeline: dict[str, Any], catalogue: Catalogue) -> None:
    source = pipeline["source"]
    value_type = source["value"]
    key = serde(STRING)
    current: Any = builder.stream(source["topic"], Consumed.with_(key, serde(value_type)))
    kind = "stream"
    for op in pipeline["ops"]:
        name, fn = op["op"], op.get("fn")
        match kind, name:
            case "stream" | "table", "filter":
                current = current.filter(catalogue.predicates[fn].fn)
            case "stream" | "table", "filter_not":
                current = current.filter_not(catalogue.predicates[fn].fn)
            case "stream" | "table", "map_values":
                current = current.map_values(catalogue.value_mappers[fn].fn)
                value_type = op["to"]
            case "stream", "map":
                current = current.map(catalogue.key_value_mappers[fn].fn)
            case "stream", "select_key":
                current = current.select_key(catalogue.key_selectors[fn].fn)
            case "stream", "flat_map_values":
                current = current.flat_map_values(catalogue.flat_value_mappers[fn].fn)
            case "stream", "group_by_key":
                current, kind = current.group_by_key(Grouped.with_(key, serde(value_type))), "grouped"
            case "stream", "group_by":
                selector = catalogue.key_selectors[fn].fn
                current, kind = current.group_by(selector, Grouped.with_(key, serde(value_type))), "grouped"
            case "stream", "to":
                current.to(op["topic"], Produced.with_(key, serde(value_type)))
                kind = "done"
            case "grouped", "windowed_by":
                current, kind = current.windowed_by(_windows(op["window"])), "windowed"
            case "grouped" | "windowed", "count":
                value_type = "long"
                current = current.count(Materialized.with_(key, serde(value_type)))
                kind = "table" if kind == "grouped" else "windowed_table"
            case "grouped" | "windowed", "reduce":
                current = current.reduce(
                    catalogue.reducers[fn].fn, Materialized.with_(key, serde(value_type))
                )
                kind = "table" if kind == "grouped" else "windowed_table"
            case "grouped" | "windowed", "aggregate":
                entry = catalogue.aggregators[fn]
                initializer, aggregator = entry.fn
                value_type = entry.gives or value_type
                current = current.aggregate(
                    initializer, aggregator, Materialized.with_(key, serde(value_type))
                )
                kind = "table" if kind == "grouped" else "windowed_table"
            case "table", "to_stream":
                current, kind = current.to_stream(), "stream"
            case "windowed_table", "to_stream":
                current, kind = current.to_stream().map(_render_windowed_key), "stream"
            case _:
                raise ValueError(f"operation {name} does not apply to a {kind}")
    if kind != "done":
        raise ValueError("a pipeline ends with to")
