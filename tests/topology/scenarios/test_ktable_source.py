"""Replays Kafka Streams' KTableSourceTest: a table read from a topic, its tombstones, its store and
the warnings it logs for skipped and out-of-order records."""

import logging

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, TopologyTestDriver

STRINGS = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())


def test_table_source_forwards_updates_and_tombstones(make_config, capture):
    """Mirrors KTableSourceTest.testKTable."""
    builder = StreamsBuilder()
    builder.table(
        "topic1", Consumed(key_serde=Serdes.String(), value_serde=Serdes.Integer())
    ).to_stream().process(capture)

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("topic1", Serdes.String(), Serdes.Integer())
        source.pipe_input("A", 1, timestamp=10)
        source.pipe_input("B", 2, timestamp=11)
        source.pipe_input("C", 3, timestamp=12)
        source.pipe_input("D", 4, timestamp=13)
        source.pipe_input("A", None, timestamp=14)
        source.pipe_input("B", None, timestamp=15)

    assert capture.processed == [
        ("A", 1, 10),
        ("B", 2, 11),
        ("C", 3, 12),
        ("D", 4, 13),
        ("A", None, 14),
        ("B", None, 15),
    ]


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_table_source_skips_null_keys(make_config, capture, caplog):
    """Mirrors KTableSourceTest.kTableShouldLogAndMeterOnSkippedRecords: a null-keyed record is
    skipped with Kafka Streams' warning, and nothing reaches the table."""
    builder = StreamsBuilder()
    builder.table("topic", STRINGS).to_stream().process(capture)

    caplog.set_level(logging.WARNING)
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        source.pipe_input(None, "value", timestamp=0)
        assert "Skipping record due to null key. topic=[topic] partition=[0] offset=[0]" in _warnings(caplog)

    assert capture.processed == []


def test_table_source_logs_out_of_order_update(make_config, caplog):
    """Mirrors KTableSourceTest.kTableShouldLogOnOutOfOrder: an update older than the stored row is
    applied, with a warning naming the store, both timestamps and the record's position."""
    builder = StreamsBuilder()
    builder.table("topic", STRINGS, Materialized.as_("store"))

    caplog.set_level(logging.WARNING)
    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("topic", Serdes.String(), Serdes.String())
        source.pipe_input("key", "value", timestamp=10)
        source.pipe_input("key", "value", timestamp=5)
        assert (
            "Detected out-of-order KTable update for store, old timestamp=[10] new timestamp=[5]. "
            "topic=[topic] partition=[0] offset=[1]."
        ) in _warnings(caplog)


def test_table_source_store_follows_latest_value(make_config):
    """Mirrors KTableSourceTest.testValueGetter: the materialized store "store", value and timestamp
    per key, including out-of-order updates (they still win) and deletes."""
    builder = StreamsBuilder()
    builder.table("topic1", STRINGS, Materialized.as_("store"))

    with TopologyTestDriver(builder.build(), make_config()) as driver:
        source = driver.create_input_topic("topic1", Serdes.String(), Serdes.String())
        store = driver.get_timestamped_key_value_store("store")

        def view():
            out = []
            for key in "ABC":
                found = store.get(key)
                out.append(None if found is None else (found.value, found.timestamp))
            return out

        source.pipe_input("A", "01", timestamp=10)
        source.pipe_input("B", "01", timestamp=20)
        source.pipe_input("C", "01", timestamp=15)
        assert view() == [("01", 10), ("01", 20), ("01", 15)]

        source.pipe_input("A", "02", timestamp=30)
        source.pipe_input("B", "02", timestamp=5)
        assert view() == [("02", 30), ("02", 5), ("01", 15)]

        source.pipe_input("A", "03", timestamp=29)
        assert view() == [("03", 29), ("02", 5), ("01", 15)]

        source.pipe_input("A", None, timestamp=50)
        source.pipe_input("B", None, timestamp=3)
        assert view() == [None, None, ("01", 15)]
