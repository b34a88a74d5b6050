"""Replays Kafka Streams' TopologyTestDriverTest (streams/test-utils): the driver's processing loop,
record metadata, forwarding between sub-topologies, punctuation on stream and wall-clock time, and
the CustomMaxAggregator scenarios (a store pre-populated through the driver, flushed by punctuations)."""

import pytest

from streams_runtime import (
    Processor,
    PunctuationType,
    Record,
    Serdes,
    Stores,
    StreamsError,
    TestRecord,
    Topology,
    TopologyTestDriver,
)

SOURCE_TOPIC_1 = "source-topic-1"
SOURCE_TOPIC_2 = "source-topic-2"
SINK_TOPIC_1 = "sink-topic-1"
SINK_TOPIC_2 = "sink-topic-2"
HEADERS = (("key", b"value"),)
KEY1 = b""
VALUE1 = b""
TIMESTAMP1 = 42
KEY2 = b""
VALUE2 = b""
TIMESTAMP2 = 43


@pytest.fixture
def config(make_config):
    """TopologyTestDriverTest's config: a fixed application id and byte-array default serdes."""
    return make_config(Serdes.Bytes(), Serdes.Bytes(), application_id="test-TopologyTestDriver")


class MockProcessor(Processor):
    """Records lifecycle calls and every record with its metadata, then forwards it unchanged."""

    def __init__(self, punctuations=()):
        self.punctuations = punctuations
        self.initialized = False
        self.closed = False
        self.processed = []

    def init(self, context):
        self.context = context
        self.initialized = True
        for interval_ms, punctuation_type, callback in self.punctuations:
            context.schedule(interval_ms, punctuation_type, callback)

    def process(self, record):
        metadata = self.context.record_metadata()
        self.processed.append(
            (record.key, record.value, record.headers, record.timestamp, metadata.offset, metadata.topic)
        )
        self.context.forward(record)

    def close(self):
        self.closed = True


class MockProcessorSupplier:
    def __init__(self, punctuations=()):
        self.punctuations = punctuations
        self.processors = []

    def __call__(self):
        processor = MockProcessor(self.punctuations)
        self.processors.append(processor)
        return processor


def single_processor_topology(supplier):
    topology = Topology()
    topology.add_source("source", SOURCE_TOPIC_1)
    topology.add_processor("processor", supplier, "source")
    return topology


def source_sink_topology():
    topology = Topology()
    topology.add_source("source", SOURCE_TOPIC_1)
    topology.add_sink("sink", SINK_TOPIC_1, "source")
    return topology


def pipe(driver, topic, record):
    driver.create_input_topic(topic, Serdes.Bytes(), Serdes.Bytes()).pipe_record(record)


def test_should_init_processor(config):
    """Mirrors TopologyTestDriverTest.shouldInitProcessor."""
    supplier = MockProcessorSupplier()
    with TopologyTestDriver(single_processor_topology(supplier), config):
        assert supplier.processors[0].initialized


def test_should_close_processor(config):
    """Mirrors TopologyTestDriverTest.shouldCloseProcessor."""
    supplier = MockProcessorSupplier()
    driver = TopologyTestDriver(single_processor_topology(supplier), config)
    driver.close()
    assert supplier.processors[0].closed


def test_should_throw_for_unknown_topic(config):
    """Mirrors TopologyTestDriverTest.shouldThrowForUnknownTopic (Kafka: IllegalArgumentException)."""
    with TopologyTestDriver(Topology(), config) as driver:
        with pytest.raises(StreamsError):
            pipe(driver, "unknownTopic", TestRecord(None, None, 0))


def test_should_process_record_for_topic(config):
    """Mirrors TopologyTestDriverTest.shouldProcessRecordForTopic."""
    with TopologyTestDriver(source_sink_topology(), config) as driver:
        pipe(driver, SOURCE_TOPIC_1, TestRecord(KEY1, VALUE1, TIMESTAMP1, HEADERS))
        output = driver.create_output_topic(SINK_TOPIC_1, Serdes.Bytes(), Serdes.Bytes()).read_record()
        assert (output.key, output.value) == (KEY1, VALUE1)


