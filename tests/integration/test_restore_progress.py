"""The restore progress display on a real restore: a bar per changelog partition reaching its end."""

from __future__ import annotations

import io
import re

from rich.console import Console

from streams_runtime import Consumed, KafkaStreams, Materialized, Serdes, StreamsBuilder
from streams_runtime.tools.progress import RestoreProgressDisplay
from tests.integration.streams_support import make_topics, produce, streams_config, wait_running, wait_until

PARTITIONS = 2
KEYS = 300


def _topology(source: str, app_id: str):
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).group_by_key().count(
        Materialized.as_("counts")
    )
    return builder.build({"application_id": app_id})


def test_should_draw_the_restore_of_each_changelog_partition(kafka_broker, unique_name, tmp_path):
    source, app_id = unique_name("progress-in"), unique_name("progress-app")
    make_topics(kafka_broker, **{source: PARTITIONS})
    produce(kafka_broker, source, ((f"k{i}".encode(), b"v") for i in range(KEYS)))
    config = streams_config(kafka_broker, app_id, tmp_path / "state")
    first = KafkaStreams(_topology(source, app_id), config)
    first.start()
    try:
        wait_running(first)
        wait_until(lambda: first.store("counts").approximate_num_entries() == KEYS, 30, "every key counted")
    finally:
        first.close()
    first.clean_up()  # local state gone: the next start restores every changelog partition
    out = io.StringIO()
    second = KafkaStreams(_topology(source, app_id), config)
    second.set_global_state_restore_listener(
        RestoreProgressDisplay(bars=True, console=Console(file=out, force_terminal=True, width=140))
    )
    second.start()
    try:
        wait_running(second)
        wait_until(lambda: second.store("counts").approximate_num_entries() == KEYS, 30, "state restored")
    finally:
        second.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    changelog = f"{app_id}-counts-changelog"
    totals = []
    for partition in range(PARTITIONS):
        assert f"restore counts ({changelog}-{partition})" in text
        done = re.findall(rf"restore counts \({changelog}-{partition}\)\s+\S*\s+(\d+)/(\d+)", text)
        assert done and done[-1][0] == done[-1][1], done
        totals.append(int(done[-1][1]))
    assert sum(totals) == KEYS
