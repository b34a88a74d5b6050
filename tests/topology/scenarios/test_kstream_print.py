"""Replays Kafka Streams' KStreamPrintTest and PrintedTest: ``KStream.print`` writes ``[label]: key, value``
per record, to standard output or a file, with an optional label and key-value mapper."""

import pytest

from streams_runtime import Consumed, Printed, Serdes, StreamsBuilder, TopologyError, TopologyTestDriver

INT = Serdes.Integer()


def _print_topology(printed, key_serde=INT):
    builder = StreamsBuilder()
    builder.stream("topic", Consumed.with_(key_serde, Serdes.String())).print(printed)
    return builder.build()


def _pipe(topology, rows, key_serde=INT):
    with TopologyTestDriver(topology) as driver:
        topic = driver.create_input_topic("topic", key_serde, Serdes.String())
        for key, value in rows:
            topic.pipe_input(key, value, 0)


def test_print_stream_with_provided_key_value_mapper(tmp_path):
    """Mirrors KStreamPrintTest.testPrintStreamWithProvidedKeyValueMapper: label "test-stream", mapper
    ``"%d, %s"``."""
    path = tmp_path / "out.txt"
    printed = (
        Printed.to_file(str(path)).with_label("test-stream").with_key_value_mapper(lambda k, v: f"{k}, {v}")
    )
    _pipe(_print_topology(printed), [(0, "zero"), (1, "one"), (2, "two"), (3, "three")])
    assert path.read_text().splitlines() == [
        "[test-stream]: 0, zero",
        "[test-stream]: 1, one",
        "[test-stream]: 2, two",
        "[test-stream]: 3, three",
    ]


def test_should_create_processor_that_prints_to_file(tmp_path):
    """Mirrors PrintedTest.shouldCreateProcessorThatPrintsToFile: without a label the stream's name labels
    each line (Kafka's processor name there is the printed stream's node)."""
    path = tmp_path / "out.txt"
    _pipe(_print_topology(Printed.to_file(str(path)), Serdes.String()), [("hi", "1")], Serdes.String())
    assert path.read_text() == "[KSTREAM-SOURCE-0000000000]: hi, 1\n"


def test_should_create_processor_that_prints_to_std_out(capsys):
    """Mirrors PrintedTest.shouldCreateProcessorThatPrintsToStdOut."""
    _pipe(_print_topology(Printed.to_sys_out(), Serdes.String()), [("good", "2")], Serdes.String())
    assert capsys.readouterr().out == "[KSTREAM-SOURCE-0000000000]: good, 2\n"


def test_should_print_with_label(capsys):
    """Mirrors PrintedTest.shouldPrintWithLabel."""
    _pipe(
        _print_topology(Printed.to_sys_out().with_label("label"), Serdes.String()),
        [("hello", "3")],
        Serdes.String(),
    )
    assert capsys.readouterr().out == "[label]: hello, 3\n"


def test_should_print_with_key_value_mapper(capsys):
    """Mirrors PrintedTest.shouldPrintWithKeyValueMapper; a missing key prints as Java's ``null``."""
    printed = Printed.to_sys_out().with_key_value_mapper(lambda k, v: f"{k} -> {v}")
    _pipe(_print_topology(printed, Serdes.String()), [("hello", "1")], Serdes.String())
    _pipe(_print_topology(Printed.to_sys_out(), Serdes.String()), [(None, "1")], Serdes.String())
    assert (
        capsys.readouterr().out
        == "[KSTREAM-SOURCE-0000000000]: hello -> 1\n[KSTREAM-SOURCE-0000000000]: null, 1\n"
    )


def test_printed_rejects_bad_arguments(tmp_path):
    """Mirrors PrintedTest.shouldThrowNullPointerExceptionIfFilePathIsNull / ...IfMapperIsNull /
    ...IfLabelIsNull, shouldThrowTopologyExceptionIfFilePathIsEmpty and ...IfFilePathDoesntExist."""
    with pytest.raises(TypeError):
        Printed.to_file(None)
    with pytest.raises(TypeError):
        Printed.to_sys_out().with_key_value_mapper(None)
    with pytest.raises(TypeError):
        Printed.to_sys_out().with_label(None)
    with pytest.raises(TopologyError, match="empty"):
        Printed.to_file("")
    with pytest.raises(TopologyError, match="Unable to write stream to file"):
        Printed.to_file(str(tmp_path / "no" / "such" / "dir" / "out.txt"))


def test_print_node_is_named_like_kafka_streams():
    """KStreamImpl.print names its processor ``KSTREAM-PRINTER-<n>`` (or the Printed's name)."""
    builder = StreamsBuilder()
    stream = builder.stream("topic")
    stream.print(Printed.to_sys_out())
    stream.print(Printed.to_sys_out().with_name("audit"))
    text = str(builder.build().describe())
    assert "--> KSTREAM-PRINTER-0000000001, audit" in text
    with pytest.raises(TypeError, match="Printed"):
        stream.print("stdout")