def test_should_set_record_metadata(config):
    """Mirrors TopologyTestDriverTest.shouldSetRecordMetadata: key, value, headers, timestamp,
    offset 0 and the source topic reach the processor."""
    supplier = MockProcessorSupplier()
    with TopologyTestDriver(single_processor_topology(supplier), config) as driver:
        pipe(driver, SOURCE_TOPIC_1, TestRecord(KEY1, VALUE1, TIMESTAMP1, HEADERS))
    assert supplier.processors[0].processed == [(KEY1, VALUE1, HEADERS, TIMESTAMP1, 0, SOURCE_TOPIC_1)]


def test_should_send_record_via_correct_source_topic(config):
    """Mirrors TopologyTestDriverTest.shouldSendRecordViaCorrectSourceTopic: each topic has its own
    offsets, and a record without headers arrives with none."""
    topology = Topology()
    suppliers = {}
    for topic in (SOURCE_TOPIC_1, SOURCE_TOPIC_2):
        suppliers[topic] = MockProcessorSupplier()
        topology.add_source(f"{topic}-source", topic)
        topology.add_processor(f"{topic}-processor", suppliers[topic], f"{topic}-source")
    topology.add_sink(
        "sink-topic", SINK_TOPIC_1, f"{SOURCE_TOPIC_1}-processor", f"{SOURCE_TOPIC_2}-processor"
    )

    with TopologyTestDriver(topology, config) as driver:
        processed1 = suppliers[SOURCE_TOPIC_1].processors[0].processed
        processed2 = suppliers[SOURCE_TOPIC_2].processors[0].processed
        input1 = driver.create_input_topic(SOURCE_TOPIC_1, Serdes.Bytes(), Serdes.Bytes())
        input2 = driver.create_input_topic(SOURCE_TOPIC_2, Serdes.Bytes(), Serdes.Bytes())

        input1.pipe_record(TestRecord(KEY1, VALUE1, TIMESTAMP1, HEADERS))
        assert processed1 == [(KEY1, VALUE1, HEADERS, TIMESTAMP1, 0, SOURCE_TOPIC_1)]
        assert processed2 == []

        input2.pipe_record(TestRecord(KEY2, VALUE2, TIMESTAMP2))
        assert len(processed1) == 1
        assert processed2 == [(KEY2, VALUE2, (), TIMESTAMP2, 0, SOURCE_TOPIC_2)]


def test_should_forward_records_from_subtopology_to_subtopology(config):
    """Mirrors TopologyTestDriverTest.shouldForwardRecordsFromSubtopologyToSubtopology: a sink topic
    that another source reads is fed back into the topology."""
    topology = Topology()
    topology.add_source("source-1", SOURCE_TOPIC_1)
    topology.add_sink("sink-1", SINK_TOPIC_1, "source-1")
    topology.add_source("source-2", SINK_TOPIC_1)
    topology.add_sink("sink-2", SINK_TOPIC_2, "source-2")

    with TopologyTestDriver(topology, config) as driver:
        pipe(driver, SOURCE_TOPIC_1, TestRecord(KEY1, VALUE1, TIMESTAMP1, HEADERS))
        first = driver.create_output_topic(SINK_TOPIC_1, Serdes.Bytes(), Serdes.Bytes()).read_record()
        second = driver.create_output_topic(SINK_TOPIC_2, Serdes.Bytes(), Serdes.Bytes()).read_record()
        assert (first.key, first.value) == (KEY1, VALUE1)
        assert (second.key, second.value) == (KEY1, VALUE1)


