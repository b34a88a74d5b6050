"""ChangelogCompactionCheckOperator: measure the superseded part of an application's changelogs.

The logic is :mod:`streams_ops.compaction`; this operator builds the clients from a Connection,
tells the check whether the broker is the embedded one (which never compacts), logs the report,
and fails the task without retries when the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from streams_ops.operators._coerce import as_bool


class ChangelogCompactionCheckOperator(BaseOperator):
    """Check every ``<application_id>-<store>-changelog`` topic; fail above ``max_superseded_ratio``.

    :param application_id: the stream application whose changelogs are checked.
    :param max_superseded_ratio: highest acceptable ``(records - distinct keys) / records``.
    :param fail_on_embedded: also fail on the ratio when the broker is Tansu (never compacts).
    :param store_key_counts: store (or changelog topic) -> key count the store reports, to compare.
    :param kafka_conn_id: the Connection of the cluster (see ``KafkaAdminHook``).
    :returns: the report as a dict (pushed to XCom).
    """

    template_fields: Sequence[str] = (
        "application_id",
        "max_superseded_ratio",
        "fail_on_embedded",
        "store_key_counts",
        "kafka_conn_id",
    )
    ui_color = "#f0ede4"

    def __init__(
        self,
        *,
        application_id: str,
        max_superseded_ratio: Any = 0.5,
        fail_on_embedded: Any = False,
        store_key_counts: Any = None,
        kafka_conn_id: str = "streams_kafka",
        timeout: float = 120.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.application_id = application_id
        self.max_superseded_ratio = max_superseded_ratio
        self.fail_on_embedded = fail_on_embedded
        self.store_key_counts = store_key_counts
        self.kafka_conn_id = kafka_conn_id
        self.timeout = timeout

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops.compaction import EOF_OVERRIDES, check_changelogs
        from streams_ops.hooks.kafka_admin import KafkaAdminHook

        hook = KafkaAdminHook(kafka_conn_id=self.kafka_conn_id)
        admin = hook.get_admin_client()
        embedded = hook.is_embedded_broker(admin)
        consumer = hook.get_consumer(f"{self.application_id}-compaction-check", EOF_OVERRIDES)
        try:
            report = check_changelogs(
                admin,
                consumer,
                self.application_id,
                threshold=float(self.max_superseded_ratio),
                embedded=embedded,
                fail_on_embedded=as_bool(self.fail_on_embedded),
                store_key_counts={k: int(v) for k, v in (self.store_key_counts or {}).items()},
                timeout=self.timeout,
            )
        finally:
            consumer.close()
        text = report.render()
        if report.failed:
            self.log.error("%s", text)
            raise AirflowFailException(text)
        self.log.info("%s", text)
        return report.as_dict()
