"""``streams-runtime produce`` without a broker: input lines, serdes, failed deliveries, usage
errors, and the test suite's own partitioner against Kafka's expected values."""

from __future__ import annotations

import struct

import pytest

from streams_runtime.cli import main
from streams_runtime.kafka.clients import KafkaError, KafkaException
from streams_runtime.tools.produce import PRODUCER_OVERRIDES, OutgoingRecord, RecordFormat, send
from tests.partitioning import murmur2, partition_for


def _lines(*texts: str) -> list[bytes]:
    return [(text + "\n").encode() for text in texts]


def test_the_tests_partitioner_gives_what_kafkas_own_tests_expect():
    # the cases of Kafka's UtilsTest.testMurmur2
    assert murmur2(b"21") == -973932308
    assert murmur2(b"foobar") == -790332482
    assert murmur2(b"a-little-bit-long-string") == -985981536
    assert murmur2(b"a-little-bit-longer-string") == -1486304829
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971
    assert murmur2(b"abc") == 479470107
    assert partition_for(b"21", 7) == (-973932308 & 0x7FFFFFFF) % 7


def test_the_producer_is_idempotent_and_partitions_by_murmur2():
    assert PRODUCER_OVERRIDES["partitioner"] == "murmur2_random"
    assert PRODUCER_OVERRIDES["enable.idempotence"] is True


def test_should_serialize_keys_and_values_with_the_named_serdes():
    records, problems = RecordFormat("t").read(
        _lines(
            '{"key": "user-1", "value": {"amount": 12.5, "note": "é"}}',
            '{"key": "user-2", "value": "text", "timestamp": 1767225600000,'
            ' "headers": {"a": "b", "c": null}}',
            '{"key": null, "value": null}',
            '{"value": [1, 2]}',
        )
    )
    assert problems == []
    assert records == [
        OutgoingRecord(1, b"user-1", '{"amount":12.5,"note":"é"}'.encode()),
        OutgoingRecord(2, b"user-2", b'"text"', 1767225600000, [("a", b"b"), ("c", None)]),
        OutgoingRecord(3, None, None),  # a tombstone without a key
        OutgoingRecord(4, None, b"[1,2]"),
    ]
    (numbers,), _ = RecordFormat("t", key_serde="long", value_serde="double").read(
        _lines('{"key": 7, "value": 2.5}')
    )
    assert numbers.key == (7).to_bytes(8, "big", signed=True)
    assert numbers.value == struct.pack(">d", 2.5)
    (small,), _ = RecordFormat("t", key_serde="integer", value_serde="string").read(
        _lines('{"key": -1, "value": "v"}')
    )
    assert (small.key, small.value) == (b"\xff\xff\xff\xff", b"v")


def test_should_skip_blank_lines_and_count_them_in_line_numbers():
    records, problems = RecordFormat("t").read(
        _lines("", '{"key": "a", "value": 1}', "   ", '{"key": "b", "value": 2}')
    )
    assert problems == []
    assert [r.line for r in records] == [2, 4]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"key": "b", "value": 1', "invalid JSON: Expecting ',' delimiter (column 24)"),
        ("[1]", "expected a JSON object with key, value, timestamp, headers, got an array"),
        ('{"key": 5, "value": 1}', "--key-serde string cannot serialize the key 5 (expected str, got int)"),
        ('{"key": "c"}', 'no "value"'),
        ('{"key": "d", "value": 1, "vaule": 2}', "unknown field(s) vaule"),
        ('{"key": "e", "value": NaN}', "invalid JSON: NaN is not JSON"),
        ('{"key": "f", "value": 1, "timestamp": -3}', "timestamp must be milliseconds since the epoch"),
        ('{"key": "f", "value": 1, "timestamp": "now"}', 'got "now"'),
        ('{"key": "g", "value": 1, "headers": {"h": 1}}', "header 'h' must be a string or null"),
        ('{"key": "g", "value": 1, "headers": []}', "headers must be an object of strings"),
    ],
)
def test_should_name_a_malformed_line_by_its_number(line, says):
    records, problems = RecordFormat("t").read(_lines('{"key": "a", "value": 1}', line))
    assert [r.line for r in records] == [1]
    assert len(problems) == 1
    assert problems[0].startswith("line 2: ")
    assert says in problems[0]


def test_should_name_a_line_the_value_serde_refuses_and_a_line_that_is_not_utf8():
    records, problems = RecordFormat("t", value_serde="long").read(
        [b'{"key": "a", "value": 1.5}\n', b'{"key": "\xff", "value": 1}\n']
    )
    assert records == []
    assert (
        problems[0] == "line 1: --value-serde long cannot serialize the value 1.5 (expected int, got float)"
    )
    assert problems[1].startswith("line 2: not UTF-8")


class _Message:
    def __init__(self, partition: int) -> None:
        self._partition = partition

    def partition(self) -> int:
        return self._partition


class _FakeProducer:
    """Delivers at flush: key b"bad" fails, key b"big" is refused at produce, the first produce
    of all finds the local queue full."""

    def __init__(self) -> None:
        self.pending: list[tuple[bytes | None, object]] = []
        self.full_once = True
        self.produced: list[bytes | None] = []

    def produce(self, topic, value=None, key=None, headers=None, timestamp=0, on_delivery=None):
        if self.full_once:
            self.full_once = False
            raise BufferError("queue full")
        if key == b"big":
            raise KafkaException(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Message size too large"))
        self.produced.append(key)
        self.pending.append((key, on_delivery))

    def poll(self, timeout=0):
        return 0

    def flush(self, timeout=None):
        for key, callback in self.pending:
            if key == b"bad":
                callback(KafkaError(KafkaError._MSG_TIMED_OUT, "Local: Message timed out"), None)  # noqa: SLF001
            else:
                callback(None, _Message(len(key or b"") % 2))
        self.pending = []
        return 0


def test_should_report_every_record_delivered_or_failed_by_line():
    records = [OutgoingRecord(n, key, b"v") for n, key in enumerate([b"a", b"bad", b"bb", b"big", b"c"], 1)]
    producer = _FakeProducer()
    report = send(producer, "t", records)
    assert producer.produced == [b"a", b"bad", b"bb", b"c"]  # in order; the full queue was waited out
    assert dict(report.delivered) == {1: 2, 0: 1}
    assert [line for line, _ in report.failed] == [2, 4]
    assert report.failed[0][1].startswith("_MSG_TIMED_OUT")
    assert report.failed[1][1].startswith("MSG_SIZE_TOO_LARGE")


@pytest.fixture
def no_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)


def test_should_say_how_to_give_a_cluster_when_none_is_configured(no_cluster, capsys):
    assert main(["produce", "t"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no Kafka cluster to talk to: pass --bootstrap-servers HOST:PORT")


def test_should_refuse_a_serde_a_json_line_cannot_feed(no_cluster, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["produce", "t", "--key-serde", "bytes"])
    assert exited.value.code == 2
    assert "invalid choice: 'bytes'" in capsys.readouterr().err
