"""KafkaAdminHook: an Airflow Connection turned into Kafka clients with the project's profile.

Every client is built by ``streams_runtime.kafka.clients``, so the project's shared client profile
(no topic auto-creation, short fetch backoff, ...) applies to the clients Airflow tasks use,
exactly as to the stream workers' own. The connection type is the official Kafka provider's
``kafka`` (its UI form: a "Config Dict" extra holding ``bootstrap.servers``); its own admin hook is
not used because it builds clients without that profile and imports ``confluent_kafka`` when its
module is imported, which DAG parsing must not do.

Where the bootstrap servers come from, first match wins:
  1. the connection's extra ``bootstrap_servers`` (or the Kafka provider's ``bootstrap.servers``);
  2. the connection's ``host`` and ``port`` (``host`` may itself be a ``h1:p1,h2:p2`` list).

Other librdkafka properties can be given in the extra as ``client_config`` (a dict); they win
over the profile. Example, as an environment variable::

    AIRFLOW_CONN_STREAMS_KAFKA='{"conn_type": "kafka", "extra": {"bootstrap.servers": "127.0.0.1:9092"}}'

``confluent_kafka`` is imported only when a client is asked for, never at DAG parse time.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from airflow.sdk import BaseHook


class KafkaConnectionError(ValueError):
    """The Airflow Connection does not say where the Kafka cluster is."""


class KafkaAdminHook(BaseHook):
    """Kafka admin, consumer and producer clients for one Airflow Connection.

    :param kafka_conn_id: the Airflow Connection naming the cluster (see the module docstring).
    """

    conn_name_attr = "kafka_conn_id"
    default_conn_name = "streams_kafka"
    conn_type = "kafka"
    hook_name = "Kafka (streams_runtime client profile)"

    def __init__(self, kafka_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kafka_conn_id = kafka_conn_id

    @cached_property
    def _extra(self) -> dict[str, Any]:
        return dict(self.get_connection(self.kafka_conn_id).extra_dejson or {})

    @cached_property
    def bootstrap_servers(self) -> str:
        """The ``host:port[,host:port]`` list this connection points at."""
        extra = self._extra
        servers = extra.get("bootstrap_servers") or extra.get("bootstrap.servers")
        if not servers:
            conn = self.get_connection(self.kafka_conn_id)
            if conn.host:
                servers = conn.host if (conn.port is None or "," in conn.host) else f"{conn.host}:{conn.port}"
        if not servers:
            raise KafkaConnectionError(
                f"connection {self.kafka_conn_id!r} names no Kafka cluster: set extra "
                f"'bootstrap_servers' (e.g. 127.0.0.1:9092) or the host and port"
            )
        return str(servers)

    @property
    def client_overrides(self) -> dict[str, Any]:
        """librdkafka properties from the connection's extra ``client_config`` (they win over the profile)."""
        overrides = self._extra.get("client_config") or {}
        if not isinstance(overrides, dict):
            raise KafkaConnectionError(
                f"connection {self.kafka_conn_id!r}: extra 'client_config' must be a dict"
            )
        return dict(overrides)

    def get_admin_client(self) -> Any:
        """An ``AdminClient`` with the shared admin profile."""
        from streams_runtime.kafka.clients import create_admin

        return create_admin(self.bootstrap_servers, self.client_overrides)

    def get_consumer(self, group_id: str, overrides: dict[str, Any] | None = None) -> Any:
        """A ``Consumer`` with the low-latency consumer profile; ``overrides`` win over the connection's."""
        from streams_runtime.kafka.clients import create_consumer

        return create_consumer(
            self.bootstrap_servers, group_id, {**self.client_overrides, **(overrides or {})}, low_latency=True
        )

    def get_producer(self, overrides: dict[str, Any] | None = None) -> Any:
        """A ``Producer`` with the shared producer profile."""
        from streams_runtime.kafka.clients import create_producer

        return create_producer(self.bootstrap_servers, {**self.client_overrides, **(overrides or {})})

    def is_embedded_broker(self, admin: Any | None = None) -> bool:
        """Whether the cluster is the embedded Tansu broker (which never compacts nor expires logs).

        The connection's extra ``broker`` (``"tansu"`` or ``"kafka"``) decides when set; otherwise
        the cluster id Tansu reports (``tansu_cluster`` by default) does.
        """
        declared = str(self._extra.get("broker", "")).lower()
        if declared:
            return declared == "tansu"
        admin = admin if admin is not None else self.get_admin_client()
        cluster_id = admin.list_topics(timeout=10).cluster_id or ""
        return "tansu" in cluster_id.lower()

    def test_connection(self) -> tuple[bool, str]:
        """Used by the UI's "Test" button: one metadata round trip."""
        try:
            metadata = self.get_admin_client().list_topics(timeout=10)
        except Exception as exc:  # noqa: BLE001 - the UI shows the message
            return False, f"{self.bootstrap_servers}: {exc}"
        brokers = len(metadata.brokers)
        return True, f"{self.bootstrap_servers}: {brokers} broker(s), cluster {metadata.cluster_id}"
