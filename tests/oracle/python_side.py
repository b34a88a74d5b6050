"""Runs a case (docs/oracle.md) through this project's public DSL and TopologyTestDriver.

The mirror of the Java side's ``TopologyFromCase`` and ``CaseRunner``: the same topology, built
operation by operation with explicit serdes, the same steps, and the result in the same shape
(``{"records": [...], "error": ...}``), so the two compare as plain JSON values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from streams_runtime import (
    Branched,
    BufferConfig,
    Consumed,
    EmitStrategy,
    Grouped,
    Joined,
    JoinWindows,
    Materialized,
    Produced,
    Repartitioned,
    Serdes,
    SessionWindowedCogroupedKStream,
    SessionWindowedKStream,
    SessionWindows,
    SlidingWindows,
    Stores,
    StreamJoined,
    StreamsBuilder,
    Suppressed,
    TimeWindows,
    TopologyTestDriver,
)
from tests.oracle.catalogue import CATALOGUE, STRING, Catalogue

APPLICATION_ID = "oracle"
#: what Kafka Streams' task-level metrics are called here: its name -> (this project's sensor,
#: the sensor's statistic)
TASK_METRICS = {
    "dropped-records-total": ("dropped-records", "total"),
    "record-lateness-avg": ("record-lateness", "avg"),
    "record-lateness-max": ("record-lateness", "max"),
}
EXPIRED_WINDOW = "Skipping record for expired window"


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
        named: dict[str, _Chain] = {}
        for pipeline in case["topology"]["pipelines"]:
            _add_pipeline(builder, pipeline, named, catalogue)
        config = {"application_id": APPLICATION_ID, **case.get("config", {})}
        if "metrics" in case:
            result["metrics"] = []
            config["metrics.recording.level"] = "DEBUG"
        warnings: list[str] | None = None
        if case.get("warnings"):
            result["warnings"] = []
            warnings = []
        with _warnings_into(warnings), TopologyTestDriver(builder.build(), config) as driver:
            inputs = {}
            for pipeline in case["topology"]["pipelines"]:
                source = pipeline["source"]
                if "topic" not in source:
                    continue  # starts from an earlier pipeline
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
                    if "metrics" in case:
                        result["metrics"].extend(_task_metrics(driver, case["metrics"], step))
                    if warnings is not None:
                        result["warnings"].extend({"step": step, "window": w} for w in warnings)
                        warnings.clear()
    except Exception as error:  # noqa: BLE001 - the case's result, compared with Kafka Streams'
        result["error"] = f"{type(error).__name__}: {error}"
    return result


def _task_metrics(driver: TopologyTestDriver, names: list[str], step: int) -> list[dict[str, Any]]:
    """The listed task-level metrics of every task (by task id, then name), as the Java side
    reports Kafka Streams' ``stream-task-metrics``: a statistic of no record yet is null."""
    found = []
    for name in names:
        sensor_name, statistic = TASK_METRICS.get(name, (None, None))
        for sensor in driver.metrics.sensors():
            if sensor.name != sensor_name or sensor.group != "stream-task-metrics":
                continue
            value: float | None
            if statistic == "total":
                value = float(sensor.total)
            elif not sensor.count:
                value = None
            else:
                value = float(sensor.max) if statistic == "max" else sensor.avg()
            found.append({"task": dict(sensor.tags)["task-id"], "name": name, "value": value})
    found.sort(key=lambda metric: (metric["task"], metric["name"]))
    return [{"step": step, **metric} for metric in found]


