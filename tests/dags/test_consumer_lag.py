"""ConsumerLagTrigger and ConsumerLagSensor: serialize round trip, lag measured on the broker, deferral."""

from __future__ import annotations

import asyncio
import json

import pytest


def make_trigger(**overrides):
    from streams_ops.triggers.consumer_lag import ConsumerLagTrigger

    kwargs = {"group_id": "app", "topic": "orders", "max_lag": 5, "kafka_conn_id": "k", "poll_interval": 0.1}
    return ConsumerLagTrigger(**{**kwargs, **overrides})


def test_trigger_serialize_round_trips() -> None:
    from airflow.sdk.module_loading import import_string

    trigger = make_trigger()
    classpath, kwargs = trigger.serialize()
    assert classpath == "streams_ops.triggers.consumer_lag.ConsumerLagTrigger"
    rebuilt = import_string(classpath)(**json.loads(json.dumps(kwargs)))  # what the triggerer stores
    assert rebuilt.serialize() == (classpath, kwargs)
    assert kwargs == {
        "group_id": "app",
        "topic": "orders",
        "max_lag": 5,
        "kafka_conn_id": "k",
        "poll_interval": 0.1,
    }


def test_trigger_serialize_round_trips_through_airflows_encoder() -> None:
    from airflow.serialization.serialized_objects import BaseSerialization

    classpath, kwargs = make_trigger().serialize()
    assert BaseSerialization.deserialize(BaseSerialization.serialize(kwargs)) == kwargs


async def first_event(trigger, timeout: float = 20.0):
    return await asyncio.wait_for(anext(trigger.run()), timeout)


@pytest.fixture
def lagging_group(bootstrap_servers: str, unique_name):
    """A 2-partition topic with 20 records and a group that committed 5 of partition 0: lag 15."""
    from streams_runtime.kafka.clients import (
        TopicPartition,
        TopicSpec,
        create_admin,
        create_consumer,
        create_producer,
        create_topics,
    )

    topic, group = unique_name("lag"), unique_name("group")
    create_topics(create_admin(bootstrap_servers), [TopicSpec(topic, 2)])
    producer = create_producer(bootstrap_servers)
    for i in range(20):
        producer.produce(topic, value=b"x", partition=i % 2)
    assert producer.flush(10) == 0
    consumer = create_consumer(bootstrap_servers, group)
    consumer.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)

    def commit_all() -> None:
        consumer.commit(
            offsets=[TopicPartition(topic, 0, 10), TopicPartition(topic, 1, 10)], asynchronous=False
        )

    yield topic, group, commit_all
    consumer.close()


@pytest.mark.kafka
def test_trigger_fires_once_the_group_catches_up(kafka_conn, lagging_group) -> None:
    topic, group, commit_all = lagging_group

    async def scenario():
        trigger = make_trigger(
            group_id=group, topic=topic, max_lag=0, kafka_conn_id=kafka_conn, poll_interval=0.2
        )
        waiting = asyncio.ensure_future(first_event(trigger))
        await asyncio.sleep(0.5)
        assert not waiting.done()  # lag 15 > 0: still polling
        await asyncio.get_running_loop().run_in_executor(None, commit_all)
        return await waiting

    event = asyncio.run(scenario())
    assert event.payload["status"] == "success"
    assert event.payload["total"] == 0
    assert event.payload["end_offsets"] == {"0": 10, "1": 10}


@pytest.mark.kafka
def test_trigger_reports_lag_and_errors(kafka_conn, lagging_group) -> None:
    topic, group, _ = lagging_group
    event = asyncio.run(
        first_event(make_trigger(group_id=group, topic=topic, max_lag=15, kafka_conn_id=kafka_conn))
    )
    assert event.payload["per_partition"] == {"0": 5, "1": 10}
    assert event.payload["committed"] == {"0": 5, "1": None}
    missing = asyncio.run(first_event(make_trigger(topic="no-such-topic-xyz", kafka_conn_id=kafka_conn)))
    assert missing.payload["status"] == "error" and "does not exist" in missing.payload["message"]


@pytest.mark.kafka
def test_sensor_defers_to_the_trigger_and_resumes_from_its_event(kafka_conn, lagging_group) -> None:
    from airflow.sdk.exceptions import AirflowException, TaskDeferred
    from streams_ops.sensors.consumer_lag import ConsumerLagSensor

    topic, group, _ = lagging_group
    sensor = ConsumerLagSensor(
        task_id="wait",
        group_id=group,
        topic=topic,
        max_lag=3,
        kafka_conn_id=kafka_conn,
        poke_interval=1,
        timeout=60,
    )
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    assert deferred.value.trigger.serialize()[1] == {
        "group_id": group,
        "topic": topic,
        "max_lag": 3,
        "kafka_conn_id": kafka_conn,
        "poll_interval": 1.0,
    }
    assert deferred.value.method_name == "execute_complete"
    assert sensor.execute_complete({}, {"status": "success", "total": 2})["total"] == 2
    with pytest.raises(AirflowException, match="boom"):
        sensor.execute_complete({}, {"status": "error", "message": "boom"})
    relaxed = ConsumerLagSensor(
        task_id="wait2", group_id=group, topic=topic, max_lag=15, kafka_conn_id=kafka_conn
    )
    assert relaxed.execute({})["total"] == 15  # already low enough: no deferral