def test_should_populate_global_store(config):
    """Mirrors TopologyTestDriverTest.shouldPopulateGlobalStore."""

    class GlobalUpdater(Processor):
        def init(self, context):
            self.store = context.get_state_store(f"{SOURCE_TOPIC_1}-globalStore")

        def process(self, record):
            self.store.put(record.key, record.value)

    topology = Topology()
    topology.add_global_store(
        Stores.key_value_store_builder(Stores.in_memory_key_value_store(f"{SOURCE_TOPIC_1}-globalStore")),
        SOURCE_TOPIC_1,
        SOURCE_TOPIC_1,
        f"{SOURCE_TOPIC_1}-processor",
        GlobalUpdater,
    )
    with TopologyTestDriver(topology, config) as driver:
        global_store = driver.get_key_value_store(f"{SOURCE_TOPIC_1}-globalStore")
        assert global_store is not None
        assert f"{SOURCE_TOPIC_1}-globalStore" in driver.get_all_state_stores()

        pipe(driver, SOURCE_TOPIC_1, TestRecord(b"k", b"v", TIMESTAMP1, HEADERS))
        assert global_store.get(b"k") == b"v"


def test_should_punctuate_on_stream_time(config):
    """Mirrors TopologyTestDriverTest.shouldPunctuateOnStreamsTime: every 10 ms of stream time,
    the first at the first record, later ones aligned to multiples of 10 but reported at the
    stream time that crossed them."""
    punctuated_at = []
    supplier = MockProcessorSupplier([(10, PunctuationType.STREAM_TIME, punctuated_at.append)])
    expected = []
    with TopologyTestDriver(single_processor_topology(supplier), config) as driver:
        for timestamp, punctuates in [
            (42, True), (42, False), (51, True), (52, False), (61, True), (65, False),
            (71, True), (72, False), (95, True), (101, True), (102, False),
        ]:  # fmt: skip
            if punctuates:
                expected.append(timestamp)
            pipe(driver, SOURCE_TOPIC_1, TestRecord(KEY1, VALUE1, timestamp))
            assert punctuated_at == expected, f"after a record at {timestamp}"


def test_should_punctuate_on_wall_clock_time(config):
    """Mirrors TopologyTestDriverTest.shouldPunctuateOnWallClockTime: a 10 ms schedule from wall
    clock 0 fires at most once per advance, at the wall-clock time reached."""
    punctuated_at = []
    supplier = MockProcessorSupplier([(10, PunctuationType.WALL_CLOCK_TIME, punctuated_at.append)])
    with TopologyTestDriver(
        single_processor_topology(supplier), config, initial_wall_clock_time_ms=0
    ) as driver:
        driver.advance_wall_clock_time(5)
        assert punctuated_at == []
        driver.advance_wall_clock_time(9)
        assert punctuated_at == [14]
        driver.advance_wall_clock_time(1)
        assert punctuated_at == [14]
        driver.advance_wall_clock_time(20)
        assert punctuated_at == [14, 35]
        driver.advance_wall_clock_time(5)
        assert punctuated_at == [14, 35, 40]


class CustomMaxAggregator(Processor):
    """Keeps the max value per key in "aggStore"; forwards the whole store on each punctuation
    (every minute of wall-clock time and every 10 s of stream time)."""

    def init(self, context):
        self.context = context
        context.schedule(60_000, PunctuationType.WALL_CLOCK_TIME, self.flush_store)
        context.schedule(10_000, PunctuationType.STREAM_TIME, self.flush_store)
        self.store = context.get_state_store("aggStore")

    def process(self, record):
        old = self.store.get(record.key)
        if old is None or record.value > old:
            self.store.put(record.key, record.value)

    def flush_store(self, timestamp):
        with self.store.all() as it:
            for kv in it:
                self.context.forward(Record(kv.key, kv.value, timestamp))


