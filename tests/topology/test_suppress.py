"""suppress() through the TopologyTestDriver: final results per window, time limits, bounded
buffers (emit early / shut down), the buffer changelog; and wall-clock punctuation driving
emission when no records arrive."""

from __future__ import annotations

import pytest

from streams_runtime import (
    BufferConfig,
    Consumed,
    Materialized,
    Processor,
    Produced,
    PunctuationType,
    Record,
    Serdes,
    StreamsBuilder,
    StreamsError,
    Suppressed,
    TestRecord,
    TimeWindows,
    TopologyTestDriver,
)

S, L = Serdes.String(), Serdes.Long()


def _final_results_driver(grace=5):
    builder = StreamsBuilder()
    (
        builder.stream("in", Consumed.with_(S, S))
        .group_by_key()
        .windowed_by(TimeWindows.of_size_and_grace(10, grace))
        .count(Materialized.as_("counts"))
        .suppress(Suppressed.until_window_closes(BufferConfig.unbounded()).with_name("final"))
        .to_stream()
        .map(lambda k, v: (f"{k.key}@{k.window.start}", v))
        .to("out", Produced.with_(S, L))
    )
    topology = builder.build()
    driver = TopologyTestDriver(topology)
    return topology, driver, driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)


def test_should_emit_exactly_one_final_result_per_window_when_stream_time_reaches_end_plus_grace():
    _, driver, inp, out = _final_results_driver()
    with driver:
        for key, ts in [("a", 1), ("a", 3), ("b", 4), ("a", 12), ("a", 2), ("a", 14)]:
            inp.pipe_input(key, "x", ts)
        assert out.is_empty()  # stream time 14 < 10 + 5
        inp.pipe_input("a", "x", 15)  # exactly window end + grace
        assert out.read_records_to_list() == [TestRecord("a@0", 3, 3), TestRecord("b@0", 1, 4)]
        inp.pipe_input("a", "x", 30)
        assert out.read_records_to_list() == [TestRecord("a@10", 3, 15)]


def test_final_results_buffer_is_changelogged_with_compaction():
    topology, driver, inp, _ = _final_results_driver()
    with driver:
        inp.pipe_input("a", "x", 1)
        assert "topology-test-driver-final-store-changelog" in driver.produced_topic_names()
    assert topology.internal_topic_configs()["final-store-changelog"]["cleanup.policy"] == "compact"


def test_until_window_closes_rejects_an_emit_early_buffer():
    with pytest.raises(TypeError):
        Suppressed.until_window_closes(BufferConfig.max_records(3))


def _time_limit_driver(suppressed):
    builder = StreamsBuilder()
    (
        builder.table("in", Consumed.with_(S, S), Materialized.as_("t"))
        .suppress(suppressed)
        .to_stream()
        .to("out", Produced.with_(S, S))
    )
    driver = TopologyTestDriver(builder.build())
    return driver, driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, S)


def test_until_time_limit_emits_latest_value_per_key_after_the_limit():
    driver, inp, out = _time_limit_driver(Suppressed.until_time_limit(10, BufferConfig.unbounded()))
    with driver:
        inp.pipe_input("k", "v1", 0)
        inp.pipe_input("k", "v2", 5)
        assert out.is_empty()
        inp.pipe_input("other", "x", 15)  # k buffered at 5: 5 <= 15 - 10
        assert out.read_records_to_list() == [TestRecord("k", "v2", 5)]


def test_until_time_limit_emits_early_when_max_records_is_exceeded():
    driver, inp, out = _time_limit_driver(
        Suppressed.until_time_limit(1000, BufferConfig.max_records(1).emit_early_when_full())
    )
    with driver:
        inp.pipe_input("a", "1", 0)
        assert out.is_empty()
        inp.pipe_input("b", "2", 1)  # two records > 1: the oldest goes out early
        assert out.read_key_values_to_list() == [("a", "1")]


def test_a_suppressed_count_buffers_old_values_in_its_byte_bound():
    """Suppress makes its table send old values, as in Kafka Streams: a count's buffered entry
    holds the old count next to the new one (the first is the initial 0), and a byte-bounded
    buffer fills by both (tests/oracle found it: 47 bytes an entry here, as in Kafka Streams,
    where 39 were counted before)."""
    builder = StreamsBuilder()
    counts = builder.stream("in", Consumed.with_(S, S)).group_by_key().count()
    suppressed = Suppressed.until_time_limit(1000, BufferConfig.max_bytes(90).emit_early_when_full())
    counts.suppress(suppressed).to_stream().to("out", Produced.with_(S, L))
    # without the record cache: every count update reaches the buffer with its old value
    with TopologyTestDriver(builder.build(), {"statestore.cache.max.bytes": 0}) as driver:
        inp, out = driver.create_input_topic("in", S, S), driver.create_output_topic("out", S, L)
        inp.pipe_input("a", "x", 1)  # key 1 + time 8 + context 8 + 8 + 4 + topic 2 + old 8 + new 8
        assert out.is_empty()
        inp.pipe_input("b", "x", 2)  # 94 bytes > 90: the oldest goes out early
        assert out.read_key_values_to_list() == [("a", 1)]


def test_until_time_limit_shuts_down_when_full_if_asked():
    driver, inp, _ = _time_limit_driver(
        Suppressed.until_time_limit(1000, BufferConfig.max_records(1).shut_down_when_full())
    )
    with driver:
        inp.pipe_input("a", "1", 0)
        with pytest.raises(StreamsError):
            inp.pipe_input("b", "2", 1)


class _IdleKeyCloser(Processor):
    """Forwards a marker from a wall-clock punctuator, i.e. with no new records."""

    def init(self, context):
        self.context = context
        context.schedule(
            100, PunctuationType.WALL_CLOCK_TIME, lambda now: context.forward(Record("tick", str(now), now))
        )
        context.schedule(
            10, PunctuationType.STREAM_TIME, lambda ts: context.forward(Record("stream", str(ts), ts))
        )

    def process(self, record):
        pass


def test_wall_clock_punctuation_emits_without_records_and_stream_time_punctuation_follows_records():
    builder = StreamsBuilder()
    builder.stream("in", Consumed.with_(S, S)).process(_IdleKeyCloser).to("out", Produced.with_(S, S))
    with TopologyTestDriver(builder.build(), initial_wall_clock_time_ms=0) as driver:
        out = driver.create_output_topic("out", S, S)
        driver.advance_wall_clock_time(99)
        assert out.is_empty()
        driver.advance_wall_clock_time(1)
        assert out.read_key_values_to_list() == [("tick", "100")]
        inp = driver.create_input_topic("in", S, S)
        inp.pipe_input("k", "v", 25)
        assert out.read_key_values_to_list() == [("stream", "25")]
