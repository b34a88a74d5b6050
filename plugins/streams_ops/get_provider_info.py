"""What Airflow's providers manager learns about ``streams_ops`` (entry point ``apache_airflow_provider``).

The distribution ``streams-runtime`` declares the entry point (pyproject.toml), so once the project
is installed ``airflow providers list`` shows this provider and the UI's connection form offers
its connection type. Nothing here imports Airflow or a client library: the providers manager
calls :func:`get_provider_info` in every Airflow process.

Connection types:

- ``kafka`` is the official Kafka provider's (``apache-airflow-providers-apache-kafka``): its form
  ("Config Dict" extra holding ``bootstrap.servers``) is what
  :class:`~streams_ops.hooks.kafka_admin.KafkaAdminHook` reads, so no second Kafka type is registered;
- ``streams_worker``: a stream worker's HTTP endpoint (host, port, scheme, and the
  ``application_server_token`` in the password field, masked by the UI).
"""

from __future__ import annotations

from typing import Any

PACKAGE = "streams-runtime"
INTEGRATION = "Streams runtime"


def get_provider_info() -> dict[str, Any]:
    """The provider's description, in the shape of Airflow's ``provider_info.schema.json``."""
    return {
        "package-name": PACKAGE,
        "name": "Streams runtime operations",
        "description": "Topic provisioning, changelog compaction checks, Spark backfills validated by "
        "Great Expectations, state-store rebuilds and consumer-lag sensing for streams_runtime "
        "applications.",
        "integrations": [{"integration-name": INTEGRATION, "tags": ["service"]}],
        "operators": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "streams_ops.operators.provisioning",
                    "streams_ops.operators.compaction",
                    "streams_ops.operators.spark_backfill",
                    "streams_ops.operators.state_rebuild",
                ],
            }
        ],
        "hooks": [
            {
                "integration-name": INTEGRATION,
                "python-modules": [
                    "streams_ops.hooks.kafka_admin",
                    "streams_ops.hooks.spark",
                    "streams_ops.hooks.streams_worker",
                ],
            }
        ],
        "sensors": [
            {"integration-name": INTEGRATION, "python-modules": ["streams_ops.sensors.consumer_lag"]}
        ],
        "triggers": [
            {"integration-name": INTEGRATION, "python-modules": ["streams_ops.triggers.consumer_lag"]}
        ],
        "connection-types": [
            {
                "hook-class-name": "streams_ops.hooks.streams_worker.StreamsWorkerHook",
                "hook-name": "Streams worker endpoint",
                "connection-type": "streams_worker",
                "ui-field-behaviour": {
                    "hidden-fields": ["login"],
                    "relabeling": {"schema": "Scheme (http or https)", "password": "Token"},
                    "placeholders": {
                        "host": "127.0.0.1",
                        "port": "7070",
                        "schema": "http",
                        "password": "the workers' application_server_token (masked)",
                        "extra": '{"base_url": "http://127.0.0.1:7070"}',
                    },
                },
            }
        ],
        "extra-links": ["streams_ops.links.data_docs.DataDocsLink"],
        "notifications": ["streams_ops.notifications.failure.FailureNotifier"],
        "plugins": [
            {"name": "streams_data_docs", "plugin-class": "streams_ops.plugins.data_docs.DataDocsPlugin"}
        ],
    }
