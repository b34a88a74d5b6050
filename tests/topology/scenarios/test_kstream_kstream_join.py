"""Replays Kafka Streams' KStreamKStreamJoinTest: the windowed inner join of two streams.

Both inputs are keyed by Integer with String values; the joiner prints ``left+right``. Every expected
``(key, value, timestamp)`` below is the one Kafka Streams' test asserts, in its order. A joined record
carries the larger of the two input timestamps.
"""

from streams_runtime import Consumed, JoinWindows, Serdes, StreamJoined, StreamsBuilder, TopologyTestDriver

from .windows_joins_support import pipe_each, stream_stream_join, take, warnings

KEYS = (0, 1, 2, 3)


def _assert_same_timestamp_join_sequence(topic1, topic2, capture):
    """The record sequence shared by testJoin and testOuterJoin: everything at timestamp 0."""
    pipe_each(topic1, "A", KEYS[:2], 0)
    assert take(capture) == []

    pipe_each(topic2, "a", KEYS[:2], 0)
    assert take(capture) == [(0, "A0+a0", 0), (1, "A1+a1", 0)]

    pipe_each(topic1, "B", KEYS, 0)
    assert take(capture) == [(0, "B0+a0", 0), (1, "B1+a1", 0)]

    pipe_each(topic2, "b", KEYS, 0)
    assert take(capture) == [
        (0, "A0+b0", 0),
        (0, "B0+b0", 0),
        (1, "A1+b1", 0),
        (1, "B1+b1", 0),
        (2, "B2+b2", 0),
        (3, "B3+b3", 0),
    ]

    pipe_each(topic1, "C", KEYS, 0)
    assert take(capture) == [
        (0, "C0+a0", 0),
        (0, "C0+b0", 0),
        (1, "C1+a1", 0),
        (1, "C1+b1", 0),
        (2, "C2+b2", 0),
        (3, "C3+b3", 0),
    ]

    pipe_each(topic2, "c", KEYS[:2], 0)
    assert take(capture) == [
        (0, "A0+c0", 0),
        (0, "B0+c0", 0),
        (0, "C0+c0", 0),
        (1, "A1+c1", 0),
        (1, "B1+c1", 0),
        (1, "C1+c1", 0),
    ]


