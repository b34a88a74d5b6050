"""The GlobalStreamThread's handling of corrupt global records, without a broker: the global task is
fed fake consumer messages and the dead-letter producer is the in-memory client supplier's. Dead-letter
records get the task path's headers, the producer exists only once one was sent, the checkpoint
is written only after its acks, and log_and_continue / log_and_fail keep their behaviour."""

from __future__ import annotations

import functools
import struct
from types import SimpleNamespace
from typing import Any

import pytest

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder
from streams_runtime.config import StreamsConfig
from streams_runtime.errors import DeserializationFailedError
from streams_runtime.kafka.clients import KafkaError, KafkaException
from streams_runtime.processor.internals.global_stream_thread import GLOBAL_DIR, GlobalStreamThread
from streams_runtime.processor.internals.record_collector import ProductionError
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.state.stores import Stores
from streams_runtime.testing import InMemoryClientSupplier
from streams_runtime.testing.in_memory_clients import InMemoryProducer
from tests import fakes

TOPIC, STORE, DLQ = "scores", "scores-store", "scores-dlq"


#: a record of the global topic
FakeMessage = functools.partial(fakes.FakeMessage, topic=TOPIC)


EVENTS: list[str] = []


class EventProducer(InMemoryProducer):
    """The in-memory producer, noting in :data:`EVENTS` when acknowledgements are served and when
    it closes (the order the checkpoint must keep)."""

    def poll(self, timeout: float = -1) -> int:
        served = super().poll(timeout)
        EVENTS.append("dead-letter acks")
        return served

    def flush(self, timeout: float = -1) -> int:
        left = super().flush(timeout)
        EVENTS.append("dead-letter acks")
        return left

    def close(self, timeout: float = -1) -> bool:
        closed = super().close(timeout)
        EVENTS.append("producer closed")
        return closed


