"""Bad input in the live runtime.

dead_letter: a corrupt record lands in the DLQ (with the error headers) and processing continues;
log_and_fail: the thread stops with a clear error and the uncaught-exception policy is applied
(REPLACE_THREAD first, then SHUTDOWN_CLIENT -> ERROR); SHUTDOWN_APPLICATION stops every instance
of the application (each goes PENDING_ERROR -> ERROR).
"""

from __future__ import annotations

import struct
import threading
import time

from streams_runtime import (
    ApplicationShutdownRequestedError,
    Consumed,
    DeserializationFailedError,
    KafkaStreams,
    KafkaStreamsState,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamThreadExceptionResponse,
)
from tests.integration.streams_support import (
    make_topics,
    produce,
    read_all,
    streams_config,
    wait_running,
    wait_until,
)

GOOD_BEFORE, GOOD_AFTER = 50, 50


def _topology(source: str, sink: str):
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.Integer())).map_values(lambda v: v * 10).to(
        sink, Produced.with_(Serdes.String(), Serdes.Integer())
    )
    return builder.build()


def _produce_with_one_corrupt_record(bootstrap: str, source: str) -> None:
    records = [(b"k", struct.pack(">i", i)) for i in range(GOOD_BEFORE)]
    records.append((b"k", b"not-an-int"))
    records += [(b"k", struct.pack(">i", i)) for i in range(GOOD_BEFORE, GOOD_BEFORE + GOOD_AFTER)]
    produce(bootstrap, source, records)


def test_should_send_a_corrupt_record_to_the_dead_letter_topic_and_continue(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, dlq, app = unique_name("in"), unique_name("out"), unique_name("dlq"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1, dlq: 1})
    _produce_with_one_corrupt_record(bootstrap_servers, source)
    config = streams_config(
        bootstrap_servers,
        app,
        tmp_path,
        default_deserialization_exception_handler="dead_letter",
        dead_letter_topic=dlq,
    )
    with KafkaStreams(_topology(source, sink), config) as streams:
        streams.start()
        wait_running(streams)
        out = read_all(bootstrap_servers, sink, 1, GOOD_BEFORE + GOOD_AFTER)
        dead = read_all(bootstrap_servers, dlq, 1, 1)
        assert streams.state is KafkaStreamsState.RUNNING
    values = [struct.unpack(">i", m.value())[0] for m in out]
    assert values == [i * 10 for i in range(GOOD_BEFORE + GOOD_AFTER)]
    assert len(dead) == 1 and dead[0].value() == b"not-an-int"
    headers = dict(dead[0].headers())
    assert headers["__streams.errors.topic"] == source.encode()
    assert headers["__streams.errors.offset"] == str(GOOD_BEFORE).encode()
    assert b"SerializationError" in headers["__streams.errors.exception"]


def test_should_stop_the_thread_and_apply_the_uncaught_exception_policy_with_log_and_fail(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1})
    _produce_with_one_corrupt_record(bootstrap_servers, source)
    seen: list[BaseException] = []
    states: list[KafkaStreamsState] = []
    error_reached = threading.Event()

    def handler(exc: BaseException) -> StreamThreadExceptionResponse:
        seen.append(exc)
        if len(seen) == 1:
            return StreamThreadExceptionResponse.REPLACE_THREAD
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT

    def listener(new, old):
        states.append(new)
        if new is KafkaStreamsState.ERROR:
            error_reached.set()

    streams = KafkaStreams(_topology(source, sink), streams_config(bootstrap_servers, app, tmp_path))
    streams.set_uncaught_exception_handler(handler)
    streams.set_state_listener(listener)
    streams.start()
    try:
        assert error_reached.wait(45), f"states: {states}"
    finally:
        streams.close(timeout=20)
    assert len(seen) == 2  # the replacement thread met the same record
    assert all(isinstance(e, DeserializationFailedError) for e in seen)
    assert f"topic={source} partition=0 offset={GOOD_BEFORE}" in str(seen[0])
    assert states[-2:] == [KafkaStreamsState.PENDING_ERROR, KafkaStreamsState.ERROR]
    assert streams.state is KafkaStreamsState.ERROR
    out = read_all(bootstrap_servers, sink, 1, GOOD_BEFORE, timeout=5)
    # As in Kafka Streams, the queue deserializes its next head when the record before it is
    # taken, so the record just before the corrupt one fails with it (and is never committed).
    assert {struct.unpack(">i", m.value())[0] for m in out} == {i * 10 for i in range(GOOD_BEFORE - 1)}


def test_should_shut_down_every_instance_when_the_handler_answers_shutdown_application(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 2, sink: 2})
    seen: list[BaseException] = []
    reached_error = [threading.Event(), threading.Event()]
    states: list[list[KafkaStreamsState]] = [[], []]

    def handler(exc: BaseException) -> StreamThreadExceptionResponse:
        seen.append(exc)
        return StreamThreadExceptionResponse.SHUTDOWN_APPLICATION

    clients = []
    for i in range(2):
        config = streams_config(bootstrap_servers, app, tmp_path / f"i{i}")
        streams = KafkaStreams(_topology(source, sink), config)
        streams.set_uncaught_exception_handler(handler)

        def listener(new, old, i=i):
            states[i].append(new)
            if new is KafkaStreamsState.ERROR:
                reached_error[i].set()

        streams.set_state_listener(listener)
        clients.append(streams)
    try:
        for streams in clients:
            streams.start()
        wait_running(*clients)

        def active_counts() -> list[int]:
            return [sum(len(md.active_tasks) for md in c.metadata_for_local_threads()) for c in clients]

        # one task each once the second client's join was rebalanced in (on Apache Kafka the first
        # client can run a generation of its own first)
        wait_until(
            lambda: active_counts() == [1, 1], 30, lambda: f"one task on each client: {active_counts()}"
        )
        _produce_with_one_corrupt_record(bootstrap_servers, source)  # one partition: one instance fails
        started = time.monotonic()
        assert all(event.wait(15) for event in reached_error), f"states: {states}"
        elapsed = time.monotonic() - started
    finally:
        for streams in clients:
            streams.close(timeout=20)
    assert len(seen) == 1 and isinstance(seen[0], DeserializationFailedError)  # only the failing thread
    assert elapsed < 10, elapsed
    for i, streams in enumerate(clients):
        assert states[i][-2:] == [KafkaStreamsState.PENDING_ERROR, KafkaStreamsState.ERROR]
        assert streams.state is KafkaStreamsState.ERROR
    other = [c for c in clients if not any(isinstance(e, DeserializationFailedError) for e in c.errors)]
    assert len(other) == 1
    assert [type(e) for e in other[0].errors] == [ApplicationShutdownRequestedError]
