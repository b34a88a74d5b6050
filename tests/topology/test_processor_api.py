"""The Processor API through the driver: forwarding, metadata, stores, changelogs, punctuation, time."""

from __future__ import annotations

import pytest

from streams_runtime import (
    Consumed,
    Processor,
    PunctuationType,
    Serdes,
    Stores,
    StreamsBuilder,
    StreamsError,
    Topology,
    TopologyTestDriver,
)
from streams_runtime.errors import TimestampError

S = Serdes.String()
CONFIG = {"application_id": "papi", "default_key_serde": "string", "default_value_serde": "string"}


class Collect(Processor):
    seen: list = []

    def init(self, context):
        self.context = context

    def process(self, record):
        meta = self.context.record_metadata()
        Collect.seen.append((record.key, record.value, record.timestamp, meta, record.headers))


@pytest.fixture(autouse=True)
def _reset():
    Collect.seen = []


def _simple(processor_cls, *extra):
    topology = Topology().add_source("source", "input").add_processor("p", processor_cls, "source")
    topology.add_sink("sink", "output", "p")
    for build in extra:
        build(topology)
    return topology


def test_forward_reaches_every_child_in_insertion_order_or_only_the_named_child():
    order = []

    class Router(Processor):
        def init(self, context):
            self.context = context

        def process(self, record):
            if record.value == "only-b":
                self.context.forward(record, child_name="b")
            else:
                self.context.forward(record)

    def tag(name):
        class Tag(Processor):
            def process(self, record):
                order.append((name, record.value))

        return Tag

    topology = (
        Topology()
        .add_source("s", "input")
        .add_processor("r", Router, "s")
        .add_processor("b", tag("b"), "r")
        .add_processor("a", tag("a"), "r")
    )
    with TopologyTestDriver(topology, CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k", "all", 1)
        topic.pipe_input("k", "only-b", 2)
    assert order == [("b", "all"), ("a", "all"), ("b", "only-b")]


def test_forward_to_an_unknown_child_fails_naming_it():
    class Bad(Processor):
        def init(self, context):
            self.context = context

        def process(self, record):
            self.context.forward(record, child_name="nobody")

    with TopologyTestDriver(_simple(Bad), CONFIG) as driver:
        with pytest.raises(StreamsError, match="nobody"):
            driver.create_input_topic("input", S, S).pipe_input("k", "v", 1)


def test_record_metadata_gives_topic_partition_offset_and_headers_reach_the_processor():
    topology = Topology().add_source("s", "input").add_processor("c", Collect, "s")
    with TopologyTestDriver(topology, CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k", "v1", 5, {"h": b"1"})
        topic.pipe_input("k", "v2", 7)
    (k1, v1, t1, m1, h1), (_, _, t2, m2, h2) = Collect.seen
    assert (k1, v1, t1, h1) == ("k", "v1", 5, (("h", b"1"),))
    assert (m1.topic, m1.partition, m1.offset) == ("input", 0, 0)
    assert (m2.offset, t2, h2) == (1, 7, ())


def test_store_writes_are_logged_to_the_application_changelog_topic():
    class Count(Processor):
        def init(self, context):
            self.context = context
            self.store = context.get_state_store("counts")

        def process(self, record):
            count = (self.store.get(record.key) or 0) + 1
            self.store.put(record.key, count)
            self.context.forward(record.with_value(str(count)))

    store = Stores.key_value_store_builder(Stores.in_memory_key_value_store("counts"), S, Serdes.Long())
    topology = _simple(Count, lambda t: t.add_state_store(store, "p"))
    with TopologyTestDriver(topology, CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("a", "x", 10)
        topic.pipe_input("a", "y", 20)
        changelog = driver.create_output_topic("papi-counts-changelog", S, Serdes.Long())
        assert [(r.key, r.value, r.timestamp) for r in changelog.read_records_to_list()] == [
            ("a", 1, 10),
            ("a", 2, 20),
        ]
        assert driver.create_output_topic("output", S, S).read_values_to_list() == ["1", "2"]
        assert driver.get_key_value_store("counts").get("a") == 2
        assert "papi-counts-changelog" in driver.produced_topic_names()


def test_stream_time_punctuation_fires_as_record_timestamps_advance_and_can_be_cancelled():
    fired = []

    class Punctuated(Processor):
        def init(self, context):
            self.context = context
            self.handle = context.schedule(10, PunctuationType.STREAM_TIME, self.punctuate)

        def punctuate(self, timestamp):
            fired.append(timestamp)
            if timestamp >= 30:
                self.handle.cancel()

        def process(self, record):
            pass

    with TopologyTestDriver(_simple(Punctuated), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        for ts in (0, 5, 10, 11, 35, 41, 60):
            topic.pipe_input("k", "v", ts)
    # aligned to 0; fires at the first record, then each time stream time reaches the next multiple
    assert fired == [0, 10, 35]


def test_wall_clock_punctuation_fires_on_advance_and_can_forward_downstream():
    class Ticker(Processor):
        def init(self, context):
            self.context = context
            context.schedule(100, PunctuationType.WALL_CLOCK_TIME, self.tick)

        def tick(self, now):
            from streams_runtime import Record

            self.context.forward(Record("tick", str(now), now))

        def process(self, record):
            pass

    with TopologyTestDriver(_simple(Ticker), CONFIG, initial_wall_clock_time_ms=1000) as driver:
        out = driver.create_output_topic("output", S, S)
        driver.advance_wall_clock_time(50)
        assert out.is_empty()
        driver.advance_wall_clock_time(60)
        driver.advance_wall_clock_time(250)
        assert [(r.key, r.value, r.timestamp) for r in out.read_records_to_list()] == [
            ("tick", "1110", 1110),
            ("tick", "1360", 1360),
        ]


def test_schedule_rejects_intervals_below_one_millisecond():
    class Bad(Processor):
        def init(self, context):
            context.schedule(0, PunctuationType.STREAM_TIME, lambda ts: None)

        def process(self, record):
            pass

    with pytest.raises(StreamsError, match="1 millisecond"):
        TopologyTestDriver(_simple(Bad), CONFIG)


def test_stream_time_is_the_largest_timestamp_processed_by_the_task():
    times = []

    class Watch(Processor):
        def init(self, context):
            self.context = context

        def process(self, record):
            times.append(self.context.current_stream_time_ms())

    with TopologyTestDriver(_simple(Watch), CONFIG) as driver:
        topic = driver.create_input_topic("input", S, S)
        for ts in (10, 5, 20, 15):
            topic.pipe_input("k", "v", ts)
    assert times == [10, 10, 20, 20]


def test_user_timestamp_extractor_sets_record_time_and_output_timestamps():
    builder = StreamsBuilder()
    extractor = lambda record, partition_time: int(record.value)  # noqa: E731
    builder.stream("input", Consumed.with_(S, S).with_timestamp_extractor(extractor)).to("output")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        driver.create_input_topic("input", S, S).pipe_input("k", "42", 1)
        assert driver.create_output_topic("output", S, S).read_record().timestamp == 42


def test_negative_timestamps_fail_by_default_and_are_skipped_and_counted_with_log_and_skip():
    builder = StreamsBuilder()
    builder.stream("input").to("output")
    topology = builder.build()
    with TopologyTestDriver(topology, CONFIG) as driver:
        with pytest.raises(TimestampError, match="negative"):
            driver.create_input_topic("input", S, S).pipe_input("k", "v", -1)
    config = dict(CONFIG, default_timestamp_extractor="log_and_skip_on_invalid")
    with TopologyTestDriver(topology, config) as driver:
        topic = driver.create_input_topic("input", S, S)
        topic.pipe_input("k", "bad", -1)
        topic.pipe_input("k", "good", 3)
        assert driver.create_output_topic("output", S, S).read_values_to_list() == ["good"]
        assert driver.metrics.total("dropped-records") == 1


def test_process_values_cannot_change_the_key():
    class Rekey(Processor):
        def init(self, context):
            self.context = context

        def process(self, record):
            self.context.forward(record.with_key("other"))

    builder = StreamsBuilder()
    builder.stream("input").process_values(Rekey).to("output")
    with TopologyTestDriver(builder.build(), CONFIG) as driver:
        with pytest.raises(StreamsError, match="cannot be changed"):
            driver.create_input_topic("input", S, S).pipe_input("k", "v", 1)