class EventSupplier(InMemoryClientSupplier):
    """A thread's own in-memory cluster (with the dead-letter topic); its producers note events."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster.create_topic(DLQ, 1)

    def get_producer(self, bootstrap_servers: str, overrides: Any = None) -> InMemoryProducer:
        producer = EventProducer(self.cluster, overrides or {})
        self.producers.append(producer)
        return producer


def supplier_of(thread: GlobalStreamThread) -> EventSupplier:
    return thread._runtime.client_supplier  # noqa: SLF001


@pytest.fixture
def make_thread(tmp_path):
    EVENTS.clear()
    threads: list[GlobalStreamThread] = []

    def make(in_memory: bool = False, **config: Any) -> GlobalStreamThread:
        builder = StreamsBuilder()
        store = Stores.in_memory_key_value_store(STORE) if in_memory else STORE
        builder.global_table(
            TOPIC, Consumed.with_(Serdes.String(), Serdes.Integer()), Materialized.as_(store)
        )
        props = {
            "application_id": "app",
            "bootstrap_servers": "unused:9092",
            "state_dir": str(tmp_path),
            **config,
        }
        state_directory = StateDirectory(tmp_path, "app")
        write_checkpoint = state_directory.write_checkpoint

        def recording_write_checkpoint(task_id: Any, offsets: Any) -> None:
            EVENTS.append(f"checkpoint {dict(offsets)}")
            write_checkpoint(task_id, offsets)

        state_directory.write_checkpoint = recording_write_checkpoint
        runtime = SimpleNamespace(
            config=StreamsConfig(props),
            client_id="app-client",
            bootstrap_servers="unused:9092",
            client_supplier=EventSupplier(),
            global_topics={TOPIC: 1},
            builder=builder.build().internal_builder,
            state_directory=state_directory,
        )
        thread = GlobalStreamThread(runtime)
        thread._task = thread._build_task()  # noqa: SLF001 (step 1 without the consumer)
        threads.append(thread)
        return thread

    yield make
    for thread in threads:
        thread._close()  # noqa: SLF001


def good(offset: int, i: int) -> FakeMessage:
    return FakeMessage(offset, f"u{i}".encode(), struct.pack(">i", i))


def test_should_dead_letter_a_corrupt_global_record_with_the_task_path_headers(make_thread):
    thread = make_thread(default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ)
    corrupt = FakeMessage(1, b"bad", b"xx", [("origin", b"test")])
    assert thread._apply([good(0, 0), corrupt, good(2, 2)]) == 3  # noqa: SLF001

    assert thread.stores[STORE].get("u0").value == 0 and thread.stores[STORE].get("u2").value == 2
    [producer] = supplier_of(thread).producers
    assert producer.config["client.id"] == "app-client-GlobalStreamThread-producer"
    [record] = supplier_of(thread).cluster.records(DLQ)
    assert (record.key, record.value, record.timestamp) == (b"bad", b"xx", 1_001)
    assert record.headers[0] == ("origin", b"test")
    named = dict(record.headers[1:])
    assert named["__streams.errors.topic"] == TOPIC.encode()
    assert named["__streams.errors.partition"] == b"0"
    assert named["__streams.errors.offset"] == b"1"
    assert named["__streams.errors.exception"] == b"SerializationError"
    assert {"__streams.errors.message", "__streams.errors.stacktrace"} <= named.keys()


def test_should_write_the_checkpoint_only_after_the_dead_letter_records_are_acknowledged(make_thread):
    thread = make_thread(default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ)
    thread._apply([good(0, 0), FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001
    thread._checkpoint()  # noqa: SLF001
    assert EVENTS == ["dead-letter acks", f"checkpoint {{{(TOPIC, 0)!r}: 1}}"]


def test_should_not_move_the_checkpoint_past_a_record_whose_dead_letter_write_failed(make_thread):
    thread = make_thread(default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ)
    refused = KafkaException(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "broker said no"))
    supplier_of(thread).cluster.faults.inject("delivery", refused, times=10)
    thread._apply([good(0, 0), FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001
    with pytest.raises(ProductionError, match=DLQ):
        thread._checkpoint()  # noqa: SLF001
    assert not any(e.startswith("checkpoint") for e in EVENTS)
    assert thread._runtime.state_directory.read_checkpoint(GLOBAL_DIR) == {}  # noqa: SLF001


def test_should_create_no_producer_until_a_record_is_dead_lettered_and_close_it_on_shutdown(make_thread):
    thread = make_thread(default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ)
    thread._apply([good(0, 0), good(1, 1)])  # noqa: SLF001
    thread._checkpoint()  # noqa: SLF001
    assert supplier_of(thread).producers == []
    thread._apply([FakeMessage(2, b"bad", b"xx")])  # noqa: SLF001
    assert len(supplier_of(thread).producers) == 1
    thread._ready.set()  # noqa: SLF001 (a clean run: close checkpoints first)
    thread._close()  # noqa: SLF001
    checkpoint = f"checkpoint {{{(TOPIC, 0)!r}: 2}}"
    # the producer's close flushes what is left, then closes
    assert EVENTS[-4:] == ["dead-letter acks", checkpoint, "dead-letter acks", "producer closed"]


def test_should_skip_a_corrupt_global_record_without_a_producer_under_log_and_continue(make_thread):
    thread = make_thread(default_deserialization_exception_handler="log_and_continue")
    assert thread._apply([good(0, 0), FakeMessage(1, b"bad", b"xx"), good(2, 2)]) == 3  # noqa: SLF001
    assert thread.stores[STORE].get("u2").value == 2
    assert supplier_of(thread).producers == []


def test_should_fail_on_a_corrupt_global_record_under_log_and_fail(make_thread):
    thread = make_thread()
    with pytest.raises(DeserializationFailedError, match=f"topic={TOPIC} partition=0 offset=1"):
        thread._apply([good(0, 0), FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001
    assert supplier_of(thread).producers == []


def dead_lettered_offsets(thread: GlobalStreamThread) -> list[bytes]:
    """The source offsets of the records ``thread`` dead-lettered (each thread has its own cluster)."""
    return [dict(r.headers)["__streams.errors.offset"] for r in supplier_of(thread).cluster.records(DLQ)]


def restart(make_thread, thread: GlobalStreamThread, ends: int, in_memory: bool) -> GlobalStreamThread:
    """Close ``thread`` cleanly (it checkpoints) and start a new one on the same state directory,
    up to the point where ``_restore`` has read the checkpoint (the log is ``[0, ends)``)."""
    thread._ready.set()  # noqa: SLF001 (a clean run: close checkpoints first)
    thread._close()  # noqa: SLF001
    again = make_thread(
        in_memory=in_memory, default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ
    )
    tp = (TOPIC, 0)
    again._collector.dead_lettered_up_to = again._dead_letter_watermark({tp: 0}, {tp: ends})  # noqa: SLF001
    return again


@pytest.mark.parametrize("in_memory", [False, True], ids=["rocksdb", "in-memory"])
def test_should_not_dead_letter_a_record_again_when_it_is_reread_at_or_below_the_checkpoint(
    make_thread, in_memory
):
    thread = make_thread(
        in_memory=in_memory, default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ
    )
    thread._apply([good(0, 0), FakeMessage(1, b"bad", b"xx"), good(2, 2)])  # noqa: SLF001
    assert dead_lettered_offsets(thread) == [b"1"]

    # the restore of a store without a trusted checkpoint re-reads the topic from its start
    again = restart(make_thread, thread, ends=5, in_memory=in_memory)
    assert (
        again._apply(
            [
                good(0, 0),
                FakeMessage(1, b"bad", b"xx"),
                good(2, 2),  # noqa: SLF001
                FakeMessage(3, b"bad2", b"xx"),
                good(4, 4),
            ]
        )
        == 5
    )
    assert again.stores[STORE].get("u2").value == 2, "re-read records are still applied"
    assert dead_lettered_offsets(again) == [b"3"], "only the record past the checkpoint is dead-lettered"

    # and the checkpoint written now covers offset 3: a second restart sends nothing
    third = restart(make_thread, again, ends=5, in_memory=in_memory)
    third._apply([good(0, 0), FakeMessage(1, b"bad", b"xx"), FakeMessage(3, b"bad2", b"xx")])  # noqa: SLF001
    assert dead_lettered_offsets(third) == []


def test_should_dead_letter_again_a_record_past_the_checkpoint_so_nothing_is_lost(make_thread):
    """A crash after the send but before the checkpoint: the ack was never confirmed, so the
    record is sent again (at-least-once for the tail past the checkpoint)."""
    thread = make_thread(
        in_memory=True, default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ
    )
    thread._apply([good(0, 0)])  # noqa: SLF001
    thread._checkpoint()  # noqa: SLF001
    thread._apply([FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001 (then the process dies: no checkpoint)
    thread._task.close()  # noqa: SLF001
    thread._task = None  # noqa: SLF001
    again = make_thread(
        in_memory=True, default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ
    )
    tp = (TOPIC, 0)
    again._collector.dead_lettered_up_to = again._dead_letter_watermark({tp: 0}, {tp: 2})  # noqa: SLF001
    again._apply([good(0, 0), FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001
    assert dead_lettered_offsets(again) == [b"1"]


def test_should_ignore_a_checkpoint_beyond_the_log_when_deciding_what_was_dead_lettered(make_thread):
    """A fresh broker (docs/decisions/0001-embedded-broker.md): the checkpoint names offsets of records that
    no longer exist."""
    thread = make_thread(
        in_memory=True, default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ
    )
    thread._apply([good(0, 0), good(1, 1), good(2, 2), good(3, 3)])  # noqa: SLF001
    again = restart(make_thread, thread, ends=2, in_memory=True)  # checkpoint 3, log [0, 2)
    assert again._collector.dead_lettered_up_to == {}  # noqa: SLF001
    again._apply([good(0, 0), FakeMessage(1, b"bad", b"xx")])  # noqa: SLF001
    assert dead_lettered_offsets(again) == [b"1"]


def test_should_not_let_a_source_records_own_headers_fake_the_dead_letter_source(make_thread):
    thread = make_thread(default_deserialization_exception_handler="dead_letter", dead_letter_topic=DLQ)
    thread._collector.dead_lettered_up_to = {(TOPIC, 0): 5}  # noqa: SLF001
    forged = [
        ("__streams.errors.topic", TOPIC.encode()),
        ("__streams.errors.partition", b"0"),
        ("__streams.errors.offset", b"0"),
    ]
    thread._apply([FakeMessage(7, b"bad", b"xx", forged)])  # noqa: SLF001
    assert dead_lettered_offsets(thread) == [b"7"]
