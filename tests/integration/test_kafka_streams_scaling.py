"""12 partitions over 3 instances x 2 threads (2 tasks per thread, through metadata);
a 4th instance joining redistributes; one leaving hands its tasks over; no input is lost.

One scenario runs once per module; its snapshots are checked by several tests.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

import pytest

from streams_runtime import Consumed, KafkaStreams, Produced, Serdes, StreamsBuilder, TaskId
from tests.integration.streams_support import (
    active_task_counts,
    make_topics,
    produce,
    read_to_end,
    streams_config,
    wait_until,
)

PARTITIONS = 12
ALL_TASKS = {TaskId(0, p) for p in range(PARTITIONS)}
PER_PHASE = 1200


@dataclass
class Scenario:
    three: list[list[int]] = field(default_factory=list)  # per instance: tasks per thread
    four: list[list[int]] = field(default_factory=list)
    after_leave: list[list[int]] = field(default_factory=list)
    owners_four: dict = field(default_factory=dict)
    owners_after_leave: dict = field(default_factory=dict)
    produced: int = 0
    outputs: collections.Counter = field(default_factory=collections.Counter)


def _owners(clients: list[KafkaStreams]) -> dict[TaskId, list[str]]:
    owners = collections.defaultdict(list)
    for client in clients:
        for thread in client.metadata_for_local_threads():
            for task in thread.active_tasks:
                owners[task.task_id].append(thread.thread_name)
    return owners


def _covers_all_once(clients: list[KafkaStreams]) -> bool:
    owners = _owners(clients)
    return set(owners) == ALL_TASKS and all(len(v) == 1 for v in owners.values())


def _balanced(clients: list[KafkaStreams], check) -> bool:
    return _covers_all_once(clients) and all(check(c) for c in clients)


@pytest.fixture(scope="module")
def scenario(kafka_broker, tmp_path_factory) -> Scenario:
    bootstrap = kafka_broker
    suffix = tmp_path_factory.mktemp("scaling").name
    source, sink, app = f"scale-in-{suffix}", f"scale-out-{suffix}", f"scale-app-{suffix}"
    make_topics(bootstrap, **{source: PARTITIONS, sink: PARTITIONS})

    def topology():
        builder = StreamsBuilder()
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).map_values(
            lambda v: v + "!"
        ).to(sink, Produced.with_(Serdes.String(), Serdes.String()))
        return builder.build()

    def client(i: int) -> KafkaStreams:
        config = streams_config(bootstrap, app, tmp_path_factory.mktemp(f"i{i}"), num_stream_threads=2)
        return KafkaStreams(topology(), config)

    result = Scenario()
    phase = 0

    def produce_phase():
        nonlocal phase
        result.produced += produce(
            bootstrap, source, ((f"key-{i % 97}".encode(), f"{phase}-{i}".encode()) for i in range(PER_PHASE))
        )
        phase += 1

    clients = [client(i) for i in range(3)]
    try:
        produce_phase()
        for c in clients:
            c.start()
        wait_until(
            lambda: _balanced(clients, lambda c: active_task_counts(c) == [2, 2]),
            45,
            "2 tasks on each of 6 threads",
        )
        result.three = [active_task_counts(c) for c in clients]
        produce_phase()
        clients.append(client(3))
        clients[3].start()
        wait_until(
            lambda: _balanced(clients, lambda c: sum(active_task_counts(c)) == 3),
            45,
            "3 tasks on each of 4 instances",
        )
        result.four = [active_task_counts(c) for c in clients]
        result.owners_four = _owners(clients)
        produce_phase()
        leaving = clients.pop(0)
        assert leaving.close(timeout=30)
        wait_until(
            lambda: _balanced(clients, lambda c: sum(active_task_counts(c)) == 4),
            45,
            "the survivors to take over every task",
        )
        result.after_leave = [active_task_counts(c) for c in clients]
        result.owners_after_leave = _owners(clients)
        produce_phase()
        # read to the true end until every input's output is there (a count of records read is
        # no measure: at-least-once hand-overs may have written some outputs twice)
        expected = {f"{p}-{i}!" for p in range(phase) for i in range(PER_PHASE)}
        deadline = time.monotonic() + 45
        while True:
            out = read_to_end(bootstrap, sink, PARTITIONS, timeout=20)
            result.outputs = collections.Counter(m.value().decode() for m in out)
            if set(result.outputs) >= expected or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    finally:
        for c in clients:
            c.close(timeout=30)
    return result


def test_should_give_every_thread_two_tasks_with_three_instances_of_two_threads(scenario):
    assert scenario.three == [[2, 2]] * 3


def test_should_redistribute_tasks_when_a_fourth_instance_joins(scenario):
    assert sorted(sum(counts) for counts in scenario.four) == [3, 3, 3, 3]
    assert all(len(owners) == 1 for owners in scenario.owners_four.values())


def test_should_hand_tasks_of_a_leaving_instance_to_the_survivors(scenario):
    assert sorted(sum(counts) for counts in scenario.after_leave) == [4, 4, 4]
    assert set(scenario.owners_after_leave) == ALL_TASKS


def test_should_lose_no_input_across_joins_and_leaves(scenario):
    expected = {f"{p}-{i}!" for p in range(4) for i in range(PER_PHASE)}
    assert set(scenario.outputs) == expected
    assert sum(scenario.outputs.values()) >= scenario.produced
