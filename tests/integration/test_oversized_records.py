"""One oversized record never stops a worker silently.

An output record larger than the producer's ``message.max.bytes`` is refused by ``produce`` at
once: the production handler decides (``continue``: logged, skipped, the rest flows; ``fail``: the
thread stops with an error naming the cause). A ~1 MB poison input record goes through each
deserialization handler; under ``dead_letter`` its dead-letter copy (the record plus the error
headers) would not fit, so it is bounded: the value is dropped with a header saying so, the
stack trace header is cut, and the record is delivered.
"""

from __future__ import annotations

import logging
import struct
import threading

import pytest

from streams_runtime import (
    Consumed,
    DeserializationFailedError,
    KafkaStreams,
    KafkaStreamsState,
    Produced,
    Serdes,
    StreamsBuilder,
    StreamThreadExceptionResponse,
)
from streams_runtime.processor.internals.handlers import MAX_STACKTRACE_HEADER
from streams_runtime.processor.internals.record_collector import ProductionError
from tests.integration.streams_support import (
    make_topics,
    produce,
    read_all,
    streams_config,
    wait_running,
    wait_until,
)

BEFORE, AFTER = 20, 20
BIG = 1_100_000  # over librdkafka's default message.max.bytes (1,000,000)
POISON = 999_000  # fits a producer alone, not with the dead-letter headers


def _inflating_topology(source: str, sink: str):
    """Passes strings through, except ``big``, which becomes a record larger than message.max.bytes."""
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).map_values(
        lambda v: "x" * BIG if v == "big" else v
    ).to(sink, Produced.with_(Serdes.String(), Serdes.String()))
    return builder.build()


def _int_topology(source: str, sink: str):
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.Integer())).map_values(lambda v: v * 10).to(
        sink, Produced.with_(Serdes.String(), Serdes.Integer())
    )
    return builder.build()


def _run_until_error(topology, config) -> tuple[KafkaStreams, list[BaseException]]:
    seen: list[BaseException] = []
    failed = threading.Event()

    def handler(exc: BaseException) -> StreamThreadExceptionResponse:
        seen.append(exc)
        failed.set()
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT

    streams = KafkaStreams(topology, config)
    streams.set_uncaught_exception_handler(handler)
    streams.start()
    try:
        assert failed.wait(45), f"no error reached the handler (state {streams.state})"
        wait_until(lambda: streams.state is KafkaStreamsState.ERROR, 20, "state ERROR")
    finally:
        streams.close(timeout=20)
    return streams, seen


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_an_oversized_output_record_is_skipped_under_continue(
    bootstrap_servers, unique_name, tmp_path, caplog, guarantee
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1})
    values = [f"v{i}" for i in range(BEFORE)] + ["big"] + [f"v{i}" for i in range(BEFORE, BEFORE + AFTER)]
    produce(bootstrap_servers, source, [(b"k", v.encode()) for v in values])
    config = streams_config(
        bootstrap_servers,
        app,
        tmp_path,
        default_production_exception_handler="continue",
        processing_guarantee=guarantee,
    )
    caplog.set_level(logging.WARNING, logger="streams_runtime.processor")
    with KafkaStreams(_inflating_topology(source, sink), config) as streams:
        streams.start()
        wait_running(streams)
        out = read_all(bootstrap_servers, sink, 1, BEFORE + AFTER)
        assert streams.state is KafkaStreamsState.RUNNING
    assert [m.value().decode() for m in out] == [v for v in values if v != "big"]
    skipped = [
        r.getMessage() for r in caplog.records if "default_production_exception_handler=continue" in r.message
    ]
    assert len(skipped) == 1, skipped
    assert (
        sink in skipped[0]
        and "MSG_SIZE_TOO_LARGE" in skipped[0]
        and "message.max.bytes=1000000" in skipped[0]
    )


def test_an_oversized_output_record_stops_the_thread_under_fail_naming_the_cause(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1})
    produce(bootstrap_servers, source, [(b"k", b"v0"), (b"k", b"big"), (b"k", b"v2")])
    config = streams_config(bootstrap_servers, app, tmp_path)  # default handler: fail
    streams, seen = _run_until_error(_inflating_topology(source, sink), config)
    assert len(seen) == 1 and isinstance(seen[0], ProductionError), seen
    message = str(seen[0])
    assert (
        sink in message
        and "MSG_SIZE_TOO_LARGE" in message
        and "default_production_exception_handler=fail" in message
    )
    assert streams.state is KafkaStreamsState.ERROR


def _produce_poison(bootstrap: str, source: str) -> None:
    records = [(b"k", struct.pack(">i", i)) for i in range(BEFORE)]
    records.append((b"poison", b"\xff" * POISON))
    records += [(b"k", struct.pack(">i", i)) for i in range(BEFORE, BEFORE + AFTER)]
    produce(bootstrap, source, records)


@pytest.mark.parametrize("handler", ["dead_letter", "log_and_continue"])
def test_a_one_megabyte_poison_record_does_not_stop_the_worker(
    bootstrap_servers, unique_name, tmp_path, handler
):
    source, sink, dlq, app = unique_name("in"), unique_name("out"), unique_name("dlq"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1, dlq: 1})
    _produce_poison(bootstrap_servers, source)
    extra = {"dead_letter_topic": dlq} if handler == "dead_letter" else {}
    config = streams_config(
        bootstrap_servers, app, tmp_path, default_deserialization_exception_handler=handler, **extra
    )
    with KafkaStreams(_int_topology(source, sink), config) as streams:
        streams.start()
        wait_running(streams)
        out = read_all(bootstrap_servers, sink, 1, BEFORE + AFTER)
        dead = read_all(bootstrap_servers, dlq, 1, 1, timeout=10 if handler == "dead_letter" else 2)
        assert streams.state is KafkaStreamsState.RUNNING
    assert [struct.unpack(">i", m.value())[0] for m in out] == [i * 10 for i in range(BEFORE + AFTER)]
    if handler == "log_and_continue":
        assert dead == []
        return
    assert len(dead) == 1
    record = dead[0]
    headers = dict(record.headers())
    assert record.key() == b"poison"
    assert record.value() is None
    assert headers["__streams.errors.value.dropped"] == f"{POISON} bytes".encode()
    assert headers["__streams.errors.topic"] == source.encode()
    assert headers["__streams.errors.offset"] == str(BEFORE).encode()
    assert b"SerializationError" in headers["__streams.errors.exception"]
    assert 0 < len(headers["__streams.errors.stacktrace"]) <= MAX_STACKTRACE_HEADER


def test_a_one_megabyte_poison_record_under_log_and_fail_names_its_cause(
    bootstrap_servers, unique_name, tmp_path
):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 1, sink: 1})
    _produce_poison(bootstrap_servers, source)
    config = streams_config(bootstrap_servers, app, tmp_path)  # default: log_and_fail
    streams, seen = _run_until_error(_int_topology(source, sink), config)
    assert len(seen) == 1 and isinstance(seen[0], DeserializationFailedError), seen
    assert f"topic={source} partition=0 offset={BEFORE}" in str(seen[0])
    assert "log_and_fail" in str(seen[0])
    assert streams.state is KafkaStreamsState.ERROR
