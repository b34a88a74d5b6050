"""Replays Kafka Streams' SuppressScenarioTest: ``suppress`` on tables and windowed tables.

Each scenario writes the raw table changes to ``output-raw`` and the suppressed ones to
``output-suppressed`` and compares both, in order and with timestamps. ``until_time_limit`` holds each
key's latest value until stream time passes its first buffering time + the limit (or the buffer is
full and may emit early); ``until_window_closes`` emits exactly one final result per window once stream
time passes window end + grace, and nothing for windows that never got a result.
"""

from streams_runtime import (
    BufferConfig,
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Serdes,
    SessionWindows,
    SlidingWindows,
    StreamsBuilder,
    Suppressed,
    TimeWindows,
    TopologyTestDriver,
)

from .support import records
from .windows_joins_support import java_str

LONG_MAX = 2**63 - 1


def _drain(driver, topic, value_serde=None):
    return records(driver.create_output_topic(topic, Serdes.String(), value_serde or Serdes.Long()))


def _value_counts(builder, count_materialized=None):
    """Kafka Streams' fixture: a table of k -> v, regrouped by value and counted."""
    grouped = builder.table(
        "input",
        Consumed.with_(Serdes.String(), Serdes.String()),
        Materialized.with_(Serdes.String(), Serdes.String()).with_caching_disabled().with_logging_disabled(),
    ).group_by(lambda key, value: (value, key), Grouped.with_(Serdes.String(), Serdes.String()))
    return grouped.count() if count_materialized is None else grouped.count(count_materialized)


def _raw_and_suppressed(value_counts, suppressed, *, windowed=False):
    produced = Produced.with_(Serdes.String(), Serdes.Long())
    suppressed_stream = value_counts.suppress(suppressed).to_stream()
    raw_stream = value_counts.to_stream()
    if windowed:
        suppressed_stream = suppressed_stream.map(lambda key, value: (str(key), value))
        raw_stream = raw_stream.map(lambda key, value: (str(key), value))
    suppressed_stream.to("output-suppressed", produced)
    raw_stream.to("output-raw", produced)


RAW_COUNTS_AFTER_THREE_RECORDS = [("v1", 1, 0), ("v1", 0, 1), ("v2", 1, 1), ("v1", 1, 2)]


def test_zero_time_limit_emits_every_update_immediately(make_config):
    """Mirrors SuppressScenarioTest.shouldImmediatelyEmitEventsWithZeroEmitAfter."""
    builder = StreamsBuilder()
    _raw_and_suppressed(_value_counts(builder), Suppressed.until_time_limit(0, BufferConfig.unbounded()))

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        topic.pipe_input("k1", "v1", 0)
        topic.pipe_input("k1", "v2", 1)
        topic.pipe_input("k2", "v1", 2)
        assert _drain(driver, "output-raw") == RAW_COUNTS_AFTER_THREE_RECORDS
        assert _drain(driver, "output-suppressed") == RAW_COUNTS_AFTER_THREE_RECORDS
        topic.pipe_input("x", "x", 3)
        assert _drain(driver, "output-raw") == [("x", 1, 3)]
        assert _drain(driver, "output-suppressed") == [("x", 1, 3)]
        topic.pipe_input("x", "y", 4)
        assert _drain(driver, "output-raw") == [("x", 0, 4), ("y", 1, 4)]
        assert _drain(driver, "output-suppressed") == [("x", 0, 4), ("y", 1, 4)]


def test_time_limit_holds_each_key_until_stream_time_passes_the_limit(make_config):
    """Mirrors SuppressScenarioTest.shouldSuppressIntermediateEventsWithTimeLimit (limit 2 ms)."""
    builder = StreamsBuilder()
    _raw_and_suppressed(_value_counts(builder), Suppressed.until_time_limit(2, BufferConfig.unbounded()))

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        topic.pipe_input("k1", "v1", 0)
        topic.pipe_input("k1", "v2", 1)
        topic.pipe_input("k2", "v1", 2)
        assert _drain(driver, "output-raw") == RAW_COUNTS_AFTER_THREE_RECORDS
        assert _drain(driver, "output-suppressed") == [("v1", 1, 2)]
        topic.pipe_input("tick", "tick", 3)  # advances stream time to 3
        assert _drain(driver, "output-raw") == [("tick", 1, 3)]
        assert _drain(driver, "output-suppressed") == [("v2", 1, 1)]
        topic.pipe_input("tick", "tock", 4)
        assert _drain(driver, "output-raw") == [("tick", 0, 4), ("tock", 1, 4)]
        # "tick" was first buffered at 3, so at stream time 4 it is still held
        assert _drain(driver, "output-suppressed") == []