class _ExpiredWindows(logging.Handler):
    """Keeps what each "Skipping record for expired window" warning says from its timestamp on."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        at = message.find("timestamp=[")
        if message.startswith(EXPIRED_WINDOW) and at >= 0:
            self.into.append(message[at:])


@contextmanager
def _warnings_into(warnings: list[str] | None) -> Iterator[None]:
    """While the case runs, the DSL's warnings go into ``warnings`` (and nowhere else)."""
    if warnings is None:
        yield
        return
    logger = logging.getLogger("streams_runtime.kstream")
    handler = _ExpiredWindows(warnings)
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _windows(window: dict[str, Any]) -> Any:
    grace = window["grace"]
    match window["type"]:
        case "tumbling":
            return TimeWindows.of_size_and_grace(window["size"], grace)
        case "hopping":
            return TimeWindows.of_size_and_grace(window["size"], grace).advance_by(window["advance"])
        case "session":
            return SessionWindows.of_inactivity_gap_and_grace(window["gap"], grace)
        case "sliding":
            return SlidingWindows.of_time_difference_and_grace(window["difference"], grace)
    raise ValueError(f"unknown window type {window['type']}")


def _join_windows(window: dict[str, Any]) -> JoinWindows:
    windows = JoinWindows.of_time_difference_and_grace(window["difference"], window["grace"])
    return windows.after(window["after"]) if "after" in window else windows


def _store(op: dict[str, Any], value_type: str, windowed: bool = False) -> Materialized:
    """A store: explicit serdes, the op's ``store`` type (``rocksdb``, ``in_memory``) and a windowed
    one's ``retention`` (ms) when the op has them (the Java side reads the retention for windowed
    aggregations only, too)."""
    materialized = Materialized.with_(serde(STRING), serde(value_type))
    if "store" in op:
        if op["store"] not in ("rocksdb", "in_memory"):
            raise ValueError(f"unknown store type {op['store']}")
        materialized = materialized.with_store_type(op["store"])
    return materialized.with_retention(op["retention"]) if windowed and "retention" in op else materialized


def _render_windowed_key(key: Any, value: Any) -> tuple[str, Any]:
    return f"{key.key}@{key.window.start}/{key.window.end}", value


class _Chain(NamedTuple):
    """What a chain holds: the DSL object, its kind (stream, table, grouped, ...) and value type."""

    current: Any
    kind: str
    value_type: str


def _source(builder: StreamsBuilder, source: dict[str, Any], named: dict[str, _Chain]) -> _Chain:
    if "pipeline" in source:
        if source["pipeline"] not in named:
            raise ValueError(f"no earlier pipeline is named {source['pipeline']}")
        return named[source["pipeline"]]
    if source["key"] != STRING:
        raise ValueError("keys are strings")
    value_type = source["value"]
    consumed = Consumed.with_(serde(STRING), serde(value_type))
    match source.get("kind", "stream"):
        case "stream":
            return _Chain(builder.stream(source["topic"], consumed=consumed), "stream", value_type)
        case "table" if "versioned" in source:
            store = Stores.persistent_versioned_key_value_store(
                source["topic"] + "-versioned", source["versioned"]["history_retention"]
            )
            materialized = Materialized.as_(store).with_key_serde(serde(STRING))
            materialized = materialized.with_value_serde(serde(value_type))
            table = builder.table(source["topic"], consumed=consumed, materialized=materialized)
            return _Chain(table, "table", value_type)
        case "table":
            return _Chain(builder.table(source["topic"], consumed=consumed), "table", value_type)
        case "global_table":
            table = builder.global_table(source["topic"], consumed=consumed)
            return _Chain(table, "global_table", value_type)
    raise ValueError(f"unknown source kind {source['kind']}")


def _other(op: dict[str, Any], named: dict[str, _Chain]) -> _Chain:
    if op["other"] not in named:
        raise ValueError(f"no earlier pipeline is named {op['other']}")
    return named[op["other"]]


