"""ConsumerLagTrigger: wait, in the triggerer, until a consumer group's lag on a topic is low enough.

Runs in the triggerer's event loop, so it never blocks it: each measurement (blocking
confluent-kafka calls, see :func:`measure_group_lag`) runs in an executor thread, and the trigger
sleeps with ``asyncio.sleep`` between measurements.

Events it fires (exactly one, then it ends)::

    {"status": "success", "total": <lag>, "per_partition": {...}, "end_offsets": {...}, ...}
    {"status": "error", "message": "..."}

``serialize()`` returns this class's import path and every constructor argument, so the trigger
the triggerer rebuilds from the database equals the one the sensor deferred to.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent


def measure_group_lag(kafka_conn_id: str, group_id: str, topic: str, timeout: float = 30.0) -> dict[str, Any]:
    """Lag of ``group_id`` on ``topic`` measured from the true end offsets (blocking).

    :raises LookupError: when ``topic`` does not exist.
    """
    from streams_ops.hooks.kafka_admin import KafkaAdminHook
    from streams_ops.offsets import EOF_OVERRIDES, measure_consumer_lag
    from streams_runtime.kafka.clients import partition_counts

    hook = KafkaAdminHook(kafka_conn_id=kafka_conn_id)
    partitions = partition_counts(hook.get_admin_client(), [topic], timeout).get(topic)
    if partitions is None:
        raise LookupError(f"topic {topic!r} does not exist on {hook.bootstrap_servers}")
    consumer = hook.get_consumer(group_id, EOF_OVERRIDES)
    try:
        return measure_consumer_lag(consumer, group_id, topic, partitions, timeout).as_dict()
    finally:
        consumer.close()


class ConsumerLagTrigger(BaseTrigger):
    """Fire when the lag of ``group_id`` on ``topic`` is at most ``max_lag``.

    :param group_id: the consumer group (a stream application's ``application_id``).
    :param topic: the topic whose lag is measured.
    :param max_lag: fire once the total lag over all partitions is at most this.
    :param kafka_conn_id: the Connection of the cluster (see ``KafkaAdminHook``).
    :param poll_interval: seconds between measurements.
    """

    def __init__(
        self,
        group_id: str,
        topic: str,
        max_lag: int = 0,
        kafka_conn_id: str = "streams_kafka",
        poll_interval: float = 10.0,
    ) -> None:
        super().__init__()
        self.group_id = group_id
        self.topic = topic
        self.max_lag = int(max_lag)
        self.kafka_conn_id = kafka_conn_id
        self.poll_interval = float(poll_interval)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "group_id": self.group_id,
                "topic": self.topic,
                "max_lag": self.max_lag,
                "kafka_conn_id": self.kafka_conn_id,
                "poll_interval": self.poll_interval,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                lag = await loop.run_in_executor(
                    None, measure_group_lag, self.kafka_conn_id, self.group_id, self.topic
                )
            except Exception as exc:  # noqa: BLE001 - reported to the sensor, which fails the task
                yield TriggerEvent({"status": "error", "message": f"{type(exc).__name__}: {exc}"})
                return
            if lag["total"] <= self.max_lag:
                yield TriggerEvent({"status": "success", **lag})
                return
            self.log.info(
                "group %s lags %d record(s) on %s (waiting for <= %d)",
                self.group_id,
                lag["total"],
                self.topic,
                self.max_lag,
            )
            await asyncio.sleep(self.poll_interval)
