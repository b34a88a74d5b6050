"""A topic the application reads or writes is missing: the start stops at once with one message
naming it and the command that creates it, and nothing is read, written, committed or created.

Before this check a missing sink topic went unnoticed until the first send: the producer waited
for its metadata ("broker unreachable?" for 30 s), every instance died, and the at-least-once
replay after a restart counted the first records twice.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_runtime.cli import main
from streams_runtime.errors import MissingSinkTopicError
from streams_runtime.kafka.clients import (
    TopicPartition,
    create_admin,
    create_consumer,
    partition_counts,
    topic_names,
)
from streams_runtime.kafka.offsets import committed_offsets_of
from streams_runtime.kafka_streams import State
from tests.integration.streams_support import make_topics, produce, read_all, streams_config, wait_running

PARTITIONS = 2
WORKER_APP = "tests.integration.worker_app:app"


def _count_words(source: str, sink: str, app: str) -> Any:
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build({"application_id": app})


def _committed(bootstrap: str, group: str, topic: str) -> list[int]:
    """The group's committed offset of each partition (negative: none), asked again while a new
    broker's group coordinator loads."""
    consumer = create_consumer(bootstrap, group)
    try:
        wanted = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        return [tp.offset for tp in committed_offsets_of(consumer, wanted)]
    finally:
        consumer.close()


def _expected_message(app: str, sink: str, bootstrap: str) -> str:
    return (
        f"cannot start application '{app}': sink topic '{sink}' does not exist; create it first "
        f"(streams-runtime topics create {sink} --partitions {PARTITIONS} --bootstrap-servers "
        f"{bootstrap}), or with your cluster's tools (kafka-topics.sh --create); nothing was read "
        "or written"
    )


def test_a_missing_sink_stops_the_start_before_anything_is_read(
    bootstrap_servers: str, unique_name: Any, tmp_path: Path
) -> None:
    source, sink, app = unique_name("words"), unique_name("counts"), unique_name("missing-sink")
    make_topics(bootstrap_servers, **{source: PARTITIONS})
    produce(bootstrap_servers, source, [(f"k{i}".encode(), b"w") for i in range(20)])
    streams = KafkaStreams(_count_words(source, sink, app), streams_config(bootstrap_servers, app, tmp_path))
    began = time.monotonic()
    with pytest.raises(MissingSinkTopicError) as raised:
        streams.start()
    elapsed = time.monotonic() - began
    assert str(raised.value) == _expected_message(app, sink, bootstrap_servers)
    assert elapsed < 10, f"the start took {elapsed:.1f} s to fail"
    assert streams.state is State.CREATED
    # nothing consumed as committed, the sink not created by the check, no internal topic made
    assert all(offset < 0 for offset in _committed(bootstrap_servers, app, source))
    topics = topic_names(create_admin(bootstrap_servers))
    assert sink not in topics
    assert not [t for t in topics if t.startswith(f"{app}-")]


def test_the_worker_exits_1_with_that_one_message(
    bootstrap_servers: str, unique_name: Any, tmp_path: Path
) -> None:
    source, sink, app = unique_name("words"), unique_name("counts"), unique_name("missing-sink-worker")
    make_topics(bootstrap_servers, **{source: PARTITIONS})
    env = {**os.environ, "WORKER_TEST_TOPICS": f"{source},{sink},{app}"}
    command = [sys.executable, "-m", "streams_runtime.cli", "worker", "--app", WORKER_APP]
    command += ["--bootstrap-servers", bootstrap_servers, "--state-dir", str(tmp_path)]
    began = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - began
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {_expected_message(app, sink, bootstrap_servers)}"], done.stderr
    assert "instance 0 started" not in done.stdout
    assert elapsed < 30, f"the worker took {elapsed:.1f} s to fail"
    assert sink not in topic_names(create_admin(bootstrap_servers))


def test_the_suggested_command_creates_the_sink_and_the_application_then_starts(
    bootstrap_servers: str, unique_name: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, sink, app = unique_name("words"), unique_name("counts"), unique_name("missing-sink-fix")
    make_topics(bootstrap_servers, **{source: PARTITIONS})
    produce(bootstrap_servers, source, [(b"k", b"w"), (b"k", b"w")])
    # no record cache: every update of the count goes out
    config = streams_config(bootstrap_servers, app, tmp_path, statestore_cache_max_bytes=0)
    streams = KafkaStreams(_count_words(source, sink, app), config)
    with pytest.raises(MissingSinkTopicError) as raised:
        streams.start()
    suggested = str(raised.value).split("(", 1)[1].split(")", 1)[0]
    assert suggested.startswith("streams-runtime topics create ")
    assert main(shlex.split(suggested)[1:]) == 0
    assert f"created topic {sink} ({PARTITIONS} partitions" in capsys.readouterr().out
    assert partition_counts(create_admin(bootstrap_servers), [sink]) == {sink: PARTITIONS}
    streams.start()  # the same client, once the topic exists
    try:
        wait_running(streams)
        counts = read_all(bootstrap_servers, sink, PARTITIONS, 2)
        assert [int.from_bytes(m.value(), "big") for m in counts] == [1, 2]
    finally:
        streams.close(timeout=20)