def test_join_pairs_every_record_with_all_matches_in_the_other_window(make_config, capture):
    """Mirrors KStreamKStreamJoinTest.testJoin."""
    driver, topic1, topic2 = stream_stream_join(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        _assert_same_timestamp_join_sequence(topic1, topic2, capture)


def test_outer_join_with_long_grace_emits_only_joined_pairs_while_windows_are_open(make_config, capture):
    """Mirrors KStreamKStreamJoinTest.testOuterJoin: with a 24h grace nothing closes, so an outer join
    emits exactly what the inner join does."""
    driver, topic1, topic2 = stream_stream_join(
        make_config, capture, JoinWindows.of_time_difference_and_grace(100, 24 * 60 * 60 * 1000), "outer_join"
    )
    with driver:
        _assert_same_timestamp_join_sequence(topic1, topic2, capture)


def test_windowing_respects_both_window_bounds(make_config, capture):
    """Mirrors KStreamKStreamJoinTest.testWindowing: a 100 ms symmetric window, probing records just
    inside and just outside both bounds from each side."""
    driver, topic1, topic2 = stream_stream_join(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(100)
    )
    with driver:
        pipe_each(topic1, "A", KEYS[:2], 0)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS[:2], 0)
        assert take(capture) == [(0, "A0+a0", 0), (1, "A1+a1", 0)]

        # B0..B3 at 1000..1003; probes from the other side, first above then below.
        pipe_each(topic1, "B", KEYS, 1000, step=1)
        assert take(capture) == []
        pipe_each(topic2, "b", KEYS, 1100)
        assert take(capture) == [
            (0, "B0+b0", 1100),
            (1, "B1+b1", 1100),
            (2, "B2+b2", 1100),
            (3, "B3+b3", 1100),
        ]
        pipe_each(topic2, "c", KEYS, 1101)
        assert take(capture) == [(1, "B1+c1", 1101), (2, "B2+c2", 1101), (3, "B3+c3", 1101)]
        pipe_each(topic2, "d", KEYS, 1102)
        assert take(capture) == [(2, "B2+d2", 1102), (3, "B3+d3", 1102)]
        pipe_each(topic2, "e", KEYS, 1103)
        assert take(capture) == [(3, "B3+e3", 1103)]
        pipe_each(topic2, "f", KEYS, 1104)
        assert take(capture) == []
        pipe_each(topic2, "g", KEYS, 899)
        assert take(capture) == []
        pipe_each(topic2, "h", KEYS, 900)
        assert take(capture) == [(0, "B0+h0", 1000)]
        pipe_each(topic2, "i", KEYS, 901)
        assert take(capture) == [(0, "B0+i0", 1000), (1, "B1+i1", 1001)]
        pipe_each(topic2, "j", KEYS, 902)
        assert take(capture) == [(0, "B0+j0", 1000), (1, "B1+j1", 1001), (2, "B2+j2", 1002)]
        pipe_each(topic2, "k", KEYS, 903)
        assert take(capture) == [
            (0, "B0+k0", 1000),
            (1, "B1+k1", 1001),
            (2, "B2+k2", 1002),
            (3, "B3+k3", 1003),
        ]

        # l0..l3 at 2000..2003 on the other side; probes from the primary side.
        pipe_each(topic2, "l", KEYS, 2000, step=1)
        assert take(capture) == []
        pipe_each(topic1, "C", KEYS, 2100)
        assert take(capture) == [
            (0, "C0+l0", 2100),
            (1, "C1+l1", 2100),
            (2, "C2+l2", 2100),
            (3, "C3+l3", 2100),
        ]
        pipe_each(topic1, "d", KEYS, 2101)
        assert take(capture) == [(1, "d1+l1", 2101), (2, "d2+l2", 2101), (3, "d3+l3", 2101)]
        pipe_each(topic1, "E", KEYS, 2102)
        assert take(capture) == [(2, "E2+l2", 2102), (3, "E3+l3", 2102)]
        pipe_each(topic1, "F", KEYS, 2103)
        assert take(capture) == [(3, "F3+l3", 2103)]
        pipe_each(topic1, "G", KEYS, 2104)
        assert take(capture) == []
        pipe_each(topic1, "H", KEYS, 1899)
        assert take(capture) == []
        pipe_each(topic1, "I", KEYS, 1900)
        assert take(capture) == [(0, "I0+l0", 2000)]
        pipe_each(topic1, "J", KEYS, 1901)
        assert take(capture) == [(0, "J0+l0", 2000), (1, "J1+l1", 2001)]
        pipe_each(topic1, "K", KEYS, 1902)
        assert take(capture) == [(0, "K0+l0", 2000), (1, "K1+l1", 2001), (2, "K2+l2", 2002)]
        pipe_each(topic1, "L", KEYS, 1903)
        assert take(capture) == [
            (0, "L0+l0", 2000),
            (1, "L1+l1", 2001),
            (2, "L2+l2", 2002),
            (3, "L3+l3", 2003),
        ]


def test_asymmetric_window_after_only_joins_later_records(make_config, capture):
    """Mirrors KStreamKStreamJoinTest.testAsymmetricWindowingAfter: before=0, after=100."""
    driver, topic1, topic2 = stream_stream_join(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(0).after(100)
    )
    with driver:
        pipe_each(topic1, "A", KEYS, 1000, step=1)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS, 999)
        assert take(capture) == []
        pipe_each(topic2, "b", KEYS, 1000)
        assert take(capture) == [(0, "A0+b0", 1000)]
        pipe_each(topic2, "c", KEYS, 1001)
        assert take(capture) == [(0, "A0+c0", 1001), (1, "A1+c1", 1001)]
        pipe_each(topic2, "d", KEYS, 1002)
        assert take(capture) == [(0, "A0+d0", 1002), (1, "A1+d1", 1002), (2, "A2+d2", 1002)]
        pipe_each(topic2, "e", KEYS, 1003)
        assert take(capture) == [
            (0, "A0+e0", 1003),
            (1, "A1+e1", 1003),
            (2, "A2+e2", 1003),
            (3, "A3+e3", 1003),
        ]
        pipe_each(topic2, "f", KEYS, 1100)
        assert take(capture) == [
            (0, "A0+f0", 1100),
            (1, "A1+f1", 1100),
            (2, "A2+f2", 1100),
            (3, "A3+f3", 1100),
        ]
        pipe_each(topic2, "g", KEYS, 1101)
        assert take(capture) == [(1, "A1+g1", 1101), (2, "A2+g2", 1101), (3, "A3+g3", 1101)]
        pipe_each(topic2, "h", KEYS, 1102)
        assert take(capture) == [(2, "A2+h2", 1102), (3, "A3+h3", 1102)]
        pipe_each(topic2, "i", KEYS, 1103)
        assert take(capture) == [(3, "A3+i3", 1103)]
        pipe_each(topic2, "j", KEYS, 1104)
        assert take(capture) == []