def test_record_limit_emits_early_when_the_buffer_is_full(make_config):
    """Mirrors SuppressScenarioTest.shouldSuppressIntermediateEventsWithRecordLimit (max 1 record)."""
    builder = StreamsBuilder()
    _raw_and_suppressed(
        _value_counts(builder, Materialized.with_(Serdes.String(), Serdes.Long())),
        Suppressed.until_time_limit(LONG_MAX, BufferConfig.max_records(1).emit_early_when_full()),
    )

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        topic.pipe_input("k1", "v1", 0)
        topic.pipe_input("k1", "v2", 1)
        topic.pipe_input("k2", "v1", 2)
        assert _drain(driver, "output-raw") == RAW_COUNTS_AFTER_THREE_RECORDS
        # consecutive updates of v1 collapse to the latest; the last update waits for another key
        assert _drain(driver, "output-suppressed") == [("v1", 0, 1), ("v2", 1, 1)]
        topic.pipe_input("x", "x", 3)
        assert _drain(driver, "output-raw") == [("x", 1, 3)]
        assert _drain(driver, "output-suppressed") == [("v1", 1, 2)]


def test_byte_limit_emits_early_when_the_buffer_is_full(make_config):
    """Mirrors SuppressScenarioTest.shouldSuppressIntermediateEventsWithBytesLimit (max 200 bytes, which
    Kafka Streams' buffer accounting fills with two entries)."""
    builder = StreamsBuilder()
    _raw_and_suppressed(
        _value_counts(builder),
        Suppressed.until_time_limit(LONG_MAX, BufferConfig.max_bytes(200).emit_early_when_full()),
    )

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        topic.pipe_input("k1", "v1", 0)
        topic.pipe_input("k1", "v2", 1)
        topic.pipe_input("k2", "v1", 2)
        assert _drain(driver, "output-raw") == RAW_COUNTS_AFTER_THREE_RECORDS
        assert _drain(driver, "output-suppressed") == [("v1", 0, 1), ("v2", 1, 1)]
        topic.pipe_input("x", "x", 3)
        assert _drain(driver, "output-raw") == [("x", 1, 3)]
        assert _drain(driver, "output-suppressed") == [("v1", 1, 2)]


