"""A Processor-API node behind a DSL chain sees the record it is given as the current record.

Inside a chain of context-free DSL processors the runtime skips making each node current; the
next node that reads the context (here a user processor) must still see its own record's
timestamp and headers, the source record's topic/partition/offset, and forward to its children.
"""

from __future__ import annotations

from typing import Any

from streams_runtime import Serdes, StreamsBuilder, TopologyTestDriver
from streams_runtime.processor.api import Record

S = Serdes.String()
CONFIG = {"application_id": "ctx-chain", "default_key_serde": "string", "default_value_serde": "string"}


class Observe:
    def init(self, context: Any) -> None:
        self.context = context

    def process(self, record: Record) -> None:
        c = self.context
        seen = f"{record.value}|{c.timestamp}|{c.topic}:{c.partition}:{c.offset}|{dict(c.headers)}"
        self.context.forward(Record(record.key, seen, record.timestamp + 1, record.headers))


def test_user_processor_after_a_dsl_chain_sees_its_record_and_the_source_metadata() -> None:
    builder = StreamsBuilder()
    (
        builder.stream("input")
        .filter(lambda k, v: v != "drop")
        .map_values(str.upper)
        .map(lambda k, v: (k + "!", v))
        .process(Observe)
        .map_values(lambda v: v + "#")
        .to("output")
    )
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("a", "x", 10, headers=[("h", b"1")])
        topic.pipe_input("b", "drop", 20)
        topic.pipe_input("c", "y", 30)
        out = driver.create_output_topic("output", S, S).read_records_to_list()
    assert [(r.key, r.value, r.timestamp) for r in out] == [
        ("a!", "X|10|input:0:0|{'h': b'1'}#", 11),
        ("c!", "Y|30|input:0:2|{}#", 31),
    ]
