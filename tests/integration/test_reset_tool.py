"""``streams-runtime reset`` against the embedded broker: reset then rerun equals a first run.

A word count (a repartition topic and a changelog) runs once; after the reset (input offsets to
the earliest, internal topics deleted, local state wiped) a second run over the same input must
produce exactly the first run's final counts (not doubled, not missing). The dry run changes
nothing; a reset while the application runs is refused.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime

import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_runtime.cli import main
from streams_runtime.kafka.clients import (
    PARTITION_EOF,
    TopicPartition,
    committed_offsets,
    create_admin,
    create_consumer,
    create_producer,
    topic_names,
)
from tests.integration.streams_support import make_topics, produce, streams_config, wait_running, wait_until

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

PARTITIONS = 2
SERDES = {"default_key_serde": "string", "default_value_serde": "string"}
LINES = ["the quick brown fox", "the lazy dog", "quick quick fox", "a dog and a fox"] * 5


def _topology(source: str, output: str, app_id: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .flat_map_values(lambda line: line.split())
        .group_by(lambda key, word: word)
        .count(Materialized.as_("words"))
        .to_stream()
        .to(output, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build({"application_id": app_id})


def _read_from(bootstrap: str, topic: str, starts: dict[int, int]) -> tuple[dict, dict[int, int]]:
    """Latest value per key of the records from ``starts`` to the end; and the end offsets."""
    consumer = create_consumer(bootstrap, f"reader-{time.monotonic_ns()}", {"enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, p, starts.get(p, 0)) for p in range(PARTITIONS)])
    latest, ends = {}, {}
    deadline = time.monotonic() + 20
    try:
        while len(ends) < PARTITIONS and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    latest[msg.key().decode()] = int.from_bytes(msg.value(), "big", signed=True)
                elif msg.error().code() == PARTITION_EOF:
                    ends[msg.partition()] = msg.offset()
    finally:
        consumer.close()
    assert len(ends) == PARTITIONS, f"no end of {topic} reached"
    return latest, ends


def _run_until(bootstrap, topology, config, output, starts, expected) -> dict:
    streams = KafkaStreams(topology, config)
    streams.start()
    try:
        wait_running(streams)
        seen: dict = {}

        def done() -> bool:
            seen.update(_read_from(bootstrap, output, starts)[0])
            return seen == expected

        wait_until(done, 60, lambda: f"output {seen} != {expected}")
        return seen
    finally:
        streams.close()


def test_should_reset_so_that_a_rerun_equals_a_first_run(kafka_broker, unique_name, tmp_path, capsys):
    source, output, app_id = unique_name("reset-in"), unique_name("reset-out"), unique_name("reset-app")
    make_topics(kafka_broker, **{source: PARTITIONS, output: PARTITIONS})
    produce(kafka_broker, source, ((str(i).encode(), line.encode()) for i, line in enumerate(LINES)))
    expected = dict(Counter(word for line in LINES for word in line.split()))
    state_dir = tmp_path / "state"
    config = streams_config(kafka_broker, app_id, state_dir, **SERDES)
    first = _run_until(kafka_broker, _topology(source, output, app_id), config, output, {}, expected)
    internal = [t for t in topic_names(create_admin(kafka_broker)) if t.startswith(app_id)]
    assert any(t.endswith("-repartition") for t in internal) and any(
        t.endswith("-changelog") for t in internal
    )
    _, after_first = _read_from(kafka_broker, output, {})
    partitions = [(source, p) for p in range(PARTITIONS)]
    committed = committed_offsets(kafka_broker, app_id, partitions)
    assert sum(committed.values()) == len(LINES)
    command = ["reset", "--app-id", app_id, "--bootstrap-servers", kafka_broker, "--input-topics", source]
    command += ["--wipe-local-state", str(state_dir)]
    # Tansu keeps listing the stopped instance (a group leader closes without LeaveGroup): refused
    # without --force, exactly as while it runs; with --force the reset goes on and says so
    assert main(command) == 1
    assert "rerun with --force" in capsys.readouterr().err
    command.append("--force")

    # the dry run prints the plan and changes nothing
    assert main([*command, "--dry-run"]) == 0
    printed, warned = capsys.readouterr()
    assert f"warning: --force: resetting {app_id} although its group lists 1 member(s)" in warned
    assert f"Topic: {source} Partition: 0 Offset: {committed[(source, 0)]} -> 0" in printed
    assert all(t in printed for t in internal) and "Dry run: nothing was changed." in printed
    assert committed_offsets(kafka_broker, app_id, partitions) == committed
    assert sorted(t for t in topic_names(create_admin(kafka_broker)) if t.startswith(app_id)) == sorted(
        internal
    )
    assert (state_dir / app_id).is_dir()

    # the reset: offsets to the earliest, internal topics gone, local state gone
    assert main(command) == 0
    assert committed_offsets(kafka_broker, app_id, partitions) == {tp: 0 for tp in partitions}
    assert not [t for t in topic_names(create_admin(kafka_broker)) if t.startswith(app_id)]
    assert not (state_dir / app_id).exists()

    # the rerun: its own output, from where the first run's ended, equals the first run's
    second = _run_until(
        kafka_broker, _topology(source, output, app_id), config, output, after_first, expected
    )
    assert second == first == expected


def test_should_refuse_a_reset_while_the_application_runs(kafka_broker, unique_name, tmp_path, capsys):
    source, output, app_id = unique_name("busy-in"), unique_name("busy-out"), unique_name("busy-app")
    make_topics(kafka_broker, **{source: PARTITIONS, output: PARTITIONS})
    produce(kafka_broker, source, ((b"k", line.encode()) for line in LINES[:4]))
    streams = KafkaStreams(
        _topology(source, output, app_id), streams_config(kafka_broker, app_id, tmp_path, **SERDES)
    )
    streams.start()
    try:
        wait_running(streams)
        wait_until(
            lambda: sum(
                v or 0 for v in committed_offsets(kafka_broker, app_id, [(source, 0), (source, 1)]).values()
            )
            == 4,
            30,
            "the input is committed",
        )
        before = committed_offsets(kafka_broker, app_id, [(source, 0), (source, 1)])
        command = ["reset", "--app-id", app_id, "--bootstrap-servers", kafka_broker, "--input-topics", source]
        assert main(command) == 1
        err = capsys.readouterr().err
        assert f"error: cannot reset application {app_id}: it has 1 active member(s)" in err
        assert "stop every instance first" in err
        assert committed_offsets(kafka_broker, app_id, [(source, 0), (source, 1)]) == before
        assert [t for t in topic_names(create_admin(kafka_broker)) if t.startswith(app_id)]
    finally:
        streams.close()


def test_should_name_bad_reset_options(capsys):
    base = ["reset", "--app-id", "a", "--bootstrap-servers", "127.0.0.1:1", "--input-topics", "t"]
    for option, value, message in [
        ("--by-duration", "15 minutes", "--by-duration must be an ISO 8601 duration such as PT15M"),
        ("--by-duration", "PT", "--by-duration must be an ISO 8601 duration"),
        ("--to-datetime", "yesterday", "--to-datetime must be an ISO 8601 date-time"),
    ]:
        with pytest.raises(SystemExit) as exit_info:  # a usage error, before any connection
            main([*base, option, value])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--to-earliest", "--by-duration", "PT1H"])  # one position at most
    assert "not allowed with argument" in capsys.readouterr().err


def test_should_reset_to_a_datetime_and_by_a_duration_from_record_timestamps(
    kafka_broker, unique_name, capsys
):
    source, app_id = unique_name("time-in"), unique_name("time-app")
    make_topics(kafka_broker, **{source: PARTITIONS})
    now_ms = int(time.time() * 1000)
    hour_ms = 3_600_000
    stamps = {0: [now_ms - 3 * hour_ms, now_ms - 2 * hour_ms, now_ms - 10_000], 1: [now_ms - 4 * hour_ms]}
    producer = create_producer(kafka_broker)
    for partition, times in stamps.items():
        for ts in times:
            producer.produce(source, b"v", b"k", partition=partition, timestamp=ts)
    assert producer.flush(30) == 0
    base = ["reset", "--app-id", app_id, "--bootstrap-servers", kafka_broker, "--input-topics", source]
    moment = datetime.fromtimestamp((now_ms - 2 * hour_ms - 1000) / 1000, UTC).isoformat()
    assert main([*base, "--to-datetime", moment]) == 0
    # partition 0: the record 2 h ago is the first at or after the moment; partition 1: none (its end)
    assert committed_offsets(kafka_broker, app_id, [(source, 0), (source, 1)]) == {
        (source, 0): 1,
        (source, 1): 1,
    }
    assert main([*base, "--by-duration", "PT1H"]) == 0
    assert committed_offsets(kafka_broker, app_id, [(source, 0), (source, 1)]) == {
        (source, 0): 2,
        (source, 1): 1,
    }
    assert main([*base, "--to-earliest", "--dry-run"]) == 0
    assert f"Topic: {source} Partition: 0 Offset: 2 -> 0" in capsys.readouterr().out
    assert committed_offsets(kafka_broker, app_id, [(source, 0)]) == {(source, 0): 2}