def test_asymmetric_window_before_only_joins_earlier_records(make_config, capture):
    """Mirrors KStreamKStreamJoinTest.testAsymmetricWindowingBefore: before=100, after=0."""
    driver, topic1, topic2 = stream_stream_join(
        make_config, capture, JoinWindows.of_time_difference_with_no_grace(0).before(100)
    )
    with driver:
        pipe_each(topic1, "A", KEYS, 1000, step=1)
        assert take(capture) == []
        pipe_each(topic2, "a", KEYS, 899)
        assert take(capture) == []
        pipe_each(topic2, "b", KEYS, 900)
        assert take(capture) == [(0, "A0+b0", 1000)]
        pipe_each(topic2, "c", KEYS, 901)
        assert take(capture) == [(0, "A0+c0", 1000), (1, "A1+c1", 1001)]
        pipe_each(topic2, "d", KEYS, 902)
        assert take(capture) == [(0, "A0+d0", 1000), (1, "A1+d1", 1001), (2, "A2+d2", 1002)]
        pipe_each(topic2, "e", KEYS, 903)
        assert take(capture) == [
            (0, "A0+e0", 1000),
            (1, "A1+e1", 1001),
            (2, "A2+e2", 1002),
            (3, "A3+e3", 1003),
        ]
        pipe_each(topic2, "f", KEYS, 1000)
        assert take(capture) == [
            (0, "A0+f0", 1000),
            (1, "A1+f1", 1001),
            (2, "A2+f2", 1002),
            (3, "A3+f3", 1003),
        ]
        pipe_each(topic2, "g", KEYS, 1001)
        assert take(capture) == [(1, "A1+g1", 1001), (2, "A2+g2", 1002), (3, "A3+g3", 1003)]
        pipe_each(topic2, "h", KEYS, 1002)
        assert take(capture) == [(2, "A2+h2", 1002), (3, "A3+h3", 1003)]
        pipe_each(topic2, "i", KEYS, 1003)
        assert take(capture) == [(3, "A3+i3", 1003)]
        pipe_each(topic2, "j", KEYS, 1004)
        assert take(capture) == []


def test_null_value_is_skipped_with_a_warning(make_config, caplog):
    """Mirrors KStreamKStreamJoinTest.
    shouldLogAndMeterOnSkippedRecordsWithNullValueWithBuiltInMetricsVersionLatest."""
    builder = StreamsBuilder()
    left = builder.stream("left", Consumed.with_(Serdes.String(), Serdes.Integer()))
    right = builder.stream("right", Consumed.with_(Serdes.String(), Serdes.Integer()))
    left.join(
        right,
        lambda a, b: a + b,
        JoinWindows.of_time_difference_with_no_grace(100),
        stream_joined=StreamJoined.with_(Serdes.String(), Serdes.Integer(), Serdes.Integer()),
    )

    caplog.set_level("WARNING")
    with TopologyTestDriver(builder.build(), make_config(Serdes.String(), Serdes.String())) as driver:
        driver.create_input_topic("left", Serdes.String(), Serdes.Integer()).pipe_input("A", None)
        assert "Skipping record due to null key or value. topic=[left] partition=[0] offset=[0]" in warnings(
            caplog
        )
