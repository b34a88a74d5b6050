"""Replays Kafka Streams' KStreamKTableJoinTest and KStreamKTableLeftJoinTest: a stream joined
with a table.

Only stream records trigger output; table updates (including deletes) only change what later stream
records find; the left join emits every stream record, ``value+null`` when the table has no row for
its key (the shared scenarios run as both joins). A result carries the stream record's timestamp.
Kafka Streams' test gives table records random timestamps to show they do not matter; we use a fixed
spread of unrelated timestamps.
"""

from streams_runtime import Consumed, Serdes, StreamsBuilder

from .windows_joins_support import STREAM_TABLE_JOINS, StreamTableJoin, joined, take, warnings

KEYS = (0, 1, 2, 3)


@STREAM_TABLE_JOINS
def test_stream_record_finds_nothing_in_an_empty_table(make_config, capture, left):
    """Mirrors KStreamKTableJoinTest.shouldNotJoinWithEmptyTableOnStreamUpdates and
    KStreamKTableLeftJoinTest.shouldJoinWithEmptyTableOnStreamUpdates."""
    join = StreamTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", None, k) for k in KEYS[:2]])


@STREAM_TABLE_JOINS
def test_table_updates_do_not_trigger_output(make_config, capture, left):
    """Mirrors KStreamKTable{,Left}JoinTest.shouldNotJoinOnTableUpdates."""
    join = StreamTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_stream(2, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", None, k) for k in KEYS[:2]])
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", f"Y{k}" if k < 2 else None, k) for k in KEYS])
        join.push_to_table(4, "YY")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", f"YY{k}", k) for k in KEYS])
        join.push_to_table(4, "YYY")
        assert take(capture) == []


@STREAM_TABLE_JOINS
def test_stream_records_find_the_keys_the_table_has(make_config, capture, left):
    """Mirrors KStreamKTableJoinTest.shouldJoinOnlyIfMatchFoundOnStreamUpdates and
    KStreamKTableLeftJoinTest.shouldJoinRegardlessIfMatchFoundOnStreamUpdates."""
    join = StreamTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_table(2, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", f"Y{k}" if k < 2 else None, k) for k in KEYS])


@STREAM_TABLE_JOINS
def test_table_tombstone_removes_the_join_partner(make_config, capture, left):
    """Mirrors KStreamKTable{,Left}JoinTest.shouldClearTableEntryOnNullValueUpdates."""
    join = StreamTableJoin(make_config, capture, left=left)
    with join.driver:
        join.push_to_table(4, "Y")
        assert take(capture) == []
        join.push_to_stream(4, "X")
        assert take(capture) == joined(left, [(k, f"X{k}", f"Y{k}", k) for k in KEYS])
        join.push_deletes_to_table(2)
        assert take(capture) == []
        join.push_to_stream(4, "XX")
        assert take(capture) == joined(left, [(k, f"XX{k}", f"Y{k}" if k >= 2 else None, k) for k in KEYS])


def test_null_stream_key_is_skipped_with_a_warning(make_config, capture, caplog):
    """Mirrors KStreamKTableJoinTest.shouldLogAndMeterWhenSkippingNullLeftKey."""
    join = StreamTableJoin(make_config, capture, left=False)
    caplog.set_level("WARNING")
    with join.driver:
        join.driver.create_input_topic("streamTopic", Serdes.Integer(), Serdes.String()).pipe_input(None, "A")
        assert (
            "Skipping record due to null join key or value. topic=[streamTopic] partition=[0] offset=[0]"
            in warnings(caplog)
        )


def test_null_stream_value_is_skipped_with_a_warning(make_config, capture, caplog):
    """Mirrors KStreamKTableJoinTest.shouldLogAndMeterWhenSkippingNullLeftValue."""
    join = StreamTableJoin(make_config, capture, left=False)
    caplog.set_level("WARNING")
    with join.driver:
        join.driver.create_input_topic("streamTopic", Serdes.Integer(), Serdes.String()).pipe_input(1, None)
        assert (
            "Skipping record due to null join key or value. topic=[streamTopic] partition=[0] offset=[0]"
            in warnings(caplog)
        )


EXPECTED_TOPOLOGY_WITH_GENERATED_REPARTITION_TOPIC = """\
Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])
      --> KSTREAM-MAP-0000000007
    Processor: KSTREAM-MAP-0000000007 (stores: [])
      --> KSTREAM-FILTER-0000000009
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-FILTER-0000000009 (stores: [])
      --> KSTREAM-SINK-0000000008
      <-- KSTREAM-MAP-0000000007
    Sink: KSTREAM-SINK-0000000008 (topic: KSTREAM-MAP-0000000007-repartition)
      <-- KSTREAM-FILTER-0000000009

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000010 (topics: [KSTREAM-MAP-0000000007-repartition])
      --> KSTREAM-JOIN-0000000011, KSTREAM-JOIN-0000000016
    Processor: KSTREAM-JOIN-0000000011 (stores: [topic2-STATE-STORE-0000000001])
      --> KSTREAM-SINK-0000000012
      <-- KSTREAM-SOURCE-0000000010
    Processor: KSTREAM-JOIN-0000000016 (stores: [topic3-STATE-STORE-0000000004])
      --> KSTREAM-SINK-0000000017
      <-- KSTREAM-SOURCE-0000000010
    Source: KSTREAM-SOURCE-0000000002 (topics: [topic2])
      --> KTABLE-SOURCE-0000000003
    Source: KSTREAM-SOURCE-0000000005 (topics: [topic3])
      --> KTABLE-SOURCE-0000000006
    Sink: KSTREAM-SINK-0000000012 (topic: out-one)
      <-- KSTREAM-JOIN-0000000011
    Sink: KSTREAM-SINK-0000000017 (topic: out-two)
      <-- KSTREAM-JOIN-0000000016
    Processor: KTABLE-SOURCE-0000000003 (stores: [topic2-STATE-STORE-0000000001])
      --> none
      <-- KSTREAM-SOURCE-0000000002
    Processor: KTABLE-SOURCE-0000000006 (stores: [topic3-STATE-STORE-0000000004])
      --> none
      <-- KSTREAM-SOURCE-0000000005

"""


def test_rekeyed_stream_is_repartitioned_once_before_two_table_joins():
    """Mirrors KStreamKTableJoinTest.shouldReuseRepartitionTopicWithGeneratedName: a key-changing map
    upstream of two stream-table joins inserts one repartition topic that both joins read."""
    builder = StreamsBuilder()
    stream_a = builder.stream("topic", Consumed.with_(Serdes.String(), Serdes.String()))
    table_b = builder.table("topic2", Consumed.with_(Serdes.String(), Serdes.String()))
    table_c = builder.table("topic3", Consumed.with_(Serdes.String(), Serdes.String()))
    rekeyed = stream_a.map(lambda key, value: (value, key))
    rekeyed.join(table_b, lambda v1, v2: v1 + v2).to("out-one")
    rekeyed.join(table_c, lambda v1, v2: v1 + v2).to("out-two")

    assert str(builder.build().describe()) == (EXPECTED_TOPOLOGY_WITH_GENERATED_REPARTITION_TOPIC)
