"""Helpers for the scenario tests that replay Kafka Streams' window, join and suppression tests.

Kafka Streams' tests for these operators lean on a handful of fixtures: ``MockValueJoiner.TOSTRING_JOINER``
(``left + "+" + right``, where Java prints a missing side as ``null``), ``MockAggregator.TOSTRING_ADDER``
(``agg + "+" + value``), ``MockInitializer.STRING_INIT`` (``"0"``), ``MockReducer.STRING_ADDER`` and
``MockApiProcessor.checkAndClearProcessResult`` (compare what reached the processor, then forget it).
This module gives each one a Python twin so the replays read like the originals' intent, not their code.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pytest

from streams_runtime import (
    Consumed,
    JoinWindows,
    Serde,
    Serdes,
    StreamJoined,
    StreamsBuilder,
    TopologyTestDriver,
)

from .support import Capture, KeyValueTimestamp

STREAM_TABLE_KEYS = (0, 1, 2, 3)
STREAM_TABLE_TABLE_TIMESTAMPS = (7_000, 42, 123_456, 9)


def java_str(value: Any) -> str:
    """How Java's string concatenation prints a value (``null`` for a missing one)."""
    return "null" if value is None else str(value)


def to_string_joiner(left: Any, right: Any) -> str:
    """``MockValueJoiner.TOSTRING_JOINER``: ``"<left>+<right>"``, a missing side printed as ``null``."""
    return f"{java_str(left)}+{java_str(right)}"


def string_init() -> str:
    """``MockInitializer.STRING_INIT``."""
    return "0"


def to_string_adder(key: Any, value: Any, aggregate: Any) -> str:
    """``MockAggregator.TOSTRING_ADDER``: append ``+value`` to the aggregate."""
    return f"{java_str(aggregate)}+{java_str(value)}"


def string_reducer(aggregate: Any, value: Any) -> str:
    """``MockReducer.STRING_ADDER``."""
    return f"{java_str(aggregate)}+{java_str(value)}"


def session_merger(key: Any, aggregate_one: Any, aggregate_two: Any) -> str:
    """The merger SessionWindowedKStreamImplTest uses: ``agg1 + "+" + agg2``."""
    return f"{aggregate_one}+{aggregate_two}"


def joined(left: bool, rows: Iterable[tuple[Any, Any, Any, int]]) -> list[KeyValueTimestamp]:
    """What a stream-table join emits for ``rows`` of ``(key, stream value, table partner or None,
    timestamp)``: the inner join the rows with a partner, the left join every row (a missing partner
    printed ``null``)."""
    return [
        (k, to_string_joiner(v, partner), ts) for k, v, partner, ts in rows if left or partner is not None
    ]


#: run a stream-table scenario as both Kafka Streams tests ran it, the inner and the left join
STREAM_TABLE_JOINS = pytest.mark.parametrize("left", [False, True], ids=["join", "left-join"])


def take(capture: Capture) -> list[KeyValueTimestamp]:
    """What the captured processor saw since the last call, then forget it
    (``checkAndClearProcessResult``)."""
    seen = list(capture.processed)
    capture.processed.clear()
    return seen


def pipe_each(topic, prefix: str, keys: Iterable[int], timestamp: int, step: int = 0) -> None:
    """Pipe ``(key, prefix + key)`` for every key; the i-th record at ``timestamp + i * step``.

    Kafka Streams' join tests push "four items with the same timestamp" (``step=0``) or "four items with
    increasing timestamps" (``step=1``) in one loop; this is that loop.
    """
    for index, key in enumerate(keys):
        topic.pipe_input(key, f"{prefix}{key}", timestamp + index * step)


def stream_stream_join(
    make_config, capture, windows: JoinWindows, kind: str = "join", right_serde: Serde | None = None
) -> tuple[TopologyTestDriver, Any, Any]:
    """The topology of Kafka Streams' KStreamKStream{,Left,Outer}JoinTest: ``topic1`` (Integer keys,
    String values) ``join``/``left_join``/``outer_join`` ``topic2`` (String values unless
    ``right_serde``) with :func:`to_string_joiner`, the results into ``capture``; returns the driver
    and the two input topics (timestamps from 0)."""
    right_serde = right_serde or Serdes.String()
    builder = StreamsBuilder()
    left = builder.stream("topic1", Consumed.with_(Serdes.Integer(), Serdes.String()))
    right = builder.stream("topic2", Consumed.with_(Serdes.Integer(), right_serde))
    getattr(left, kind)(
        right,
        to_string_joiner,
        windows,
        stream_joined=StreamJoined.with_(Serdes.Integer(), Serdes.String(), right_serde),
    ).process(capture)
    driver = TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String()))
    topic1 = driver.create_input_topic("topic1", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0)
    topic2 = driver.create_input_topic("topic2", Serdes.Integer(), right_serde, start_timestamp_ms=0)
    return driver, topic1, topic2


def warnings(caplog) -> list[str]:
    """Every WARNING message captured so far."""
    return [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]


def windowed_records_by_start(capture: Capture) -> dict[int, set[tuple[Any, int]]]:
    """Output grouped by window start as ``{start: {(value, timestamp), ...}}``.

    The shape of KStreamSlidingWindowAggregateTest's ``gatherOutput``: the sliding-window processor may update
    several windows for one record, and the test fixes the set of results per window, not their interleaving.
    """
    gathered: dict[int, set[tuple[Any, int]]] = {}
    for windowed, value, timestamp in capture.processed:
        gathered.setdefault(windowed.window.start, set()).add((value, timestamp))
    return gathered


class StreamTableJoin:
    """The fixture of KStreamKTableJoinTest / KStreamKTableLeftJoinTest: ``streamTopic`` joined with
    ``tableTopic`` (Integer keys, String values), the result captured.

    Kafka Streams' tests give table records random timestamps to show they do not matter; we use a
    fixed spread of unrelated timestamps instead.
    """

    def __init__(self, make_config, capture, *, left: bool) -> None:
        builder = StreamsBuilder()
        consumed = Consumed.with_(Serdes.Integer(), Serdes.String())
        stream = builder.stream("streamTopic", consumed)
        table = builder.table("tableTopic", consumed)
        (stream.left_join if left else stream.join)(table, to_string_joiner).process(capture)
        self.driver = TopologyTestDriver(builder.build(), make_config(Serdes.Integer(), Serdes.String()))
        self.stream_topic = self.driver.create_input_topic(
            "streamTopic", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0
        )
        self.table_topic = self.driver.create_input_topic(
            "tableTopic", Serdes.Integer(), Serdes.String(), start_timestamp_ms=0
        )

    def push_to_stream(self, count: int, prefix: str) -> None:
        for i in range(count):
            self.stream_topic.pipe_input(STREAM_TABLE_KEYS[i], f"{prefix}{STREAM_TABLE_KEYS[i]}", i)

    def push_to_table(self, count: int, prefix: str) -> None:
        for i in range(count):
            key = STREAM_TABLE_KEYS[i]
            self.table_topic.pipe_input(key, f"{prefix}{key}", STREAM_TABLE_TABLE_TIMESTAMPS[i])

    def push_deletes_to_table(self, count: int) -> None:
        for i in range(count):
            self.table_topic.pipe_input(STREAM_TABLE_KEYS[i], None)
