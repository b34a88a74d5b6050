"""The light edges and direct children of ``processor/internals/forwarders.py`` are a fast path
only: for random DSL topologies and records, with user functions that raise on some records,
a task that forwards every record through the general ``forward`` (each child made current,
its errors handled there) emits the same records, drops the same ones and fails with the same
error as the task that takes the fast path."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams_runtime import Consumed, Grouped, Produced, Serdes, StreamsBuilder, TopologyTestDriver
from streams_runtime.processor.internals.forwarders import Forward, RecordForwarding

J = Serdes.Json()
S = Serdes.String()


def _fails(value: Any, modulus: int) -> None:
    if isinstance(value, int) and modulus and value % modulus == 0:
        raise ValueError(f"user function refused {value}")


def _apply(stream: Any, op: tuple[str, int]) -> Any:
    kind, m = op
    if kind == "filter":
        return stream.filter(lambda k, v: (_fails(v, m), v % 3 != 1)[1])
    if kind == "map_values":
        return stream.map_values(lambda v: (_fails(v, m), v + 7)[1])
    if kind == "map":
        return stream.map(lambda k, v: (_fails(v, m), (f"{k}{v % 2}", v * 3))[1])
    if kind == "select_key":
        return stream.select_key(lambda k, v: (_fails(v, m), f"k{v % 4}")[1])
    if kind == "flat_map_values":
        return stream.flat_map_values(lambda v: (_fails(v, m), [v, v + 1][: 1 + v % 2])[1])
    if kind == "peek":
        return stream.peek(lambda k, v: _fails(v, m))
    raise AssertionError(kind)


OPS = st.tuples(
    st.sampled_from(["filter", "map_values", "map", "select_key", "flat_map_values", "peek"]),
    st.sampled_from([0, 0, 5, 7, 11]),  # 0: never raises
)
TOPOLOGIES = st.fixed_dictionaries(
    {
        "head": st.lists(OPS, max_size=4),
        "branches": st.lists(st.lists(OPS, max_size=3), min_size=1, max_size=3),  # fan-out
        "count": st.booleans(),  # the first branch ends in group_by_key().count()
    }
)
RECORDS = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 60)), max_size=25)


def _topology(shape: dict[str, Any]) -> Any:
    builder = StreamsBuilder()
    stream = builder.stream("in", Consumed.with_(S, J))
    for op in shape["head"]:
        stream = _apply(stream, op)
    for i, ops in enumerate(shape["branches"]):
        branch = stream
        for op in ops:
            branch = _apply(branch, op)
        if i == 0 and shape["count"]:
            branch = branch.group_by_key(Grouped.with_(S, J)).count().to_stream()
        branch.to(f"out{i}", Produced.with_(S, J))
    return builder.build()


class _Logged(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _run(shape: dict[str, Any], records: list[tuple[str, int]], handler: str) -> Any:
    config = {
        "application_id": "paths",
        "processing_exception_handler": handler,
        "statestore_cache_max_bytes": 0,
    }
    logged = _Logged()
    logger = logging.getLogger("streams_runtime.processor")
    logger.addHandler(logged)
    error = None
    outputs: list[Any] = []
    try:
        with TopologyTestDriver(_topology(shape), config) as driver:
            source = driver.create_input_topic("in", S, J)
            try:
                for ts, (key, value) in enumerate(records):
                    source.pipe_input(key, value, ts)
            except Exception as exc:  # log_and_fail: the same error, named the same way
                error = (type(exc).__name__, str(exc))
            for i in range(len(shape["branches"])):
                out = driver.create_output_topic(f"out{i}", S, J)
                outputs.append(out.read_key_values_to_list())
            dropped = driver.metrics.total("dropped-records")
    finally:
        logger.removeHandler(logged)
    return outputs, error, dropped, logged.messages


def _general_only(self: RecordForwarding, node: Any) -> Forward:
    return self.forward


@pytest.mark.parametrize("handler", ["log_and_continue", "log_and_fail"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=TOPOLOGIES, records=RECORDS)
def test_the_fast_path_and_the_general_path_give_the_same_outputs_and_errors(
    handler: str, shape: dict[str, Any], records: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _run(shape, records, handler)
    with monkeypatch.context() as patch:
        patch.setattr(RecordForwarding, "_make_forward", _general_only)
        general = _run(shape, records, handler)
    assert fast == general