def _join(
    left: Any, left_type: str, how: str, op: dict[str, Any], right: _Chain, catalogue: Catalogue
) -> Any:
    joiner = catalogue.value_joiners[op["fn"]].fn
    key = serde(STRING)
    method = {"join": left.join, "left_join": left.left_join, "outer_join": left.outer_join}[how]
    if right.kind == "global_table":
        if how == "outer_join":
            raise ValueError("outer_join does not join a stream with a global table")
        return method(right.current, catalogue.key_selectors[op["key_selector"]].fn, joiner)
    if right.kind == "table":
        if how == "outer_join":
            raise ValueError("outer_join does not join a stream with a table")
        joined = Joined.with_(key, serde(left_type), serde(right.value_type))
        if "grace" in op:
            joined = joined.with_grace_period(op["grace"])
        return method(right.current, joiner, joined)
    if right.kind != "stream":
        raise ValueError("a stream joins a stream or a table")
    joined = StreamJoined.with_(key, serde(left_type), serde(right.value_type))
    return method(right.current, joiner, _join_windows(op["window"]), joined)


def _table_join(left: Any, how: str, op: dict[str, Any], right: _Chain, catalogue: Catalogue) -> Any:
    """A table-table join: by key (inner, left, outer), or by foreign key (``extractor``); the
    result materialized when the op names a ``store``."""
    if right.kind != "table":
        raise ValueError("a table joins a table")
    joiner = catalogue.value_joiners[op["fn"]].fn
    store = [_store(op, catalogue.value_joiners[op["fn"]].gives or STRING)] if "store" in op else []
    method = {"join": left.join, "left_join": left.left_join, "outer_join": left.outer_join}[how]
    if "extractor" in op:
        if how == "outer_join":
            raise ValueError("outer_join is not a foreign-key join")
        selector = catalogue.key_selectors[op["extractor"]].fn
        return method(right.current, lambda key, value: selector(key, value), joiner, *store)
    return method(right.current, joiner, *store)


def _suppressed(op: dict[str, Any]) -> Suppressed:
    """Until the windows close (the default) or until a time limit, with the op's buffer config."""
    buffer = op.get("buffer")
    config = BufferConfig.unbounded()
    if buffer is not None:
        if "max_records" in buffer:
            config = BufferConfig.max_records(buffer["max_records"])
            if "max_bytes" in buffer:
                config = config.with_max_bytes(buffer["max_bytes"])
        else:
            config = BufferConfig.max_bytes(buffer["max_bytes"])
        match buffer["when_full"]:
            case "emit_early":
                config = config.emit_early_when_full()
            case "shut_down":
                config = config.shut_down_when_full()
            case other:
                raise ValueError(f"unknown buffer policy {other}")
    match op.get("until", "window_close"):
        case "window_close":
            return Suppressed.until_window_closes(config)
        case "time_limit":
            return Suppressed.until_time_limit(op["time_limit"], config)
        case other:
            raise ValueError(f"unknown suppression {other}")


def _cogroup(current: Any, op: dict[str, Any], named: dict[str, _Chain], catalogue: Catalogue) -> Any:
    value_type = catalogue.aggregators[op["fn"]].gives
    cogrouped = current.cogroup(catalogue.aggregators[op["fn"]].fn[1])
    for more in op["others"]:
        other = _other(more, named)
        if other.kind != "grouped" or catalogue.aggregators[more["fn"]].gives != value_type:
            raise ValueError("cogroup takes grouped streams aggregated to one type")
        cogrouped = cogrouped.cogroup(other.current, catalogue.aggregators[more["fn"]].fn[1])
    return cogrouped


def _split(
    current: Any, op: dict[str, Any], value_type: str, named: dict[str, _Chain], catalogue: Catalogue
) -> None:
    def keep(name: str) -> Any:
        return lambda stream: named.__setitem__(name, _Chain(stream, "stream", value_type))

    split = current.split()
    for branch in op["branches"]:
        predicate = catalogue.predicates[branch["fn"]].fn
        split = split.branch(predicate, Branched.with_consumer(keep(branch["name"]), branch["name"]))
    if op.get("default") is None:
        split.no_default_branch()
    else:
        split.default_branch(Branched.with_consumer(keep(op["default"]), op["default"]))


