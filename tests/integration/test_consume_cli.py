"""``streams-runtime consume`` against a real broker, through the CLI's ``main``.

It prints every record up to each partition's end and stops; committed records only unless
``--read-uncommitted`` (records of an aborted transaction are written to the log but never
shown); a record its serdes cannot read is printed with the error and its bytes, and the exit
code says so; a missing topic is named.
"""

from __future__ import annotations

import base64
import json
import struct

from streams_runtime.cli import main
from streams_runtime.kafka.clients import create_producer
from streams_runtime.tools.consume import TANSU_NOTE


def _cli(capsys, bootstrap: str, *command: str) -> tuple[int, list[dict], str]:
    code = main([*command, "--bootstrap-servers", bootstrap])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def _transactional(bootstrap: str, topic: str, records: list[tuple[str, bytes]], *, commit: bool) -> None:
    producer = create_producer(bootstrap, {"transactional.id": f"{topic}-{commit}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for key, value in records:
        producer.produce(topic, key=key.encode(), value=value, partition=0)
    producer.flush(30)  # in the log before the transaction ends (an abort purges what is unsent)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def test_should_show_committed_records_only_unless_asked_and_stop_at_the_end(
    kafka_broker, broker_kind, unique_name, capsys
):
    topic = unique_name("committed")
    assert main(["topics", "create", topic, "--partitions", "2", "--bootstrap-servers", kafka_broker]) == 0
    _transactional(kafka_broker, topic, [("a", b'{"n": 1}'), ("b", b'{"n": 2}')], commit=True)
    _transactional(kafka_broker, topic, [("x", b'{"n": 99}')], commit=False)
    _transactional(kafka_broker, topic, [("c", b'{"n": 3}')], commit=True)
    capsys.readouterr()

    code, records, err = _cli(capsys, kafka_broker, "consume", topic)
    assert code == 0, err
    committed = [(0, "a", {"n": 1}), (0, "b", {"n": 2}), (0, "c", {"n": 3})]
    shown = [(r["partition"], r["key"], r["value"]) for r in records]
    assert [r["offset"] for r in records] == sorted(r["offset"] for r in records)
    if broker_kind == "kafka":
        assert shown == committed
        assert err.strip() == f"read 3 record(s) from {topic} (partition 0: 3, partition 1: 0)"
    else:  # Tansu's known gap (docs/decisions/0001-embedded-broker.md), said to the reader
        assert shown == [*committed[:2], (0, "x", {"n": 99}), committed[2]]
        assert err.splitlines()[0] == TANSU_NOTE

    code, records, err = _cli(capsys, kafka_broker, "consume", topic, "--read-uncommitted")
    assert code == 0 and TANSU_NOTE not in err
    assert [r["key"] for r in records] == ["a", "b", "x", "c"]  # the aborted one is in the log

    code, records, _ = _cli(capsys, kafka_broker, "consume", topic, "--max-records", "2")
    assert code == 0 and [r["key"] for r in records] == ["a", "b"]


def test_should_print_an_unreadable_record_with_its_bytes_and_exit_1(kafka_broker, unique_name, capsys):
    topic = unique_name("unreadable")
    assert main(["topics", "create", topic, "--partitions", "1", "--bootstrap-servers", kafka_broker]) == 0
    producer = create_producer(kafka_broker)
    producer.produce(topic, key=b"good", value=b'{"ok": true}', headers=[("source", b"test")])
    producer.produce(topic, key=b"bad", value=b"not json")
    producer.produce(topic, key=b"count", value=struct.pack(">q", 3))  # a Long count, read as JSON
    producer.flush(30)
    capsys.readouterr()

    code, records, err = _cli(capsys, kafka_broker, "consume", topic)
    assert code == 1
    good, bad, count = records
    assert (good["key"], good["value"], good["headers"]) == ("good", {"ok": True}, {"source": "test"})
    assert bad["key"] == "bad" and "value" not in bad
    assert base64.b64decode(bad["value_base64"]) == b"not json"
    assert bad["error"].startswith("--value-serde json cannot read the value")
    assert count["error"].startswith("--value-serde json cannot read the value")
    assert (
        f"error: 2 record(s) of {topic} could not be read with --key-serde string --value-serde json" in err
    )
    # the first unreadable value ("not json", 8 bytes) is offered as a string first
    assert "the first unreadable value reads as --value-serde string: 'not json'" in err


def test_should_name_a_topic_that_does_not_exist(kafka_broker, unique_name, capsys):
    missing = unique_name("missing")
    code, records, err = _cli(capsys, kafka_broker, "consume", missing)
    assert (code, records) == (1, [])
    assert err.strip() == f"error: topic {missing} does not exist on {kafka_broker}"
