"""ConsumerLagSensor: wait until a consumer group has (nearly) caught up with a topic.

Deferrable by default: one measurement in the worker, and if the lag is still too high the task
defers to :class:`streams_ops.triggers.consumer_lag.ConsumerLagTrigger` and frees its worker slot
until the triggerer fires. With ``deferrable=False`` it pokes like a classic sensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow.sdk import BaseSensorOperator
from airflow.sdk.exceptions import AirflowException


class ConsumerLagSensor(BaseSensorOperator):
    """Succeed when the lag of ``group_id`` on ``topic`` is at most ``max_lag`` records.

    :param group_id: the consumer group (a stream application's ``application_id``).
    :param topic: the topic whose lag is measured (true end offsets, correct on Tansu too).
    :param max_lag: highest acceptable total lag over all partitions.
    :param kafka_conn_id: the Connection of the cluster (see ``KafkaAdminHook``).
    :param deferrable: defer to the async trigger instead of poking in a worker slot.
    :returns: the last measurement (total, per partition, end and committed offsets).
    """

    template_fields: Sequence[str] = ("group_id", "topic", "max_lag", "kafka_conn_id")
    ui_color = "#e8f0fb"

    def __init__(
        self,
        *,
        group_id: str,
        topic: str,
        max_lag: Any = 0,
        kafka_conn_id: str = "streams_kafka",
        deferrable: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.group_id = group_id
        self.topic = topic
        self.max_lag = max_lag
        self.kafka_conn_id = kafka_conn_id
        self.deferrable = deferrable
        self._last: dict[str, Any] | None = None

    def poke(self, context: Any) -> bool:
        from streams_ops.triggers.consumer_lag import measure_group_lag

        self._last = measure_group_lag(self.kafka_conn_id, self.group_id, self.topic)
        self.log.info("group %s lags %d on %s", self.group_id, self._last["total"], self.topic)
        return self._last["total"] <= int(self.max_lag)

    def execute(self, context: Any) -> Any:
        if not self.deferrable:
            super().execute(context)
            return self._last
        if self.poke(context):
            return self._last
        from streams_ops.triggers.consumer_lag import ConsumerLagTrigger

        self.defer(
            trigger=ConsumerLagTrigger(
                group_id=self.group_id,
                topic=self.topic,
                max_lag=int(self.max_lag),
                kafka_conn_id=self.kafka_conn_id,
                poll_interval=self.poke_interval,
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=self.timeout),
        )

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        """Resume after the trigger fired: succeed with its measurement, or fail with its message."""
        if event.get("status") != "success":
            raise AirflowException(f"consumer lag of {self.group_id} on {self.topic}: {event.get('message')}")
        self.log.info("group %s caught up on %s: lag %d", self.group_id, self.topic, event["total"])
        return event
