"""``streams-runtime produce`` against a real broker, through the CLI's ``main``.

Produced records land where Kafka's default partitioner puts their keys (murmur2, computed here
by the tests' own implementation); a malformed input line stops the command before anything is
sent, so the corrected input is written exactly once; a record that cannot be sent is named by
its line and the others are delivered once.
"""

from __future__ import annotations

import io
import json
import struct
import sys

from streams_runtime.cli import main
from streams_runtime.kafka.clients import create_admin, partition_counts
from tests.integration.streams_support import read_to_end
from tests.partitioning import partition_for

PARTITIONS = 5


def _cli(capsys, bootstrap: str, *command: str) -> tuple[int, str, str]:
    code = main([*command, "--bootstrap-servers", bootstrap])
    out, err = capsys.readouterr()
    return code, out, err


def _write_lines(path, lines: list[str]) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_should_name_a_topic_that_does_not_exist_and_create_nothing(kafka_broker, unique_name, capsys):
    missing = unique_name("missing")
    code, out, err = _cli(capsys, kafka_broker, "produce", missing, "--file", "-")
    assert (code, out) == (1, "")
    assert err.startswith(f"error: topic {missing} does not exist on {kafka_broker}; create it first")
    assert partition_counts(create_admin(kafka_broker), [missing]) == {}


def test_should_place_each_key_on_its_murmur2_partition(kafka_broker, unique_name, capsys, tmp_path):
    topic = unique_name("placed")
    assert _cli(capsys, kafka_broker, "topics", "create", topic, "--partitions", str(PARTITIONS))[0] == 0
    keys = [f"user-{i}" for i in range(60)]
    lines = [json.dumps({"key": key, "value": {"n": i}}) for i, key in enumerate(keys)]
    lines.append(
        json.dumps({"key": "stamped", "value": "v", "timestamp": 1767225600000, "headers": {"source": "cli"}})
    )
    code, out, err = _cli(
        capsys, kafka_broker, "produce", topic, "--file", _write_lines(tmp_path / "in", lines)
    )
    assert (code, err) == (0, "")

    records = read_to_end(kafka_broker, topic, PARTITIONS)
    assert sorted(r.key() for r in records) == sorted(k.encode() for k in [*keys, "stamped"])
    for record in records:
        assert record.partition() == partition_for(record.key(), PARTITIONS), record.key()
    values = {r.key(): r.value() for r in records}
    assert values[b"user-7"] == b'{"n":7}'
    (stamped,) = [r for r in records if r.key() == b"stamped"]
    assert stamped.value() == b'"v"'
    assert stamped.timestamp()[1] == 1767225600000
    assert stamped.headers() == [("source", b"cli")]

    per_partition = {p: sum(1 for r in records if r.partition() == p) for p in range(PARTITIONS)}
    assert out.splitlines() == [
        f"delivered {len(lines)} of {len(lines)} record(s) from {tmp_path / 'in'} to {topic}:",
        *(f"  partition {p}: {per_partition[p]}" for p in range(PARTITIONS)),
    ]


def test_should_send_nothing_when_a_line_is_malformed_and_everything_once_when_fixed(
    kafka_broker, unique_name, capsys, tmp_path, monkeypatch
):
    topic = unique_name("malformed")
    assert _cli(capsys, kafka_broker, "topics", "create", topic, "--partitions", "3")[0] == 0
    good = [json.dumps({"key": f"k{i}", "value": i}) for i in range(10)]
    broken = [*good[:4], '{"key": "k4", "value": 4', *good[5:]]

    code, out, err = _cli(
        capsys, kafka_broker, "produce", topic, "--file", _write_lines(tmp_path / "in", broken)
    )
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"error: 1 malformed line(s) in {tmp_path / 'in'}; nothing was sent to {topic}:",
        "  line 5: invalid JSON: Expecting ',' delimiter (column 25)",
    ]
    assert read_to_end(kafka_broker, topic, 3) == []

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("\n".join(good).encode())))
    code, out, err = _cli(capsys, kafka_broker, "produce", topic)
    assert (code, err) == (0, "")
    assert out.startswith(f"delivered 10 of 10 record(s) from standard input to {topic}:")
    records = read_to_end(kafka_broker, topic, 3)
    assert sorted((r.key(), r.value()) for r in records) == sorted(
        (f"k{i}".encode(), str(i).encode()) for i in range(10)
    )


def test_should_name_the_lines_not_delivered_and_deliver_the_others_once(
    kafka_broker, unique_name, capsys, tmp_path
):
    topic = unique_name("oversized")
    assert _cli(capsys, kafka_broker, "topics", "create", topic, "--partitions", "2")[0] == 0
    lines = [
        json.dumps({"key": "a", "value": 1}),
        json.dumps({"key": "big", "value": "x" * 2_000_000}),  # over the producer's message.max.bytes
        json.dumps({"key": "b", "value": 2}),
    ]
    code, out, err = _cli(
        capsys, kafka_broker, "produce", topic, "--file", _write_lines(tmp_path / "in", lines)
    )
    assert code == 1
    assert out.startswith(f"delivered 2 of 3 record(s) from {tmp_path / 'in'} to {topic}:")
    assert err.splitlines()[0] == (
        f"error: 1 of 3 record(s) were not delivered to {topic} (every other line was delivered once):"
    )
    assert err.splitlines()[1].startswith("  line 2: MSG_SIZE_TOO_LARGE")
    records = read_to_end(kafka_broker, topic, 2)
    assert sorted(r.key() for r in records) == [b"a", b"b"]


def test_should_find_the_cluster_as_every_command_does(kafka_broker, unique_name, capsys, monkeypatch):
    topic = unique_name("found")
    assert _cli(capsys, kafka_broker, "topics", "create", topic, "--partitions", "1")[0] == 0
    monkeypatch.setenv("BOOTSTRAP_SERVERS", kafka_broker)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"key": "k", "value": 1}')))
    assert main(["produce", topic]) == 0
    assert [r.key() for r in read_to_end(kafka_broker, topic, 1)] == [b"k"]


def test_should_write_numbers_with_the_named_serdes(kafka_broker, unique_name, capsys, tmp_path):
    topic = unique_name("numbers")
    assert _cli(capsys, kafka_broker, "topics", "create", topic, "--partitions", "3")[0] == 0
    path = _write_lines(tmp_path / "in", [json.dumps({"key": k, "value": k / 2}) for k in range(6)])
    serdes = ("--key-serde", "long", "--value-serde", "double")
    code, _, err = _cli(capsys, kafka_broker, "produce", topic, "--file", path, *serdes)
    assert (code, err) == (0, "")
    records = read_to_end(kafka_broker, topic, 3)
    assert sorted(int.from_bytes(r.key(), "big", signed=True) for r in records) == list(range(6))
    for record in records:
        key = int.from_bytes(record.key(), "big", signed=True)
        assert struct.unpack(">d", record.value()) == (key / 2,)
        assert record.partition() == partition_for(record.key(), 3)
