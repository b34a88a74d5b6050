"""A single-input task's processing loop (``StreamTask.process_all`` over a poll batch).

The loop takes the consumer's messages of one poll in one piece; these tests hold it to the
rules of the record-at-a-time path: offset order, the deserialization and processing handlers,
timestamp extraction, the record context a processor sees, the consumed offset, and records not
reached when one raises staying queued.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streams_runtime import Serdes, Topology
from streams_runtime.config import as_config
from streams_runtime.errors import DeserializationFailedError, StreamsProcessingError
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import ListCollector

T0 = TaskId(0, 0)


class Upper:
    """Forwards the value upper-cased; raises on ``boom`` while ``armed``; notes the context."""

    armed = True

    def init(self, context: Any) -> None:
        self.context = context
        self.seen: list[tuple[Any, ...]] = []

    def process(self, record: Any) -> None:
        context = self.context
        self.seen.append((context.topic, context.partition, context.offset, record.timestamp))
        if record.value == "boom" and Upper.armed:
            raise ValueError("boom")
        self.context.forward(record.with_value(record.value.upper()))


def make_task(tmp_path: Path, **config: Any) -> tuple[StreamTask, ListCollector]:
    topology = Topology()
    topology.add_source("src", "in", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_processor("upper", Upper, "src")
    topology.add_sink("sink", "out", "upper", key_serde=Serdes.String(), value_serde=Serdes.String())
    return task_of(topology, tmp_path, config)


def task_of(topology: Topology, tmp_path: Path, config: dict[str, Any]) -> tuple[StreamTask, ListCollector]:
    """A running task 0_0 of ``topology`` whose records go to a list."""
    builder = topology.internal_builder
    nodes = [name for names in builder.node_groups().values() for name in names]
    collector = ListCollector()
    task = StreamTask(
        T0,
        build_processor_topology(builder, nodes),
        {},
        as_config({"application_id": "drain", "state_dir": str(tmp_path), **config}),
        collector,
        StreamsMetrics(),
        None,
        lambda: 0,
        tmp_path / "0_0",
    )
    task.initialize()
    task.complete_restoration()
    return task, collector


def batch(*values: bytes | None, first: int = 0, timestamps: list[int] | None = None) -> list[RawRecord]:
    stamps = timestamps or [100 + i for i in range(len(values))]
    return [RawRecord("in", 0, first + i, stamps[i], b"k", v, ()) for i, v in enumerate(values)]


def queue_of(task: StreamTask) -> Any:
    return task.partition_group.queue_for("in", 0)


def upper_of(task: StreamTask) -> Upper:
    processor = task.topology.nodes["upper"].processor
    assert isinstance(processor, Upper)
    return processor


@pytest.fixture(autouse=True)
def armed() -> None:
    Upper.armed = True


def test_should_process_a_poll_batch_in_offset_order_with_each_record_context(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path)
    queue_of(task).add_batch(batch(b"a", b"b", b"c", first=7))
    assert task.process_all() == 3
    assert [(v, ts) for _, _, v, ts, _ in collector.sent] == [(b"A", 100), (b"B", 101), (b"C", 102)]
    assert upper_of(task).seen == [("in", 0, 7, 100), ("in", 0, 8, 101), ("in", 0, 9, 102)]
    assert task.consumed_offsets == {("in", 0): 9}
    assert task.stream_time == 102
    assert not task.has_records_queued()


def test_should_keep_stream_time_at_its_maximum_when_timestamps_go_back(tmp_path: Path) -> None:
    task, _ = make_task(tmp_path)
    queue_of(task).add_batch(batch(b"a", b"b", b"c", timestamps=[500, 200, 300]))
    task.process_all()
    assert task.stream_time == 500
    assert upper_of(task).seen[1][3] == 200  # the record keeps its own timestamp


def test_should_skip_a_corrupt_record_in_the_middle_of_a_batch_under_log_and_continue(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path, default_deserialization_exception_handler="log_and_continue")
    queue_of(task).add_batch(batch(b"a", b"\xff\xfe", b"c"))
    assert task.process_all() == 2
    assert [v for _, _, v, _, _ in collector.sent] == [b"A", b"C"]
    assert task.dropped.total == 1
    assert task.consumed_offsets == {("in", 0): 2}


def test_should_fail_on_a_corrupt_record_and_keep_the_rest_queued(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path)
    queue_of(task).add_batch(batch(b"a", b"b", b"\xff", b"d"))
    with pytest.raises(DeserializationFailedError, match="offset=2"):
        task.process_all()
    # as Kafka Streams' queue: the next record is deserialized before the one before it is
    # processed, so offset 1 fails with offset 2 (never processed, never committed)
    assert [v for _, _, v, _, _ in collector.sent] == [b"A"]
    assert task.consumed_offsets == {("in", 0): 0}
    assert len(queue_of(task)) == 1  # offset 3, not reached


def test_should_fail_where_the_record_at_a_time_path_fails(tmp_path: Path) -> None:
    looped, looped_out = make_task(tmp_path / "a")
    single, single_out = make_task(tmp_path / "b")
    records = batch(b"a", b"b", b"c", b"\xff", b"e")
    queue_of(looped).add_batch(records)
    with pytest.raises(DeserializationFailedError):
        looped.process_all()
    with pytest.raises(DeserializationFailedError):
        for record in records:
            queue_of(single).add(record)
        while single.process():
            pass
    assert looped_out.sent == single_out.sent
    assert looped.consumed_offsets == single.consumed_offsets == {("in", 0): 1}


def test_should_leave_unreached_records_queued_when_a_processor_fails(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path)
    queue_of(task).add_batch(batch(b"a", b"boom", b"c", b"d"))
    with pytest.raises(StreamsProcessingError):
        task.process_all()
    assert [v for _, _, v, _, _ in collector.sent] == [b"A"]
    assert task.consumed_offsets == {("in", 0): 0}  # the failed record is not covered
    assert len(queue_of(task)) == 2
    Upper.armed = False
    queue_of(task).add_batch(batch(b"e", first=4))
    assert task.process_all() == 3  # what was left, in order, then the new batch
    assert [v for _, _, v, _, _ in collector.sent] == [b"A", b"C", b"D", b"E"]
    assert task.consumed_offsets == {("in", 0): 4}


def test_should_count_a_record_the_processing_handler_skips_as_consumed(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path, processing_exception_handler="log_and_continue")
    queue_of(task).add_batch(batch(b"a", b"boom", b"c"))
    assert task.process_all() == 3
    assert [v for _, _, v, _, _ in collector.sent] == [b"A", b"C"]
    assert task.consumed_offsets == {("in", 0): 2}
    assert task.dropped.total == 1


def test_should_drop_records_with_negative_timestamps_under_log_and_skip(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path, default_timestamp_extractor="log_and_skip_on_invalid")
    queue_of(task).add_batch(batch(b"a", b"b", b"c", timestamps=[100, -1, 300]))
    assert task.process_all() == 2
    assert [(v, ts) for _, _, v, ts, _ in collector.sent] == [(b"A", 100), (b"C", 300)]
    assert task.dropped.total == 1


def test_should_process_the_same_records_the_same_way_one_at_a_time(tmp_path: Path) -> None:
    looped, looped_out = make_task(tmp_path / "a", processing_exception_handler="log_and_continue")
    single, single_out = make_task(tmp_path / "b", processing_exception_handler="log_and_continue")
    records = batch(b"x", b"boom", b"y", b"z", timestamps=[5, 9, 7, 11])
    queue_of(looped).add_batch(records)
    looped.process_all()
    for record in records:
        queue_of(single).add(record)
        while single.process():
            pass
    assert looped_out.sent == single_out.sent
    assert upper_of(looped).seen == upper_of(single).seen
    assert looped.consumed_offsets == single.consumed_offsets
    assert looped.stream_time == single.stream_time == 11


def make_json_task(tmp_path: Path, **config: Any) -> tuple[StreamTask, ListCollector]:
    topology = Topology()
    topology.add_source("src", "in", key_serde=Serdes.String(), value_serde=Serdes.Json())
    topology.add_sink("sink", "out", "src", key_serde=Serdes.String(), value_serde=Serdes.Json())
    return task_of(topology, tmp_path, config)


def test_should_give_json_orjson_refuses_to_the_serde_and_a_corrupt_one_to_the_handler(
    tmp_path: Path,
) -> None:
    task, collector = make_json_task(tmp_path, default_deserialization_exception_handler="log_and_continue")
    values = [b'{"n":1}', b'{"n":NaN}', b'{"n":', b'{"n":1180591620717411303424}', None]
    queue_of(task).add_batch(batch(*values))
    assert task.process_all() == 4
    # each good record comes out as the serdes alone make it (NaN: the standard library's path),
    # the corrupt one is dropped and counted, the tombstone stays a tombstone
    json = Serdes.Json()
    expected = [json.serialize("out", json.deserialize("in", v)) for v in values if v != b'{"n":']
    assert [v for _, _, v, _, _ in collector.sent] == expected
    assert expected[3] is None and len(set(expected)) == 4
    assert task.dropped.total == 1
    assert task.consumed_offsets == {("in", 0): 4}


def test_the_only_queue_defers_its_head_and_the_one_record_path_reads_it(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path)
    queue = queue_of(task)
    queue.add_batch(batch(b"a", b"b"))
    assert queue.head is None and len(queue) == 2  # not deserialized on arrival
    assert task.has_records_queued()
    assert task.process() and task.process() and not task.process()  # it reads the head itself
    assert [(value, timestamp) for _, _, value, timestamp, _ in collector.sent] == [(b"A", 100), (b"B", 101)]


def test_a_second_queue_makes_every_queue_read_its_head_to_merge_by_timestamp(tmp_path: Path) -> None:
    task, collector = make_task(tmp_path)
    first = queue_of(task)
    first.add_batch(batch(b"a", b"c", timestamps=[100, 300]))
    assert first.head is None
    task.add_queue_for("in", 1, first.source, first._extractor)  # as a pattern source adds one
    assert first.head is not None and first.head_time == 100  # read when the second came
    second = task.partition_group.queue_for("in", 1)
    second.add_batch([RawRecord("in", 1, 0, 200, b"k", b"b", ())])
    assert second.head is not None  # a queue among several reads ahead
    assert task.process_all() == 3
    assert [value for _, _, value, _, _ in collector.sent] == [b"A", b"B", b"C"]  # timestamp order