@pytest.fixture
def max_aggregator(make_config):
    """TopologyTestDriverTest.setup(): the aggregator with an in-memory "aggStore" holding a=21."""
    topology = Topology()
    topology.add_source("sourceProcessor", "input-topic")
    topology.add_processor("aggregator", CustomMaxAggregator, "sourceProcessor")
    topology.add_state_store(
        Stores.key_value_store_builder(
            Stores.in_memory_key_value_store("aggStore"), Serdes.String(), Serdes.Long()
        ),
        "aggregator",
    )
    topology.add_sink("sinkProcessor", "result-topic", "aggregator")
    config = make_config(Serdes.String(), Serdes.Long(), application_id="test-TopologyTestDriver")
    with TopologyTestDriver(topology, config) as driver:
        store = driver.get_key_value_store("aggStore")
        store.put("a", 21)
        source = driver.create_input_topic("input-topic", Serdes.String(), Serdes.Long())
        result = driver.create_output_topic("result-topic", Serdes.String(), Serdes.Long())
        yield driver, store, source, result


def _read(result):
    record = result.read_record()
    return (record.key, record.value)


def test_should_flush_store_for_first_input(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldFlushStoreForFirstInput."""
    driver, store, source, result = max_aggregator
    source.pipe_input("a", 1, timestamp=9999)
    assert _read(result) == ("a", 21)
    assert result.is_empty()


def test_should_not_update_store_for_smaller_value(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldNotUpdateStoreForSmallerValue."""
    driver, store, source, result = max_aggregator
    source.pipe_input("a", 1, timestamp=9999)
    assert store.get("a") == 21
    assert _read(result) == ("a", 21)
    assert result.is_empty()


def test_should_update_store_for_larger_value(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldNotUpdateStoreForLargerValue (which, despite its name,
    checks that a larger value does replace the stored one)."""
    driver, store, source, result = max_aggregator
    source.pipe_input("a", 42, timestamp=9999)
    assert store.get("a") == 42
    assert _read(result) == ("a", 42)
    assert result.is_empty()


def test_should_update_store_for_new_key(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldUpdateStoreForNewKey: the flush emits both keys in order."""
    driver, store, source, result = max_aggregator
    source.pipe_input("b", 21, timestamp=9999)
    assert store.get("b") == 21
    assert _read(result) == ("a", 21)
    assert _read(result) == ("b", 21)
    assert result.is_empty()


def test_should_punctuate_if_event_time_advances(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldPunctuateIfEvenTimeAdvances."""
    driver, store, source, result = max_aggregator
    source.pipe_input("a", 1, timestamp=9999)
    assert _read(result) == ("a", 21)

    source.pipe_input("a", 1, timestamp=9999)
    assert result.is_empty()

    source.pipe_input("a", 1, timestamp=10000)
    assert _read(result) == ("a", 21)
    assert result.is_empty()


def test_should_punctuate_if_wall_clock_time_advances(max_aggregator):
    """Mirrors TopologyTestDriverTest.shouldPunctuateIfWallClockTimeAdvances."""
    driver, store, source, result = max_aggregator
    driver.advance_wall_clock_time(60_000)
    assert _read(result) == ("a", 21)
    assert result.is_empty()


def test_should_enqueue_later_outputs_after_earlier_ones(make_config):
    """Mirrors TopologyTestDriverTest.shouldEnqueueLaterOutputsAfterEarlierOnes: a processor that
    writes back into its own input topic; the echo comes out before the recursive copy."""

    class Recursive(Processor):
        def process(self, record):
            if not record.value.startswith("recurse-"):
                self.context.forward(record.with_value("recurse-" + record.value), "recursiveSink")
            self.context.forward(record, "sink")

    topology = Topology()
    topology.add_source("source", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_processor("recursiveProcessor", Recursive, "source")
    topology.add_sink(
        "recursiveSink", "input", "recursiveProcessor", key_serde=Serdes.String(), value_serde=Serdes.String()
    )
    topology.add_sink(
        "sink", "output", "recursiveProcessor", key_serde=Serdes.String(), value_serde=Serdes.String()
    )

    with TopologyTestDriver(topology, make_config()) as driver:
        driver.create_input_topic("input", Serdes.String(), Serdes.String()).pipe_input("B", "beta")
        out = driver.create_output_topic("output", Serdes.String(), Serdes.String())
        assert [(kv.key, kv.value) for kv in out.read_key_values_to_list()] == [
            ("B", "beta"),
            ("B", "recurse-beta"),
        ]