def _add_pipeline(
    builder: StreamsBuilder, pipeline: dict[str, Any], named: dict[str, _Chain], catalogue: Catalogue
) -> None:
    current, kind, value_type = _source(builder, pipeline["source"], named)
    key = serde(STRING)
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
            case "stream", "repartition":
                current = current.repartition(Repartitioned.with_(key, serde(value_type)))
            case "stream", "merge":
                other = _other(op, named)
                if other.kind != "stream" or other.value_type != value_type:
                    raise ValueError("merge takes a stream of the same value type")
                current = current.merge(other.current)
            case "stream", "join" | "left_join" | "outer_join":
                current = _join(current, value_type, name, op, _other(op, named), catalogue)
                value_type = catalogue.value_joiners[fn].gives or value_type
            case "stream", "split":
                _split(current, op, value_type, named, catalogue)
                kind = "done"
            case "stream", "to_table":
                current, kind = current.to_table(_store(op, value_type)), "table"
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
            case "windowed", "emit_on_window_close":
                current = current.emit_strategy(EmitStrategy.on_window_close())
            case "grouped" | "windowed" | "grouped_table", "count":
                value_type = "long"
                current = current.count(_store(op, value_type, kind == "windowed"))
                kind = "windowed_table" if kind == "windowed" else "table"
            case "grouped" | "windowed", "reduce":
                current = current.reduce(
                    catalogue.reducers[fn].fn, _store(op, value_type, kind == "windowed")
                )
                kind = "table" if kind == "grouped" else "windowed_table"
            case "grouped_table", "reduce":
                adder, subtractor = catalogue.reducers[fn].fn, catalogue.table_subtractors[fn].fn
                current = current.reduce(adder, subtractor, _store(op, value_type))
                kind = "table"
            case "grouped" | "windowed" | "grouped_table", "aggregate":
                entry = catalogue.aggregators[fn]
                initializer, aggregator = entry.fn
                value_type = entry.gives or value_type
                functions = [initializer, aggregator]
                if kind == "grouped_table":
                    functions.append(catalogue.table_aggregate_subtractors[fn].fn)
                elif isinstance(current, SessionWindowedKStream):
                    functions.append(catalogue.mergers[fn].fn)
                current = current.aggregate(*functions, _store(op, value_type, kind == "windowed"))
                kind = "windowed_table" if kind == "windowed" else "table"
            case "table", "group_by":
                mapper = catalogue.key_value_mappers[fn].fn
                current, kind = (
                    current.group_by(mapper, Grouped.with_(key, serde(value_type))),
                    "grouped_table",
                )
            case "table", "join" | "left_join" | "outer_join":
                current = _table_join(current, name, op, _other(op, named), catalogue)
                value_type = catalogue.value_joiners[fn].gives or value_type
            case "table" | "windowed_table", "suppress":
                current = current.suppress(_suppressed(op))
            case "grouped", "cogroup":
                current, kind = _cogroup(current, op, named, catalogue), "cogrouped"
                value_type = catalogue.aggregators[fn].gives or value_type
            case "cogrouped", "windowed_by":
                current, kind = current.windowed_by(_windows(op["window"])), "windowed_cogrouped"
            case "cogrouped" | "windowed_cogrouped", "aggregate":
                initializer = catalogue.aggregators[fn].fn[0]
                functions = [initializer]
                if isinstance(current, SessionWindowedCogroupedKStream):
                    functions.append(catalogue.mergers[fn].fn)
                current = current.aggregate(*functions, _store(op, value_type, kind == "windowed_cogrouped"))
                kind = "table" if kind == "cogrouped" else "windowed_table"
            case "table", "to_stream":
                current, kind = current.to_stream(), "stream"
            case "windowed_table", "to_stream":
                current, kind = current.to_stream().map(_render_windowed_key), "stream"
            case _:
                raise ValueError(f"operation {name} does not apply to a {kind}")
    if "name" in pipeline:
        if kind not in ("stream", "table", "global_table", "grouped"):
            raise ValueError("a named pipeline ends with a stream, a table or a grouped stream")
        named[pipeline["name"]] = _Chain(current, kind, value_type)
    elif kind != "done":
        raise ValueError("a pipeline ends with to or split, or has a name")
