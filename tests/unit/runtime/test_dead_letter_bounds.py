"""A dead-letter record always fits under the producer's message.max.bytes."""

from __future__ import annotations

from streams_runtime.processor.internals.handlers import (
    DLQ_KEY_DROPPED,
    DLQ_VALUE_DROPPED,
    MAX_MESSAGE_HEADER,
    MAX_STACKTRACE_HEADER,
    bounded_dead_letter,
    dead_letter_headers,
)
from streams_runtime.processor.internals.record_collector import record_size


def _raise_deep(depth: int) -> BaseException:
    def recurse(n: int) -> None:
        if n == 0:
            raise ValueError("bad record " + "x" * 5000)
        recurse(n - 1)

    try:
        recurse(depth)
    except ValueError as exc:
        return exc
    raise AssertionError("unreachable")


def test_error_headers_are_cut_keeping_the_lines_that_name_the_error():
    headers = dict(dead_letter_headers(_raise_deep(200), "in", 3, 42))
    assert len(headers["__streams.errors.message"]) <= MAX_MESSAGE_HEADER
    trace = headers["__streams.errors.stacktrace"]
    assert len(trace) <= MAX_STACKTRACE_HEADER
    assert b"bytes cut" in trace
    assert trace.startswith(b"Traceback") and b"ValueError: bad record" in trace
    assert headers["__streams.errors.offset"] == b"42"


def test_a_record_that_fits_is_kept_whole():
    headers = dead_letter_headers(ValueError("x"), "in", 0, 1)
    assert bounded_dead_letter(b"k", b"v" * 1000, headers, 1_000_000) == (b"k", b"v" * 1000, headers)


def test_a_value_that_would_not_fit_is_dropped_with_a_header_saying_so():
    headers = dead_letter_headers(_raise_deep(50), "in", 0, 1)
    key, value, out = bounded_dead_letter(b"k", b"v" * 999_000, headers, 1_000_000)
    assert key == b"k" and value is None
    assert dict(out)[DLQ_VALUE_DROPPED] == b"999000 bytes"
    assert record_size(key, value, out) < 1_000_000


def test_a_key_that_would_not_fit_either_is_dropped_too():
    headers = dead_letter_headers(ValueError("x"), "in", 0, 1)
    key, value, out = bounded_dead_letter(b"k" * 2000, b"v" * 10, headers, 2048)
    assert key is None and value is None
    assert dict(out)[DLQ_KEY_DROPPED] == b"2000 bytes"
    assert record_size(key, value, out) <= 2048