def _windowed_counts(builder, windows, materialized):
    return (
        builder.stream("input", Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by(lambda key, value: key, Grouped.with_(Serdes.String(), Serdes.String()))
        .windowed_by(windows)
        .count(materialized)
    )


def test_final_results_for_time_windows(make_config):
    """Mirrors SuppressScenarioTest.shouldSupportFinalResultsForTimeWindows: size 2, grace 1; the last
    record (at 0, stream time 5) is beyond grace and dropped from both outputs."""
    builder = StreamsBuilder()
    counts = _windowed_counts(
        builder, TimeWindows.of_size_and_grace(2, 1), Materialized.as_("counts").with_caching_disabled()
    )
    _raw_and_suppressed(counts, Suppressed.until_window_closes(BufferConfig.unbounded()), windowed=True)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        for timestamp in (0, 1, 2, 1, 0, 5, 0):
            topic.pipe_input("k1", "v1", timestamp)
        assert _drain(driver, "output-raw") == [
            ("[k1@0/2]", 1, 0),
            ("[k1@0/2]", 2, 1),
            ("[k1@2/4]", 1, 2),
            ("[k1@0/2]", 3, 1),
            ("[k1@0/2]", 4, 1),
            ("[k1@4/6]", 1, 5),
        ]
        assert _drain(driver, "output-suppressed") == [("[k1@0/2]", 4, 1), ("[k1@2/4]", 1, 2)]


def test_final_results_for_time_windows_with_a_large_jump(make_config):
    """Mirrors SuppressScenarioTest.shouldSupportFinalResultsForTimeWindowsWithLargeJump: size 2, grace 2;
    the record at 0 after stream time 4 is dropped, and the jump to 30 closes every earlier window."""
    builder = StreamsBuilder()
    counts = _windowed_counts(
        builder,
        TimeWindows.of_size_and_grace(2, 2),
        Materialized.as_("counts").with_caching_disabled().with_key_serde(Serdes.String()),
    )
    _raw_and_suppressed(counts, Suppressed.until_window_closes(BufferConfig.unbounded()), windowed=True)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        for timestamp in (0, 1, 2, 0, 3, 0, 4, 0, 30):
            topic.pipe_input("k1", "v1", timestamp)
        assert _drain(driver, "output-raw") == [
            ("[k1@0/2]", 1, 0),
            ("[k1@0/2]", 2, 1),
            ("[k1@2/4]", 1, 2),
            ("[k1@0/2]", 3, 1),
            ("[k1@2/4]", 2, 3),
            ("[k1@0/2]", 4, 1),
            ("[k1@4/6]", 1, 4),
            ("[k1@30/32]", 1, 30),
        ]
        assert _drain(driver, "output-suppressed") == [
            ("[k1@0/2]", 4, 1),
            ("[k1@2/4]", 2, 3),
            ("[k1@4/6]", 1, 4),
        ]


def test_final_results_for_sliding_windows(make_config):
    """Mirrors SuppressScenarioTest.shouldSupportFinalResultsForSlidingWindows: time difference 5, grace 15.
    Kafka Streams' test sorts the raw output by (key text, timestamp), stably; so does this one."""
    builder = StreamsBuilder()
    counts = _windowed_counts(
        builder,
        SlidingWindows.of_time_difference_and_grace(5, 15),
        Materialized.as_("counts").with_caching_disabled().with_key_serde(Serdes.String()),
    )
    _raw_and_suppressed(counts, Suppressed.until_window_closes(BufferConfig.unbounded()), windowed=True)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        for timestamp in (10, 11, 10, 13, 10, 24, 5, 7, 90):
            topic.pipe_input("k1", "v1", timestamp)
        raw = sorted(_drain(driver, "output-raw"), key=lambda record: (record[0], record[2]))
        assert raw == [
            ("[k1@11/16]", 1, 11),
            ("[k1@11/16]", 2, 13),
            ("[k1@12/17]", 1, 13),
            ("[k1@19/24]", 1, 24),
            ("[k1@5/10]", 1, 10),
            ("[k1@5/10]", 2, 10),
            ("[k1@5/10]", 3, 10),
            ("[k1@5/10]", 4, 10),
            ("[k1@5/10]", 5, 10),
            ("[k1@6/11]", 2, 11),
            ("[k1@6/11]", 3, 11),
            ("[k1@6/11]", 4, 11),
            ("[k1@6/11]", 5, 11),
            ("[k1@8/13]", 4, 13),
            ("[k1@8/13]", 5, 13),
            ("[k1@85/90]", 1, 90),
        ]
        assert _drain(driver, "output-suppressed") == [
            ("[k1@5/10]", 5, 10),
            ("[k1@6/11]", 5, 11),
            ("[k1@8/13]", 5, 13),
            ("[k1@11/16]", 2, 13),
            ("[k1@12/17]", 1, 13),
            ("[k1@19/24]", 1, 24),
        ]


def test_final_results_for_session_windows(make_config):
    """Mirrors SuppressScenarioTest.shouldSupportFinalResultsForSessionWindows: gap 5, no grace. A merge
    retracts the old session with a tombstone on the raw output; the suppressed output sees only the final
    sessions, and the late record for the closed first session is dropped from both."""
    builder = StreamsBuilder()
    counts = _windowed_counts(
        builder,
        SessionWindows.of_inactivity_gap_with_no_grace(5),
        Materialized.as_("counts").with_caching_disabled(),
    )
    _raw_and_suppressed(counts, Suppressed.until_window_closes(BufferConfig.unbounded()), windowed=True)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("input", Serdes.String(), Serdes.String())
        topic.pipe_input("k1", "v1", 0)
        topic.pipe_input("k1", "v1", 5)
        topic.pipe_input("k1", "v1", 1)  # out of order, but its session is still open
        topic.pipe_input("k2", "v1", 11)  # another key still advances stream time
        topic.pipe_input("k1", "v1", 5)  # late: the first session closed at stream time 11
        topic.pipe_input("k1", "v1", 30)
        assert _drain(driver, "output-raw") == [
            ("[k1@0/0]", 1, 0),
            ("[k1@0/0]", None, 0),
            ("[k1@0/5]", 2, 5),
            ("[k1@0/5]", None, 5),
            ("[k1@0/5]", 3, 5),
            ("[k2@11/11]", 1, 11),
            ("[k1@30/30]", 1, 30),
        ]
        assert _drain(driver, "output-suppressed") == [("[k1@0/5]", 3, 5), ("[k2@11/11]", 1, 11)]


def test_suppress_before_group_by(make_config):
    """Mirrors SuppressScenarioTest.shouldWorkBeforeGroupBy."""
    builder = StreamsBuilder()
    (
        builder.table("topic", Consumed.with_(Serdes.String(), Serdes.String()))
        .suppress(Suppressed.until_time_limit(10, BufferConfig.unbounded()))
        .group_by(lambda key, value: (key, value), Grouped.with_(Serdes.String(), Serdes.String()))
        .count()
        .to_stream()
        .to("output", Produced.with_(Serdes.String(), Serdes.Long()))
    )

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        topic = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        topic.pipe_input("A", "a", 0)
        topic.pipe_input("tick", "tick", 10)
        assert _drain(driver, "output") == [("A", 1, 0)]


def _outer_join_with_suppressed_side(make_config, suppressed_side):
    builder = StreamsBuilder()
    left = builder.table("left", Consumed.with_(Serdes.String(), Serdes.String()))
    right = builder.table("right", Consumed.with_(Serdes.String(), Serdes.String()))
    suppressed = Suppressed.until_time_limit(10, BufferConfig.unbounded())
    if suppressed_side == "left":
        left = left.suppress(suppressed)
    else:
        right = right.suppress(suppressed)
    left.outer_join(right, lambda lv, rv: f"({java_str(lv)},{java_str(rv)})").to_stream().to(
        "output", Produced.with_(Serdes.String(), Serdes.String())
    )
    driver = TopologyTestDriver(builder.build(), make_config())
    right_topic = driver.create_input_topic("right", Serdes.String(), Serdes.String())
    left_topic = driver.create_input_topic("left", Serdes.String(), Serdes.String())
    return driver, left_topic, right_topic


def test_suppress_before_the_right_side_of_a_table_join(make_config):
    """Mirrors SuppressScenarioTest.shouldWorkBeforeJoinRight."""
    driver, left, right = _outer_join_with_suppressed_side(make_config, "right")
    with driver:
        right.pipe_input("B", "1", 0)
        right.pipe_input("A", "1", 0)
        assert _drain(driver, "output", Serdes.String()) == []
        right.pipe_input("tick", "tick", 10)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(null,1)", 0), ("B", "(null,1)", 0)]
        right.pipe_input("A", "2", 11)
        assert _drain(driver, "output", Serdes.String()) == []
        left.pipe_input("A", "a", 12)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(a,1)", 12)]
        left.pipe_input("B", "b", 12)
        assert _drain(driver, "output", Serdes.String()) == [("B", "(b,1)", 12)]
        left.pipe_input("A", "b", 13)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(b,1)", 13)]
        right.pipe_input("tick", "tick1", 21)
        assert _drain(driver, "output", Serdes.String()) == [("tick", "(null,tick1)", 21), ("A", "(b,2)", 13)]


def test_suppress_before_the_left_side_of_a_table_join(make_config):
    """Mirrors SuppressScenarioTest.shouldWorkBeforeJoinLeft."""
    driver, left, right = _outer_join_with_suppressed_side(make_config, "left")
    with driver:
        left.pipe_input("B", "1", 0)
        left.pipe_input("A", "1", 0)
        assert _drain(driver, "output", Serdes.String()) == []
        left.pipe_input("tick", "tick", 10)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(1,null)", 0), ("B", "(1,null)", 0)]
        left.pipe_input("A", "2", 11)
        assert _drain(driver, "output", Serdes.String()) == []
        right.pipe_input("A", "a", 12)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(1,a)", 12)]
        right.pipe_input("B", "b", 12)
        assert _drain(driver, "output", Serdes.String()) == [("B", "(1,b)", 12)]
        right.pipe_input("A", "b", 13)
        assert _drain(driver, "output", Serdes.String()) == [("A", "(1,b)", 13)]
        left.pipe_input("tick", "tick1", 21)
        assert _drain(driver, "output", Serdes.String()) == [("tick", "(tick1,null)", 21), ("A", "(2,b)", 13)]
