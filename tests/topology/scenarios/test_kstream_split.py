"""Replays Kafka Streams' KStreamSplitTest: split() routes each record to the first matching branch."""

from streams_runtime import Branched, Consumed, Serdes, StreamsBuilder, TopologyTestDriver

TOPIC = "topic"
KEYS = [-1, 0, 1, 2, 3, 4, 5, 6, 7]


def is_even(key, value):
    return key % 2 == 0


def is_multiple_of_three(key, value):
    return key % 3 == 0


def is_multiple_of_five(key, value):
    return key % 5 == 0


def is_multiple_of_seven(key, value):
    return key % 7 == 0


def is_negative(key, value):
    return key < 0


def _source(builder):
    return builder.stream(TOPIC, Consumed(key_serde=Serdes.Integer(), value_serde=Serdes.String()))


def _drive(builder, config, *output_topics):
    """Pipe keys -1..7 with values "V<key>" and return each output topic's values."""
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic(TOPIC, Serdes.Integer(), Serdes.String())
        for key in KEYS:
            source.pipe_input(key, f"V{key}")
        return {
            name: driver.create_output_topic(name, Serdes.Integer(), Serdes.String()).read_values_to_list()
            for name in output_topics
        }


def test_split_sends_each_record_to_the_first_matching_branch(make_config):
    """Mirrors KStreamSplitTest.testKStreamSplit: consumers send branches to x2, x3, x5; no default."""
    builder = StreamsBuilder()
    branches = (
        _source(builder)
        .split()
        .branch(is_even, Branched(consumer=lambda ks: ks.to("x2")))
        .branch(is_multiple_of_three, Branched(consumer=lambda ks: ks.to("x3")))
        .branch(is_multiple_of_five, Branched(consumer=lambda ks: ks.to("x5")))
        .no_default_branch()
    )
    assert len(branches) == 0

    out = _drive(builder, make_config(Serdes.String(), Serdes.String()), "x2", "x3", "x5")

    assert out["x2"] == ["V0", "V2", "V4", "V6"]
    assert out["x3"] == ["V3"]
    assert out["x5"] == ["V5"]


def test_split_result_map_is_keyed_by_prefix_and_branch_name(make_config):
    """Mirrors KStreamSplitTest.testResultingMap: names foo-bar, foo-4, foo-5 and foo-0 (default)."""
    builder = StreamsBuilder()
    branches = (
        _source(builder)
        .split(name="foo-")
        .branch(is_even, Branched(name="bar"))  # entry "foo-bar"
        .branch(is_multiple_of_three, Branched(consumer=lambda ks: None))  # no entry: a consumer
        .branch(is_multiple_of_five, Branched(function=lambda ks: None))  # no entry: function gave None
        .branch(is_negative, Branched(function=lambda ks: ks))  # "foo-4": by position
        .branch(is_multiple_of_seven)  # "foo-5": by position
        .default_branch()  # "foo-0": the default
    )
    assert len(branches) == 4
    assert set(branches) == {"foo-bar", "foo-4", "foo-5", "foo-0"}
    for name, branch in branches.items():
        branch.to(name)

    out = _drive(builder, make_config(Serdes.String(), Serdes.String()), "foo-bar", "foo-4", "foo-5", "foo-0")

    assert out["foo-bar"] == ["V0", "V2", "V4", "V6"]
    assert out["foo-4"] == ["V-1"]
    assert out["foo-5"] == ["V7"]
    assert out["foo-0"] == ["V1"]


def test_branches_without_terminal_operation_still_route(make_config):
    """Mirrors KStreamSplitTest.testBranchingWithNoTerminalOperation: two branches write to one topic."""
    builder = StreamsBuilder()
    (
        _source(builder)
        .split()
        .branch(is_even, Branched(consumer=lambda ks: ks.to("output")))
        .branch(is_multiple_of_five, Branched(consumer=lambda ks: ks.to("output")))
    )

    out = _drive(builder, make_config(Serdes.String(), Serdes.String()), "output")

    assert out["output"] == ["V0", "V2", "V4", "V5", "V6"]
